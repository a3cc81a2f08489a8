/**
 * An MSCCL program (ir.ts) as a cclab Algorithm, so that it is proved, explained, traced,
 * modelled and benched like any other (`cclab import msccl algo.xml`, `--algorithm-file algo.xml`).
 *
 * MSCCL runs a GPU's threadblocks concurrently: each runs its steps in order, a step with
 * depid/deps first waits for a step of another threadblock, and messages between two GPUs on a
 * channel pair in order. cclab's schedule is one program order per rank whose dataflow the plan
 * derives from memory (plan.ts). The bridge:
 *
 *  - every step becomes actions: its receive, its local copy or reduction, its send (a fused
 *    rcs/rrs/rrcs receives, reduces into a per-threadblock buffer or its destination, then sends);
 *  - actions are ordered by MSCCL's own rules: a threadblock's order, dependencies, and each
 *    message's send and receive. Sends are buffered (the executor's connections hold data until
 *    the receiver takes it), so a send does not hold up what follows it in its threadblock; a
 *    receive, a local operation and a dependency do. Each message is given a round with its send
 *    and receive in the same round, each action the earliest round these rules allow (a longest
 *    path over the constraint graph). Where no such rounds exist the rules contain a cycle: the
 *    program deadlocks, and the error names the steps of the cycle;
 *  - rank r's schedule is then its rounds in order, each one cclab step: the round's transfers
 *    posted together, then its local operations. Every MSCCL dependency and threadblock order is
 *    kept by this program order; the plan's memory-derived dependencies then keep the data flow,
 *    and the checker proves the result (in both of its orders);
 *  - MSCCL orders two threadblocks' accesses to the same memory only through dependencies
 *    (directly or through a chain of steps and messages). Where two threadblocks touch a chunk,
 *    one writing, with no such chain between them, the program races on the GPU and is
 *    rejected, naming both steps: only then is the one order cclab runs the result of every run.
 *
 * Chunks: a call of count elements splits the executor's buffer of count·(n for all-gather,
 * reduce-scatter and all-to-all, else 1) elements into nchunksperloop chunks, so the program is
 * defined for n = ngpus and counts that make whole chunks (Algorithm.domain).
 */
import { AlgorithmFileError } from "../core/errors.js";
import {
  type Algorithm,
  copy,
  defineAlgorithm,
  f,
  type LocalOp,
  type Memory,
  type Region,
  recv,
  reduce,
  type Schedule,
  type Step,
  send,
  step,
  sub,
} from "../schedule/dsl.js";
import { findSpec, makeCall, rankCall } from "../specs/index.js";
import type { CollectiveSpec, Layout, RankCall } from "../specs/types.js";
import { at, KINDS, type MscclProgram, SIZE_MULTIPLIED, type StepType } from "./ir.js";
import { parseMscclXml } from "./parse.js";

/** A chunk range of a buffer: i, o, s, or t (the threadblock's receive buffer). */
interface Ref {
  readonly buf: "i" | "o" | "s" | "t";
  readonly off: number;
  readonly cnt: number;
}

type ActionKind = "send" | "recv" | "copy" | "reduce";

interface Action {
  readonly gpu: number;
  readonly tb: number;
  readonly step: number;
  readonly type: StepType;
  readonly kind: ActionKind;
  /** Transfers. */
  readonly peer: number;
  readonly channel: number;
  /** send: read; recv: written; copy/reduce: the destination. */
  readonly ref: Ref;
  readonly src?: Ref;
  /** reduce: dst <- with ⊕ src, where with is not dst. */
  readonly with?: Ref;
  /** A send whose source a receive of its round overwrites: it sends a copy taken just before the round. */
  stage?: Ref;
  /** Position in its threadblock's actions. */
  readonly pos: number;
  /** Its threadblock, numbered over all GPUs. */
  readonly tbg: number;
  node: number;
}

const isTransfer = (a: Action) => a.kind === "send" || a.kind === "recv";

/** One round of one GPU, in chunk units. */
interface Round {
  readonly label: string;
  readonly transfers: readonly Action[];
  readonly locals: readonly Action[];
  /** Sends that go out of a copy (Action.stage), taken in a step of their own just before the round. */
  readonly staged: readonly Action[];
}

export interface Imported {
  readonly algorithm: Algorithm;
  readonly program: MscclProgram;
  /** Conventions applied, limits of some executors exceeded, producer/executor differences seen. */
  readonly notes: readonly string[];
  /** Rounds (cclab steps with transfers), the most any GPU takes, and chunks sent, the most any GPU sends. */
  readonly rounds: number;
  readonly chunksSent: number;
  readonly threadblocks: number;
}

