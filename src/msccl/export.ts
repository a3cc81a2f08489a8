/**
 * A cclab schedule as MSCCL IR (`cclab export msccl`), for msccl-executor-nccl / RCCL to run.
 *
 * One call shape is exported: the plans of every rank for n ranks and one count (plan.ts), with
 * op sum (MSCCL takes the reduction op at run time). The rules:
 *
 *  - chunks: g = the gcd of every region's offset and size, of the buffers' sizes and of the
 *    scratch; a chunk is g elements, nchunksperloop = count·(n for all-gather, reduce-scatter,
 *    all-to-all)/g. At run time the executor makes each chunk count'/count times longer, which
 *    is the same schedule with every element widened (all of cclab's collectives are element-
 *    wise over their blocks), so the file serves every count that is a multiple of the unit;
 *  - threadblocks: one per (peer, channel) a rank talks to, holding its sends to and receives
 *    from that peer on that channel in program order (sends of a step before its receives, so
 *    two ranks exchanging in one step never both wait to receive), plus one for local operations
 *    that follow no transfer; every other local operation joins the threadblock of the last
 *    operation it waits for;
 *  - dependencies: every operation the plan says an operation waits for (read-after-write,
 *    write-after-read, write-after-write, plan.ts) that lies in another threadblock becomes a
 *    depid/deps, the latest per threadblock and none already implied by an earlier step of the
 *    same threadblock; a second one goes on a nop before the step (as msccl-tools does);
 *  - a reduce with a third operand (dst <- a ⊕ src) becomes cpy dst <- a then re dst += src;
 *  - counts of MSCCL_MAX_COUNT chunks or more are split; zero-size transfers are left out;
 *  - --channels C runs C instances side by side (msccl-tools' interleaved replication): chunk j
 *    of a buffer becomes chunks j·C..j·C+C-1, instance i takes the i-th of each on channels of
 *    its own; operations over several chunks are split into one-chunk steps so that each
 *    instance's chunks stay contiguous.
 */