export interface ImportOptions {
  /** Shown in messages; also the default name. */
  readonly file?: string;
  /** The algorithm's name (default: the file's base name, else the program's name). */
  readonly name?: string;
}

/** Reads MSCCL XML into a cclab Algorithm; structural errors throw AlgorithmFileError naming gpu, tb and step. */
export function importMsccl(text: string, options: ImportOptions = {}): Imported {
  const file = options.file ?? "<xml>";
  const { program, notes } = parseMscclXml(text, file);
  return fromProgram(program, notes, options);
}

export function fromProgram(
  program: MscclProgram,
  parseNotes: readonly string[],
  options: ImportOptions = {},
): Imported {
  const file = options.file ?? "<xml>";
  const fail = (where: string, what: string): never => {
    throw new AlgorithmFileError(`${file}: ${where}: ${what}`);
  };
  const notes = [...parseNotes];
  const spec = collectiveOf(program, file, notes);
  const n = program.ngpus;
  const nchunks = program.nchunksperloop;
  const mult = SIZE_MULTIPLIED.has(spec.name) ? n : 1;
  const unit = nchunks / gcd(nchunks, mult);
  const root = spec.rooted ? (program.root ?? 0) : 0;
  if (spec.rooted && program.root === undefined) {
    notes.push(`${spec.name} with no root attribute (the executor takes the root at run time): read as root 0`);
  }
  if (n === 1) fail("<algo>", 'ngpus="1": one GPU needs no program');

  // The collective's buffers in chunks, per GPU (at count = one unit: e elements per chunk).
  const e = (unit * mult) / nchunks;
  const layouts: Layout[] = [];
  const chunksOf = (elements: number, what: string, gpu: number) => {
    if (elements % e !== 0) {
      fail(at(gpu), `${spec.name}'s ${what} is not whole chunks at nchunksperloop="${nchunks}" on ${n} GPUs`);
    }
    return elements / e;
  };
  const call = makeCall({ collective: spec.name, size: n, count: unit, root });
  const alias: ({ mem: 0 | 1; off: number; of: "i" | "o" } | undefined)[] = [];
  for (const g of program.gpus) {
    const l = spec.layout(rankCall(call, g.id));
    layouts.push(l);
    const inChunks = chunksOf(l.inputCount, "input", g.id);
    const outChunks = chunksOf(l.outputCount, "output", g.id);
    if (g.iChunks > inChunks) {
      fail(
        at(g.id),
        `i_chunks="${g.iChunks}" but ${spec.name}'s input holds ${inChunks} chunks here (nchunksperloop="${nchunks}")`,
      );
    }
    if (g.oChunks > outChunks) {
      fail(
        at(g.id),
        `o_chunks="${g.oChunks}" but ${spec.name}'s output holds ${outChunks} chunks here (nchunksperloop="${nchunks}")`,
      );
    }
    const a = l.alias;
    alias.push(
      !a
        ? undefined
        : a.kind === "output-in-input"
          ? { mem: 0, off: chunksOf(a.offset, "in-place offset", g.id), of: "o" }
          : { mem: 1, off: a.kind === "same" ? 0 : chunksOf(a.offset, "in-place offset", g.id), of: "i" },
    );
  }

  // ---- actions, per threadblock ----
  const actions: Action[] = [];
  const tbActions: number[][][] = [];
  /** Per GPU, tb, step: its first and last action (-1 for a nop). */
  const firstOf: number[][][] = [];
  const lastOf: number[][][] = [];
  /** Per GPU and tb: the receive buffer's size in chunks. */
  const tmpSize: number[][] = [];
  let tbg = 0;
  for (const g of program.gpus) {
    tbActions.push([]);
    firstOf.push([]);
    lastOf.push([]);
    tmpSize.push([]);
    for (const t of g.tbs) {
      const list: number[] = [];
      const firsts: number[] = [];
      const lasts: number[] = [];
      /** Each receive-reduce step's own part of the threadblock's receive buffer. */
      let tmp = 0;
      const add = (a: Omit<Action, "gpu" | "tb" | "pos" | "tbg" | "node" | "peer" | "channel"> & Partial<Action>) => {
        list.push(actions.length);
        actions.push({ peer: -1, channel: t.chan, ...a, gpu: g.id, tb: t.id, pos: list.length - 1, tbg, node: -1 });
      };
      for (const s of t.steps) {
        const start = list.length;
        const kind = KINDS[s.type];
        const src: Ref = { buf: s.srcbuf, off: s.srcoff, cnt: s.cnt };
        const dst: Ref = { buf: s.dstbuf, off: s.dstoff, cnt: s.cnt };
        const tb: Ref = { buf: "t", off: tmp, cnt: s.cnt };
        const base = { step: s.s, type: s.type };
        if (kind.reduce && kind.recv) tmp += s.cnt;
        switch (s.type) {
          case "s":
            add({ ...base, kind: "send", peer: t.send, ref: src });
            break;
          case "r":
            add({ ...base, kind: "recv", peer: t.recv, ref: dst });
            break;
          case "rcs":
            add({ ...base, kind: "recv", peer: t.recv, ref: dst });
            add({ ...base, kind: "send", peer: t.send, ref: dst });
            break;
          case "rrs":
            add({ ...base, kind: "recv", peer: t.recv, ref: tb });
            add({ ...base, kind: "reduce", ref: tb, src });
            add({ ...base, kind: "send", peer: t.send, ref: tb });
            break;
          case "rrc":
          case "rrcs":
            add({ ...base, kind: "recv", peer: t.recv, ref: tb });
            add({ ...base, kind: "reduce", ref: dst, src: tb, ...(sameRef(src, dst) ? {} : { with: src }) });
            if (s.type === "rrcs") add({ ...base, kind: "send", peer: t.send, ref: dst });
            break;
          case "cpy":
            add({ ...base, kind: "copy", ref: dst, src });
            break;
          case "re":
            add({ ...base, kind: "reduce", ref: dst, src });
            break;
          case "nop":
            break;
        }
        firsts.push(list.length > start ? (list[start] as number) : -1);
        lasts.push(list.length > start ? (list[list.length - 1] as number) : -1);
      }
      tbActions[g.id]?.push(list);
      firstOf[g.id]?.push(firsts);
      lastOf[g.id]?.push(lasts);
      tmpSize[g.id]?.push(tmp);
      tbg++;
    }
  }
  const describe = (a: Action): string => {
    const w = at(a.gpu, a.tb, a.step, a.type);
    if (a.kind === "send") return `${w} sends ${a.ref.cnt} chunk(s) to gpu ${a.peer} on channel ${a.channel}`;
    if (a.kind === "recv") return `${w} receives ${a.ref.cnt} chunk(s) from gpu ${a.peer} on channel ${a.channel}`;
    return `${w} ${a.kind === "copy" ? "copies into" : "reduces into"} ${refText(a.ref)}`;
  };

  // ---- messages: per (sender, receiver, channel), the sender's sends pair with the receiver's receives in order ----
  const tbFor = (gpu: number, dir: "send" | "recv", peer: number, chan: number): number | undefined => {
    const found = (program.gpus[gpu]?.tbs ?? []).filter((t) => t[dir] === peer && t.chan === chan);
    if (found.length > 1) {
      fail(
        at(gpu),
        `threadblocks ${found.map((t) => t.id).join(" and ")} both ${dir === "send" ? "send to" : "receive from"} gpu ${peer} on channel ${chan}: the executor gives each peer and channel one connection`,
      );
    }
    return found[0]?.id;
  };
  let messages = 0;
  const sendOf: number[] = [];
  const recvOf: number[] = [];
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) {
      if (a === b) continue;
      for (let c = 0; c < program.nchannels; c++) {
        const st = tbFor(a, "send", b, c);
        const rt = tbFor(b, "recv", a, c);
        const sends = st === undefined ? [] : (tbActions[a]?.[st] ?? []).filter((i) => actions[i]?.kind === "send");
        const recvs = rt === undefined ? [] : (tbActions[b]?.[rt] ?? []).filter((i) => actions[i]?.kind === "recv");
        const k = Math.min(sends.length, recvs.length);
        for (let j = 0; j < k; j++) {
          const s = actions[sends[j] as number] as Action;
          const r = actions[recvs[j] as number] as Action;
          if (s.ref.cnt !== r.ref.cnt) {
            fail(
              at(s.gpu, s.tb, s.step, s.type),
              `sends ${s.ref.cnt} chunk(s) to gpu ${b} on channel ${c}, but the receive it pairs with (its ${nth(j)} to that GPU on that channel), ${at(r.gpu, r.tb, r.step, r.type)}, takes ${r.ref.cnt}`,
            );
          }
          s.node = messages;
          r.node = messages;
          sendOf.push(sends[j] as number);
          recvOf.push(recvs[j] as number);
          messages++;
        }
        // A send or receive left over: name it, and the threadblock that should have matched it.
        const extra = sends.length > k ? sends[k] : recvs[k];
        if (extra !== undefined) {
          const x = actions[extra] as Action;
          const [verb, other, otherTb] = x.kind === "send" ? ["sends to", b, rt] : ["receives from", a, st];
          const [them, mirror] = x.kind === "send" ? ["receives from", "receive"] : ["sends to", "send"];
          fail(
            at(x.gpu, x.tb, x.step, x.type),
            otherTb === undefined
              ? `${verb} gpu ${other} on channel ${c}, but no threadblock of gpu ${other} ${them} gpu ${x.gpu} on channel ${c}`
              : `${verb} gpu ${other} on channel ${c} (its ${nth(k)} message there), but ${at(other, otherTb)}, which ${them} gpu ${x.gpu} on channel ${c}, has only ${k} ${mirror}(s): no ${mirror} matches it`,
          );
        }
      }
    }
  }
  let nodes = messages;
  for (const a of actions) if (!isTransfer(a)) a.node = nodes++;

  // ---- the constraint graph: threadblock order, dependencies, messages (merged into one node) ----
  const place = placer(alias, program.inplace);
  /** Per GPU and tb: where the next staged send's copy goes in the threadblock's buffer. */
  const stageAt = tmpSize.map((x) => [...x]);
  const edges: { from: number[]; to: number[]; w: number[] } = { from: [], to: [], w: [] };
  const edge = (x: Action, y: Action, w: number, _why: "tb" | "waw" | "dep") => {
    edges.from.push(x.node);
    edges.to.push(y.node);
    edges.w.push(w);
  };
  /** Happens-before predecessors of each action besides its threadblock's previous one (dependencies, a receive's send). */
  const hbPreds: number[][] = actions.map(() => []);
  for (const g of program.gpus) {
    for (const t of g.tbs) {
      const list = tbActions[g.id]?.[t.id] ?? [];
      let run: Action[] = [];
      for (let p = 1; p < list.length; p++) {
        const x = actions[list[p - 1] as number] as Action;
        const y = actions[list[p] as number] as Action;
        // A send is buffered, so what follows it may share its round; so may a receive after a
        // receive. A send after a receive, and any transfer after a local operation, may not:
        // the threadblock waits for the receive, and a round's local operations come last.
        const w = !isTransfer(y) ? 0 : x.kind === "send" || (x.kind === "recv" && y.kind === "recv") ? 0 : 1;
        edge(x, y, w, "tb");
        run = isTransfer(x) && isTransfer(y) && w === 0 ? [...run, x] : [];
        // A receive sharing a round with earlier transfers must not write what they read or
        // write: an earlier send then sends a copy taken before the round (what the executor's
        // connection buffer holds once the send is done); an earlier receive keeps its own round.
        if (y.kind === "recv") {
          const py = place(g.id, t.id, y.ref);
          for (const s of run) {
            if (!overlaps(place(g.id, t.id, s.ref), py)) continue;
            if (s.kind === "recv") edge(s, y, 1, "waw");
            else if (!s.stage) {
              s.stage = { buf: "t", off: stageAt[g.id]?.[t.id] ?? 0, cnt: s.ref.cnt };
              (stageAt[g.id] as number[])[t.id] = s.stage.off + s.ref.cnt;
            }
          }
        }
      }
      // Dependencies: nops hand theirs to the next step, as the executor chains them.
      let pending: { from: number; s: number; type: StepType }[] = [];
      for (const s of t.steps) {
        const here = at(g.id, t.id, s.s, s.type);
        if (s.depid >= 0) {
          const dt = g.tbs[s.depid];
          if (!dt) fail(here, `depends on tb ${s.depid} step ${s.deps}, but gpu ${g.id} has no threadblock ${s.depid}`);
          const depTb = dt as (typeof g.tbs)[number];
          if (s.deps >= depTb.steps.length) {
            fail(
              here,
              `depends on tb ${s.depid} step ${s.deps}, but tb ${s.depid} has only ${depTb.steps.length} steps`,
            );
          }
          // The executor waits until that threadblock's flag reaches the step; only steps with hasdep="1" set it.
          const j = depTb.steps.findIndex((x, i) => i >= s.deps && x.hasdep && x.type !== "nop");
          if (j < 0) {
            fail(
              here,
              `depends on tb ${s.depid} step ${s.deps}, but no step of tb ${s.depid} from ${s.deps} on has hasdep="1": the executor waits for that threadblock's flag, which is never set, so it would wait forever`,
            );
          }
          if (s.depid === t.id) {
            if (j >= s.s)
              fail(here, `depends on its own threadblock's step ${j}, which comes after it: it would wait forever`);
          } else pending.push({ from: lastOf[g.id]?.[s.depid]?.[j] as number, s: s.s, type: s.type });
        }
        if (s.type === "nop") continue;
        if (pending.length > 0 && s.depid < 0) {
          fail(
            here,
            "follows nop steps that carry dependencies but has none of its own: the executor rejects such a chain",
          );
        }
        const first = firstOf[g.id]?.[t.id]?.[s.s] as number;
        const y = actions[first] as Action;
        for (const d of pending) {
          const x = actions[d.from] as Action;
          edge(x, y, isTransfer(y) ? 1 : 0, "dep");
          hbPreds[first]?.push(d.from);
        }
        pending = [];
      }
      if (pending.length > 0) {
        notes.push(`${at(g.id, t.id)} ends with nop steps whose dependencies no step uses (the executor ignores them)`);
      }
    }
  }
  for (const [m, s] of sendOf.entries()) hbPreds[recvOf[m] as number]?.push(s);

  // ---- rounds: strongly connected components, then the longest path ----
  const adj: number[][] = Array.from({ length: nodes }, () => []);
  for (const [i, x] of edges.from.entries()) adj[x]?.push(i);
  const comp = tarjan(nodes, adj, edges.to);
  let ncomp = 0;
  for (const c of comp) ncomp = Math.max(ncomp, c + 1);
  const members: number[][] = Array.from({ length: ncomp }, () => []);
  for (const [v, c] of comp.entries()) members[c]?.push(v);
  const actionsOf: number[][] = Array.from({ length: nodes }, () => []);
  for (const [i, a] of actions.entries()) actionsOf[a.node]?.push(i);
  for (let i = 0; i < edges.from.length; i++) {
    const x = edges.from[i] as number;
    const y = edges.to[i] as number;
    const c = comp[x] as number;
    if (c !== comp[y]) continue;
    const cyc = members[c] as number[];
    if ((edges.w[i] as number) > 0 || cyc.some((v) => v >= messages) || x === y) {
      const steps = cyclePath(x, y, comp, adj, edges.to)
        .flatMap((v) => actionsOf[v] as number[])
        .map((k) => describe(actions[k] as Action));
      fail(
        at(actions[actionsOf[x]?.[0] as number]?.gpu ?? 0),
        `deadlock: these steps wait for each other in a cycle (a step after a receive waits for it; sends are buffered): ${steps.slice(0, 8).join("; ")}${steps.length > 8 ? "; ..." : ""}`,
      );
    }
  }
  // Tarjan numbers components in reverse topological order.
  const round = new Int32Array(ncomp);
  for (let c = ncomp - 1; c >= 0; c--) {
    for (const v of members[c] as number[]) {
      for (const i of adj[v] as number[]) {
        const d = comp[edges.to[i] as number] as number;
        if (d !== c) round[d] = Math.max(round[d] as number, (round[c] as number) + (edges.w[i] as number));
      }
    }
  }
  const roundOf = (a: Action) => round[comp[a.node] as number] as number;
  const topo = (a: Action) => ncomp - 1 - (comp[a.node] as number);

  // ---- races: two threadblocks' accesses to a chunk, one a write, with no chain of steps between them ----
  const order = actions
    .map((_, i) => i)
    .sort((x, y) => {
      const a = actions[x] as Action;
      const b = actions[y] as Action;
      return (
        roundOf(a) - roundOf(b) ||
        topo(a) - topo(b) ||
        Number(a.kind === "recv") - Number(b.kind === "recv") ||
        a.gpu - b.gpu ||
        a.tb - b.tb ||
        a.pos - b.pos
      );
    });
  checkRaces(program, actions, tbActions, hbPreds, order, tbg, place, file);

  // ---- each GPU's rounds ----
  const rounds: Round[][] = program.gpus.map(() => []);
  const byRound: Map<number, { t: Action[]; l: Action[] }>[] = program.gpus.map(() => new Map());
  for (const i of order) {
    const a = actions[i] as Action;
    const m = byRound[a.gpu] as Map<number, { t: Action[]; l: Action[] }>;
    const k = roundOf(a);
    let r = m.get(k);
    if (!r) m.set(k, (r = { t: [], l: [] }));
    (isTransfer(a) ? r.t : r.l).push(a);
  }
  byRound.forEach((m, gpu) => {
    for (const k of [...m.keys()].sort((x, y) => x - y)) {
      const r = m.get(k) as { t: Action[]; l: Action[] };
      r.t.sort(
        (x, y) => x.peer - y.peer || x.channel - y.channel || Number(x.kind === "recv") - Number(y.kind === "recv"),
      );
      const names = [...new Set([...r.t, ...r.l].map((a) => `tb${a.tb}.${a.step} ${a.type}`))];
      const label = `${names.slice(0, 6).join(", ")}${names.length > 6 ? `, +${names.length - 6}` : ""}`;
      rounds[gpu]?.push({ label, transfers: r.t, locals: r.l, staged: r.t.filter((a) => a.stage) });
    }
  });
  for (const a of actions) {
    if (a.kind === "copy" && a.src && sameRef(a.ref, a.src)) {
      notes.push(`${at(a.gpu, a.tb, a.step, a.type)} copies a chunk onto itself: nothing to do`);
    }
  }

  const perGpu = rounds.map((rs, gpu) => ({
    rounds: rs.filter((r) => r.transfers.length > 0).length,
    sent: actions.filter((a) => a.gpu === gpu && a.kind === "send").reduce((s, a) => s + a.ref.cnt, 0),
  }));
  const maxRounds = Math.max(0, ...perGpu.map((p) => p.rounds));
  const maxSent = Math.max(0, ...perGpu.map((p) => p.sent));
  const name = options.name ?? (baseName(options.file) || program.name || "msccl");
  const why = `an MSCCL program for ${n} GPUs, ${nchunks} chunks per loop${spec.rooted ? `, root ${root}` : ""}`;
  const algorithm = defineAlgorithm({
    collective: spec.name,
    name,
    summary: `MSCCL program${program.name ? ` '${program.name}'` : ""}: ${n} GPUs, ${tbg} threadblocks on ${program.nchannels} channel(s), ${program.proto}, ${[program.inplace ? "in place" : "", program.outofplace ? "out of place" : ""].filter(Boolean).join(" and ")}`,
    limits: `${why}: n = ${n} only, counts multiples of ${unit}${spec.rooted ? `, root ${root} only` : ""}`,
    source: `MSCCL XML ${file}`,
    cost: {
      steps: f(`${maxRounds}`, (k) => (k === n ? maxRounds : Number.NaN)),
      sent: f(`${maxSent}·count${mult > 1 ? "·n" : ""}/${nchunks}`, (k, count) =>
        k === n ? (maxSent * count * mult) / nchunks : Number.NaN,
      ),
    },
    domain: { sizes: [n], countMultiple: unit, ...(spec.rooted ? { roots: [root] } : {}), why },
    schedule: (c, mem) => scheduleOf(program, spec, c, mem, rounds[c.rank] ?? [], stageAt[c.rank] ?? [], mult),
    file: options.file,
  });
  return { algorithm, program, notes, rounds: maxRounds, chunksSent: maxSent, threadblocks: tbg };
}

/** The collective a program names: cclab's spec, where it has the executor's sizes. */
function collectiveOf(p: MscclProgram, file: string, notes: string[]): CollectiveSpec {
  const spec = findSpec(p.coll);
  if (!spec) {
    throw new AlgorithmFileError(
      `${file}: <algo>: coll="${p.coll}" is not a collective cclab knows (msccl-tools writes "custom" for its own collectives, which have no definition to check against)`,
    );
  }
  if (!spec.counted || !spec.data) {
    throw new AlgorithmFileError(
      `${file}: <algo>: coll="${p.coll}": MSCCL programs are written in fixed chunks; ${spec.name}'s sizes come from elsewhere`,
    );
  }
  if (p.coll !== spec.name) {
    notes.push(`coll="${p.coll}" read as ${spec.name} (msccl-executor-nccl accepts only coll="${spec.name}")`);
  }
  return spec;
}

/** Where a chunk range lives, in the memory the analysis uses: in place, input and output alias as the collective says. */
type Placer = (gpu: number, tb: number, r: Ref) => { mem: number; from: number; to: number };

function placer(alias: readonly ({ mem: 0 | 1; off: number; of: "i" | "o" } | undefined)[], inPlace: boolean): Placer {
  return (gpu, tb, r) => {
    if (r.buf === "t") return { mem: 3 + tb, from: r.off, to: r.off + r.cnt };
    if (r.buf === "s") return { mem: 2, from: r.off, to: r.off + r.cnt };
    const a = inPlace ? alias[gpu] : undefined;
    if (a && a.of === r.buf) return { mem: a.mem, from: a.off + r.off, to: a.off + r.off + r.cnt };
    const mem = r.buf === "i" ? 0 : 1;
    return { mem, from: r.off, to: r.off + r.cnt };
  };
}