import { XMLBuilder } from "fast-xml-parser";
import { InvalidArgumentError } from "../core/errors.js";
import { maxOf } from "../core/extent.js";
import { compileAll } from "../schedule/check.js";
import type { Algorithm, Region } from "../schedule/dsl.js";
import type { Plan, PlanOp } from "../schedule/plan.js";
import { specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import {
  type BufName,
  LIMITS,
  type MscclGpu,
  type MscclProgram,
  type MscclStep,
  type MscclThreadblock,
  type Proto,
  type StepType,
  sizeMultiplier,
} from "./ir.js";

export interface ExportOptions {
  /** Instances side by side, each on its own channels (default 1). */
  readonly channels?: number;
  readonly proto?: Proto;
  /** The algo's name attribute (default collective_algorithm_n). */
  readonly name?: string;
}

/** One step before numbering: its dependencies name (threadblock, entry) pairs. */
type Entry = Pick<MscclStep, "type" | "srcbuf" | "srcoff" | "dstbuf" | "dstoff" | "cnt"> & {
  deps: { tb: number; entry: number }[];
};

const site = { op: "export msccl" };

export function exportMsccl(alg: Algorithm, call: CollectiveCall, options: ExportOptions = {}): MscclProgram {
  const spec = specOf(alg.collective);
  const n = call.size;
  const C = options.channels ?? 1;
  if (!spec.counted || !spec.data) {
    throw new InvalidArgumentError(
      { ...site, arg: "--collective" },
      `${spec.name} cannot be written as MSCCL IR: its sizes come at run time (alltoallv) or it moves no data (barrier), and MSCCL programs are fixed chunks`,
    );
  }
  if (n < 2) throw new InvalidArgumentError({ ...site, arg: "-n" }, "MSCCL programs need at least 2 GPUs");
  if (call.count < 1) throw new InvalidArgumentError({ ...site, arg: "--count" }, "needs a count of at least 1");
  if (!Number.isInteger(C) || C < 1 || C > LIMITS.channels) {
    throw new InvalidArgumentError({ ...site, arg: "--channels" }, `must be an integer in [1, ${LIMITS.channels}]`);
  }
  const plans = compileAll(alg, { ...call, op: { name: "sum" } });
  const mult = sizeMultiplier(spec, n);

  // The chunk: the gcd of everything the plans name.
  let g = call.count * mult;
  const take = (x: number) => {
    g = gcd(g, x);
  };
  for (const p of plans) {
    take(p.layout.inputCount);
    take(p.layout.outputCount);
    take(p.scratch);
    for (const op of p.ops) {
      for (const r of [op.region, op.src, op.with]) {
        if (!r || r.count === 0) continue;
        take(r.offset);
        take(r.count);
      }
    }
  }
  const nchunks = (call.count * mult) / g;
  const buf = (r: Region): BufName => (r.buf === "input" ? "i" : r.buf === "output" ? "o" : "s");

  // Which message each transfer is, to write the remote chunk of sends and receives as msccl-tools does.
  const remote = matchRemote(plans);
  const maxChannel = maxOf(
    plans.flatMap((p) => p.ops.map((o) => o.channel)),
    0,
  );

  const gpus: MscclGpu[] = plans.map((plan, rank) => {
    const tbKeys = new Map<string, number>();
    const tbs: { send: number; recv: number; chan: number; entries: Entry[] }[] = [];
    const tbOf = (key: string, init: () => { send: number; recv: number; chan: number }) => {
      let t = tbKeys.get(key);
      if (t === undefined) {
        t = tbs.length;
        tbKeys.set(key, t);
        tbs.push({ ...init(), entries: [] });
      }
      return t;
    };
    /** Per plan op and instance: where its last entry went. */
    const placed = new Map<number, { tb: number; entry: number }>();
    // Program order, sends of a step before its receives, receives before its local operations.
    const rank0 = (op: PlanOp) => (op.kind === "send" ? 0 : op.kind === "recv" ? 1 : 2);
    const order = plan.ops
      .map((_, i) => i)
      .sort((a, b) => {
        const x = plan.ops[a] as PlanOp;
        const y = plan.ops[b] as PlanOp;
        return x.step - y.step || rank0(x) - rank0(y) || a - b;
      });
    for (let inst = 0; inst < C; inst++) {
      const key = (i: number) => i * C + inst;
      for (const i of order) {
        const op = plan.ops[i] as PlanOp;
        if (op.region.count === 0) continue;
        const chan = op.channel + inst * (maxChannel + 1);
        let t: number;
        if (op.kind === "send" || op.kind === "recv") {
          t = tbOf(`${op.peer}:${chan}`, () => ({ send: -1, recv: -1, chan }));
          const tb = tbs[t] as (typeof tbs)[number];
          if (op.kind === "send") tb.send = op.peer;
          else tb.recv = op.peer;
        } else if (op.kind === "scale") {
          throw new InvalidArgumentError(site, "a scaling step cannot be written as MSCCL IR (MSCCL has no avg)");
        } else {
          // A local operation joins the threadblock of the last operation it waits for.
          const last = maxOf(
            op.deps.filter((d) => placed.has(key(d))),
            -1,
          );
          t =
            last >= 0
              ? (placed.get(key(last)) as { tb: number }).tb
              : tbOf(`local:${inst}`, () => ({ send: -1, recv: -1, chan: inst * (maxChannel + 1) }));
        }
        const tb = tbs[t] as (typeof tbs)[number];
        const deps = op.deps
          .map((d) => placed.get(key(d)))
          .filter((d): d is { tb: number; entry: number } => d !== undefined && d.tb !== t);
        const pieces = translate(op, remote.get(`${rank} ${i}`), buf, g, C, inst);
        pieces.forEach((p, k) => {
          tb.entries.push({ ...p, deps: k === 0 ? deps : [] });
        });
        placed.set(key(i), { tb: t, entry: tb.entries.length - 1 });
      }
    }
    return numbered(rank, tbs, plan, g, C);
  });
  const name = options.name ?? `${spec.name}_${alg.name}_${n}`;
  return {
    name,
    coll: spec.name,
    ngpus: n,
    nchunksperloop: nchunks * C,
    nchannels: maxOf(
      gpus.flatMap((gpu) => gpu.tbs.map((t) => t.chan + 1)),
      1,
    ),
    proto: options.proto ?? "Simple",
    inplace: call.inPlace,
    outofplace: !call.inPlace,
    minBytes: 0,
    maxBytes: 0,
    ...(spec.rooted ? { root: call.root } : {}),
    gpus,
  };
}

/** An operation as MSCCL steps (before instances are interleaved, chunks are of g elements). */
function translate(
  op: PlanOp,
  other: Region | undefined,
  buf: (r: Region) => BufName,
  g: number,
  C: number,
  inst: number,
): Omit<Entry, "deps">[] {
  const ch = (r: Region) => ({ buf: buf(r), off: r.offset / g, cnt: r.count / g });
  const out: Omit<Entry, "deps">[] = [];
  const push = (type: StepType, src: ReturnType<typeof ch> | undefined, dst: ReturnType<typeof ch> | undefined) => {
    const cnt = (src ?? dst)?.cnt ?? 0;
    // Instances interleave chunk by chunk; the executor's counts stay below MSCCL_MAX_COUNT.
    const step = C > 1 ? 1 : LIMITS.count - 1;
    for (let k = 0; k < cnt; k += step) {
      const m = Math.min(step, cnt - k);
      const at = (x: number) => (C > 1 ? (x + k) * C + inst : x + k);
      out.push({
        type,
        srcbuf: src?.buf ?? "i",
        srcoff: src ? at(src.off) : -1,
        dstbuf: dst?.buf ?? "o",
        dstoff: dst ? at(dst.off) : -1,
        cnt: m,
      });
    }
  };
  const dst = ch(op.region);
  if (op.kind === "send") push("s", dst, other ? ch(other) : undefined);
  else if (op.kind === "recv") push("r", other ? ch(other) : undefined, dst);
  else if (op.kind === "copy") push("cpy", ch(op.src as Region), dst);
  else {
    const src = ch(op.src as Region);
    const w = op.with ? ch(op.with) : undefined;
    if (!w || (w.buf === dst.buf && w.off === dst.off)) push("re", src, dst);
    else if (src.buf === dst.buf && src.off === dst.off) push("re", w, dst);
    else if (src.buf === dst.buf && src.off < dst.off + dst.cnt && dst.off < src.off + src.cnt) {
      throw new InvalidArgumentError(
        site,
        `reduce into ${dst.buf}[${dst.off}] overlaps its source: no MSCCL step does that`,
      );
    } else {
      push("cpy", w, dst);
      push("re", src, dst);
    }
  }
  return out;
}

/** Threadblocks with their steps numbered, nops inserted for second dependencies, hasdep set. */
function numbered(
  rank: number,
  tbs: readonly { send: number; recv: number; chan: number; entries: Entry[] }[],
  plan: Plan,
  g: number,
  C: number,
): MscclGpu {
  // Order threadblocks as msccl-tools does (by send peer, receive peer, channel): ids follow.
  const sorted = tbs
    .map((t, i) => ({ t, i }))
    .sort((a, b) => a.t.send - b.t.send || a.t.recv - b.t.recv || a.t.chan - b.t.chan);
  const id = new Map(sorted.map(({ i }, k) => [i, k]));
  // Each entry's step number once nops are in, and which entries others wait for.
  const pos: number[][] = tbs.map(() => []);
  const keep: { tb: number; entry: number }[][][] = tbs.map(() => []);
  tbs.forEach((t, ti) => {
    let s = 0;
    /** Per other threadblock, the latest entry an earlier step already waits for. */
    const seen = new Map<number, number>();
    t.entries.forEach((e, k) => {
      const latest = new Map<number, number>();
      for (const d of e.deps) latest.set(d.tb, Math.max(latest.get(d.tb) ?? -1, d.entry));
      const need = [...latest]
        .filter(([tb, entry]) => (seen.get(tb) ?? -1) < entry)
        .map(([tb, entry]) => ({ tb, entry }));
      for (const d of need) seen.set(d.tb, d.entry);
      keep[ti]?.push(need);
      s += Math.max(0, need.length - 1);
      (pos[ti] as number[])[k] = s++;
    });
  });
  const hasdep = tbs.map((t) => new Array<boolean>(t.entries.length).fill(false));
  keep.forEach((es) => {
    for (const need of es) for (const d of need) (hasdep[d.tb] as boolean[])[d.entry] = true;
  });
  const out: MscclThreadblock[] = sorted.map(({ t, i }) => {
    const steps: MscclStep[] = [];
    t.entries.forEach((e, k) => {
      const need = keep[i]?.[k] ?? [];
      const dep = (d: { tb: number; entry: number }) => ({
        depid: id.get(d.tb) as number,
        deps: pos[d.tb]?.[d.entry] as number,
      });
      for (const d of need.slice(1)) {
        steps.push({
          s: steps.length,
          type: "nop",
          srcbuf: "i",
          srcoff: -1,
          dstbuf: "o",
          dstoff: -1,
          cnt: 0,
          ...dep(d),
          hasdep: false,
        });
      }
      const first = need[0];
      steps.push({
        s: steps.length,
        type: e.type,
        srcbuf: e.srcbuf,
        srcoff: e.srcoff,
        dstbuf: e.dstbuf,
        dstoff: e.dstoff,
        cnt: e.cnt,
        ...(first ? dep(first) : { depid: -1, deps: -1 }),
        hasdep: hasdep[i]?.[k] ?? false,
      });
    });
    return { id: id.get(i) as number, send: t.send, recv: t.recv, chan: t.chan, steps };
  });
  return {
    id: rank,
    iChunks: (plan.layout.inputCount / g) * C,
    oChunks: (plan.layout.outputCount / g) * C,
    sChunks: (plan.scratch / g) * C,
    tbs: out,
  };
}

/** For each transfer (key 'rank opIndex'), the region its partner names (msccl-tools writes it; executors ignore it). */
function matchRemote(plans: readonly Plan[]): Map<string, Region> {
  const queues = new Map<string, { rank: number; i: number; region: Region }[]>();
  const out = new Map<string, Region>();
  plans.forEach((p, rank) => {
    p.ops.forEach((op, i) => {
      if (op.kind !== "send" && op.kind !== "recv") return;
      const k = op.kind === "send" ? `${rank}>${op.peer}@${op.channel}` : `${op.peer}>${rank}@${op.channel}`;
      const mine = `${op.kind} ${k}`;
      const theirs = `${op.kind === "send" ? "recv" : "send"} ${k}`;
      const q = queues.get(theirs);
      if (q && q.length > 0) {
        const o = q.shift() as { rank: number; i: number; region: Region };
        out.set(`${rank} ${i}`, o.region);
        out.set(`${o.rank} ${o.i}`, op.region);
      } else {
        let l = queues.get(mine);
        if (!l) queues.set(mine, (l = []));
        l.push({ rank, i, region: op.region });
      }
    });
  });
  return out;
}

/** The program as XML, in the executor's format (every attribute written out). */
export function toXml(p: MscclProgram): string {
  const step = (s: MscclStep) => ({
    "@_s": s.s,
    "@_type": s.type,
    "@_srcbuf": s.srcbuf,
    "@_srcoff": s.srcoff,
    "@_dstbuf": s.dstbuf,
    "@_dstoff": s.dstoff,
    "@_cnt": s.cnt,
    "@_depid": s.depid,
    "@_deps": s.deps,
    "@_hasdep": s.hasdep ? 1 : 0,
  });
  const doc = {
    algo: {
      "@_name": p.name,
      "@_proto": p.proto,
      "@_nchannels": p.nchannels,
      "@_nchunksperloop": p.nchunksperloop,
      "@_ngpus": p.ngpus,
      "@_coll": p.coll,
      "@_inplace": p.inplace ? 1 : 0,
      "@_outofplace": p.outofplace ? 1 : 0,
      "@_minBytes": p.minBytes,
      "@_maxBytes": p.maxBytes,
      ...(p.root !== undefined ? { "@_root": p.root } : {}),
      gpu: p.gpus.map((g) => ({
        "@_id": g.id,
        "@_i_chunks": g.iChunks,
        "@_o_chunks": g.oChunks,
        "@_s_chunks": g.sChunks,
        tb: g.tbs.map((t) => ({
          "@_id": t.id,
          "@_send": t.send,
          "@_recv": t.recv,
          "@_chan": t.chan,
          step: t.steps.map(step),
        })),
      })),
    },
  };
  const b = new XMLBuilder({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    format: true,
    indentBy: "  ",
    suppressEmptyNode: true,
  });
  return b.build(doc) as string;
}

/** The most steps any threadblock of the program has (what MSCCL_MAX_NUM_STEPS must allow). */
export const longestThreadblock = (p: MscclProgram): number =>
  maxOf(
    p.gpus.flatMap((g) => g.tbs.map((t) => t.steps.length)),
    0,
  );

/**
 * Where a program breaks the executor's limits (steps per threadblock, threadblocks per channel),
 * one line each. `maxSteps` is the executor's MSCCL_MAX_NUM_STEPS (msccl-executor-nccl's 64 unless
 * said otherwise).
 */
export function overLimits(p: MscclProgram, maxSteps: number = LIMITS.steps): string[] {
  const out: string[] = [];
  for (const g of p.gpus) {
    for (const t of g.tbs) {
      if (t.steps.length > maxSteps) {
        out.push(
          `gpu ${g.id} tb ${t.id} has ${t.steps.length} steps; ${maxSteps === LIMITS.steps ? "msccl-executor-nccl" : "the executor"} allows ${maxSteps} (MSCCL_MAX_NUM_STEPS)`,
        );
      }
    }
    const perChannel = new Map<number, number>();
    for (const t of g.tbs) perChannel.set(t.chan, (perChannel.get(t.chan) ?? 0) + 1);
    for (const [c, k] of perChannel) {
      if (k > LIMITS.tbsPerChannel)
        out.push(`gpu ${g.id} has ${k} threadblocks on channel ${c}; the executor allows ${LIMITS.tbsPerChannel}`);
    }
  }
  return out;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