const overlaps = (x: { mem: number; from: number; to: number }, y: { mem: number; from: number; to: number }) =>
  x.mem === y.mem && x.from < y.to && y.from < x.to && x.to > x.from && y.to > y.from;

function checkRaces(
  program: MscclProgram,
  actions: readonly Action[],
  tbActions: readonly (readonly (readonly number[])[])[],
  hbPreds: readonly (readonly number[])[],
  order: readonly number[],
  ntb: number,
  place: Placer,
  file: string,
): void {
  // Vector clocks over every threadblock: clock[i][t] = how many of tb t's actions happen before action i, i's own included.
  const clock: Int32Array[] = new Array(actions.length);
  for (const i of order) {
    const a = actions[i] as Action;
    const c = new Int32Array(ntb);
    const prev = a.pos > 0 ? (tbActions[a.gpu]?.[a.tb]?.[a.pos - 1] as number) : -1;
    for (const p of prev >= 0 ? [prev, ...(hbPreds[i] ?? [])] : (hbPreds[i] ?? [])) {
      const pc = clock[p] as Int32Array;
      for (let t = 0; t < ntb; t++) if ((pc[t] as number) > (c[t] as number)) c[t] = pc[t] as number;
    }
    c[a.tbg] = a.pos + 1;
    clock[i] = c;
  }
  const rank = new Int32Array(actions.length);
  order.forEach((i, k) => {
    rank[i] = k;
  });
  for (const g of program.gpus) {
    // Per memory cell, its accesses (action, writes?), outside the threadblocks' own receive buffers.
    const cells = new Map<number, { i: number; write: boolean }[]>();
    const touch = (i: number, r: Ref, write: boolean) => {
      const a = actions[i] as Action;
      const p = place(a.gpu, a.tb, r);
      if (p.mem > 2) return;
      for (let x = p.from; x < p.to; x++) {
        const key = p.mem * 1_000_000 + x;
        let l = cells.get(key);
        if (!l) cells.set(key, (l = []));
        l.push({ i, write });
      }
    };
    for (const t of tbActions[g.id] ?? []) {
      for (const i of t) {
        const a = actions[i] as Action;
        if (a.kind === "send") touch(i, a.ref, false);
        else if (a.kind === "recv") touch(i, a.ref, true);
        else {
          if (a.src) touch(i, a.src, false);
          if (a.with) touch(i, a.with, false);
          touch(i, a.ref, true);
        }
      }
    }
    for (const [key, list] of cells) {
      list.sort((x, y) => (rank[x.i] as number) - (rank[y.i] as number));
      for (let p = 0; p < list.length; p++) {
        for (let q = p + 1; q < list.length; q++) {
          const x = list[p] as { i: number; write: boolean };
          const y = list[q] as { i: number; write: boolean };
          const ax = actions[x.i] as Action;
          const ay = actions[y.i] as Action;
          if (ax.tb === ay.tb || (!x.write && !y.write)) continue;
          if (((clock[y.i] as Int32Array)[ax.tbg] as number) > ax.pos) continue;
          const mem = Math.floor(key / 1_000_000);
          const cell = `${mem === 0 ? "i" : mem === 1 ? "o" : "s"}[${key % 1_000_000}]`;
          const verb = (w: boolean) => (w ? "writes" : "reads");
          throw new AlgorithmFileError(
            `${file}: ${at(g.id)}: race: ${at(g.id, ax.tb, ax.step, ax.type)} ${verb(x.write)} ${cell}${program.inplace ? " (in place)" : ""} and ${at(g.id, ay.tb, ay.step, ay.type)} ${verb(y.write)} it, and no dependency orders them (depid/deps, directly or through other steps and messages)`,
          );
        }
      }
    }
  }
}

/** The nodes of a cycle through edge x -> y inside one component: y, ..., x (breadth first, so short). */
function cyclePath(
  x: number,
  y: number,
  comp: Int32Array,
  adj: readonly (readonly number[])[],
  to: readonly number[],
): number[] {
  const prev = new Map<number, number>([[y, -1]]);
  const queue = [y];
  for (let h = 0; h < queue.length && !prev.has(x); h++) {
    const v = queue[h] as number;
    for (const i of adj[v] as readonly number[]) {
      const w = to[i] as number;
      if (comp[w] !== comp[y] || prev.has(w)) continue;
      prev.set(w, v);
      queue.push(w);
    }
  }
  const path: number[] = [];
  for (let v = x; v !== -1 && path.length <= prev.size; v = prev.get(v) ?? -1) path.push(v);
  return path.reverse();
}

/** Tarjan's strongly connected components, iteratively; components are numbered in reverse topological order. */
function tarjan(n: number, adj: readonly (readonly number[])[], to: readonly number[]): Int32Array {
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const comp = new Int32Array(n).fill(-1);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  let next = 0;
  let ncomp = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [[root, 0]];
    index[root] = low[root] = next++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const top = work[work.length - 1] as [number, number];
      const [v, k] = top;
      const out = adj[v] as readonly number[];
      if (k < out.length) {
        top[1] = k + 1;
        const w = to[out[k] as number] as number;
        if (index[w] === -1) {
          index[w] = low[w] = next++;
          stack.push(w);
          onStack[w] = 1;
          work.push([w, 0]);
        } else if (onStack[w]) low[v] = Math.min(low[v] as number, index[w] as number);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const u = (work[work.length - 1] as [number, number])[0];
        low[u] = Math.min(low[u] as number, low[v] as number);
      }
      if (low[v] === index[v]) {
        for (;;) {
          const w = stack.pop() as number;
          onStack[w] = 0;
          comp[w] = ncomp;
          if (w === v) break;
        }
        ncomp++;
      }
    }
  }
  return comp;
}

/**
 * Rank c.rank's schedule: its rounds over the call's memory, chunk j of a buffer being elements
 * [j·e, (j+1)·e). Where the call's mode is one the program does not have, the memory the program
 * expects is staged: an out-of-place program called in place reads a copy of the input; an
 * in-place program called out of place runs on the output with the input copied where the
 * in-place layout puts it (reduce-scatter's on a copy of the input, its block copied out at the end).
 */
function* scheduleOf(
  p: MscclProgram,
  spec: CollectiveSpec,
  c: RankCall,
  mem: Memory,
  rounds: readonly Round[],
  tmpSize: readonly number[],
  mult: number,
): Schedule {
  const e = (c.count * mult) / p.nchunksperloop;
  const g = p.gpus[c.rank];
  if (!g) return;
  let input = mem.input;
  let output = mem.output;
  const tail: Step[] = [];
  const a = spec.layout(c).alias;
  if (c.inPlace && !p.inplace) {
    input = mem.scratch(mem.input.count);
    yield step("stage input (the program is out of place only)", [], [copy(input, mem.input)]);
  } else if (!c.inPlace && !p.outofplace && a) {
    if (a.kind === "output-in-input") {
      const whole = mem.scratch(mem.input.count);
      yield step("stage input (the program is in place only)", [], [copy(whole, mem.input)]);
      input = whole;
      output = sub(whole, a.offset, mem.output.count);
      tail.push(step("copy out (the program is in place only)", [], [copy(mem.output, output)]));
    } else {
      const into = sub(mem.output, a.offset, mem.input.count);
      if (into.count > 0)
        yield step("copy input into place (the program is in place only)", [], [copy(into, mem.input)]);
      input = into;
    }
  }
  const scratch = mem.scratch(g.sChunks * e);
  const tmp = tmpSize.map((k) => mem.scratch(k * e));
  const bases = { i: input, o: output, s: scratch };
  const region = (a: Action, r: Ref): Region =>
    r.buf === "t" ? sub(tmp[a.tb] as Region, r.off * e, r.cnt * e) : sub(bases[r.buf], r.off * e, r.cnt * e);
  for (const r of rounds) {
    if (r.staged.length > 0) {
      const copies = r.staged.map((x) => copy(region(x, x.stage as Ref), region(x, x.ref)));
      yield step(`stage ${r.staged.map((x) => `tb${x.tb}.${x.step} ${x.type}`).join(", ")}`, [], copies);
    }
    const locals: LocalOp[] = [];
    for (const x of r.locals) {
      const dst = region(x, x.ref);
      const src = region(x, x.src as Ref);
      if (x.kind === "copy") {
        if (!sameRef(x.ref, x.src as Ref)) locals.push(copy(dst, src));
      } else locals.push(reduce(dst, src, x.with ? region(x, x.with) : undefined));
    }
    const transfers = r.transfers.map((x) => {
      const t = x.kind === "send" ? send(x.peer, region(x, x.stage ?? x.ref)) : recv(x.peer, region(x, x.ref));
      return x.channel === 0 ? t : { ...t, channel: x.channel };
    });
    yield step(r.label, transfers, locals);
  }
  yield* tail;
}

const sameRef = (x: Ref, y: Ref) => x.buf === y.buf && x.off === y.off && x.cnt === y.cnt;
const refText = (r: Ref) =>
  r.buf === "t" ? "its receive buffer" : `${r.buf}[${r.off}${r.cnt > 1 ? `:${r.off + r.cnt}` : ""}]`;
const nth = (k: number) =>
  `${k + 1}${k % 10 === 0 && k !== 10 ? "st" : k % 10 === 1 && k !== 11 ? "nd" : k % 10 === 2 && k !== 12 ? "rd" : "th"}`;
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const baseName = (file?: string) =>
  file
    ?.split(/[\\/]/)
    .pop()
    ?.replace(/\.xml$/i, "")
    .replace(/[^A-Za-z0-9_.-]/g, "_") ?? "";
