/**
 * The static checker: runs the schedules of all ranks symbolically, without data, and proves
 * (for the given size, count, root and mode) that
 *   - every send meets a receive of the same size, in posting order, with no deadlock under
 *     rendezvous ('nccl') semantics with grouped steps;
 *   - no step races (a receive into memory another transfer of the same step touches), no local
 *     copy overlaps itself, and out of place the caller's input is never written;
 *   - the result is the collective's: each element carries the multiset of (rank, index)
 *     contributions it holds, as MSCCLang's checker does, and must equal the collective's
 *     definition, each contribution exactly once; a barrier must leave every rank having heard
 *     (transitively) from every rank;
 *   - the steps and bytes per rank equal the formulas the algorithm's header states.
 * Every failure names the algorithm, n, count, rank, step and region.
 */
import { type CallArgs, contextFor, materialize, regionText, ScheduleError } from "./context.js";
import { layout } from "./layout.js";
import type { Algorithm, BufferName, Region, ScheduleContext, Step } from "./types.js";

/** Contributions an element holds (ids rank * stride + index), or null where nothing was written. */
export type Cell = readonly number[] | null;

/**
 * Inside the checker a reduction does not copy its operands' contributions: it joins them in a
 * pair, flattened only where a result is compared or shown. Copying made long reduction chains
 * (ring reduce-scatter at n = 64) quadratic in n per element.
 */
interface Join {
  readonly a: Sym;
  readonly b: Sym;
}
/** One contribution's id, a join of two cells, or null (never written). */
type Sym = number | Join | null;

function flatten(cell: Sym): Cell {
  if (cell === null) return null;
  if (typeof cell === "number") return [cell];
  const out: number[] = [];
  const stack: Sym[] = [cell];
  while (stack.length > 0) {
    const c = stack.pop() as Sym;
    if (c === null) continue;
    if (typeof c === "number") out.push(c);
    else stack.push(c.b, c.a);
  }
  return out;
}

interface Mem {
  arr: Sym[];
  base: number;
  size: number;
}

interface RankState {
  ctx: ScheduleContext;
  steps: Step[];
  mem: Record<BufferName, Mem>;
  /** Input elements that out of place belong to the caller and must stay untouched. */
  protectedInput: { arr: Sym[]; from: number; to: number }[];
  at: number;
  pending: number;
  knows: Uint8Array;
  sent: number;
  commSteps: number;
}

export interface StepRecord {
  readonly step: Step;
  /** Cells of each buffer after the step's local operations (only when snapshots are asked for). */
  readonly after?: Record<BufferName, Cell[]>;
}

export interface CheckReport {
  readonly algorithm: string;
  readonly args: CallArgs;
  readonly errors: string[];
  /** Communication steps, max over ranks. */
  readonly steps: number;
  /** Elements sent, max over ranks. */
  readonly sentElements: number;
  readonly perRank: { steps: number; sentElements: number }[];
  /** Id encoding: contribution id = rank * stride + index. */
  readonly stride: number;
  /** Per rank, per step, when snapshots were asked for. */
  readonly records?: StepRecord[][];
  /** Per rank, the buffers before the first step, when snapshots were asked for. */
  readonly initial?: Record<BufferName, Cell[]>[];
}

export interface CheckOptions {
  /** Record every rank's buffers after every step (explain uses this). */
  readonly snapshots?: boolean;
  /** Skip the cost-formula comparison (e.g. while drafting an algorithm). */
  readonly skipCost?: boolean;
}

const MAX_ERRORS = 8;

export function checkAlgorithm(alg: Algorithm, args: CallArgs, options: CheckOptions = {}): CheckReport {
  const n = args.size;
  const name = `${alg.collective}/${alg.name}`;
  const where = `${name} (n=${n}, count=${args.count}${args.root ? `, root=${args.root}` : ""}${args.inPlace ? ", in place" : ""})`;
  const errors: string[] = [];
  const fail = (msg: string) => {
    if (errors.length < MAX_ERRORS) errors.push(`${where}: ${msg}`);
  };
  const empty = (stride: number): CheckReport => ({
    algorithm: name,
    args,
    errors,
    steps: 0,
    sentElements: 0,
    perRank: [],
    stride,
  });

  // Materialise every rank's schedule; region and peer errors stop the check here.
  const ranks: RankState[] = [];
  let stride = 1;
  try {
    for (let r = 0; r < n; r++) {
      const ctx = contextFor(alg, args, r);
      stride = Math.max(stride, layout(ctx).inputCount);
      ranks.push({
        ctx,
        steps: materialize(alg, ctx, where),
        mem: undefined as unknown as Record<BufferName, Mem>,
        protectedInput: [],
        at: 0,
        pending: 0,
        knows: new Uint8Array(n),
        sent: 0,
        commSteps: 0,
      });
    }
  } catch (e) {
    if (e instanceof ScheduleError) {
      errors.push(e.message);
      return empty(stride);
    }
    throw e;
  }
  for (let r = 0; r < n; r++) initMemory(alg, ranks[r] as RankState, r, stride);

  const records: StepRecord[][] | undefined = options.snapshots ? ranks.map(() => []) : undefined;
  const initial = options.snapshots ? ranks.map((st) => snapshot(st)) : undefined;
  const stepName = (st: RankState, r: number) => {
    const s = st.steps[st.at];
    return `rank ${r}, step ${st.at} ('${s?.label ?? "end"}')`;
  };

  // Rendezvous matching: queues per (src, dst), one posted step per rank at a time.
  type Posted = { rank: number; region: Region };
  const sends = new Map<number, Posted[]>();
  const recvs = new Map<number, Posted[]>();
  const ready: number[] = [];
  const key = (src: number, dst: number) => src * n + dst;
  const push = (m: Map<number, Posted[]>, k: number, p: Posted) => {
    const q = m.get(k);
    if (q) q.push(p);
    else m.set(k, [p]);
  };

  const post = (r: number) => {
    const st = ranks[r] as RankState;
    const s = st.steps[st.at];
    if (!s) return;
    // Labels are what traces, timeouts and deadlock messages show: every step needs one.
    if (s.label.trim() === "") fail(`${stepName(st, r)}: the step has no label`);
    checkRaces(st, s, (m) => fail(`${stepName(st, r)}: ${m}`));
    st.pending = s.transfers.length;
    if (s.transfers.length > 0) st.commSteps++;
    if (st.pending === 0) {
      ready.push(r);
      return;
    }
    for (const t of s.transfers) {
      if (t.kind === "send") {
        st.sent += t.region.count;
        const k = key(r, t.peer);
        const q = recvs.get(k);
        if (q && q.length > 0) complete({ rank: r, region: t.region }, q.shift() as Posted, t.peer);
        else push(sends, k, { rank: r, region: t.region });
      } else {
        const k = key(t.peer, r);
        const q = sends.get(k);
        if (q && q.length > 0) complete(q.shift() as Posted, { rank: r, region: t.region }, t.peer);
        else push(recvs, k, { rank: r, region: t.region });
      }
    }
  };

  const complete = (s: Posted, d: Posted, _peer: number) => {
    const src = ranks[s.rank] as RankState;
    const dst = ranks[d.rank] as RankState;
    if (s.region.count !== d.region.count) {
      fail(
        `${stepName(src, s.rank)} sends ${regionText(s.region)} (${s.region.count} elements) to rank ${d.rank}, ` +
          `which receives ${regionText(d.region)} (${d.region.count} elements) in ${stepName(dst, d.rank)}`,
      );
    } else {
      const cells = read(src, s.region);
      write(dst, d.region, cells, (m) => fail(`${stepName(dst, d.rank)}: ${m}`));
      for (let i = 0; i < n; i++) if (src.knows[i]) dst.knows[i] = 1;
    }
    for (const [st, r] of [
      [src, s.rank],
      [dst, d.rank],
    ] as const) {
      st.pending--;
      if (st.pending === 0) ready.push(r);
    }
  };

  for (let r = 0; r < n; r++) post(r);
  while (ready.length > 0) {
    const r = ready.shift() as number;
    const st = ranks[r] as RankState;
    const s = st.steps[st.at] as Step;
    for (const l of s.local) {
      const src = read(st, l.src);
      if (l.kind === "copy") {
        if (overlapsPartially(st, l.dst, l.src)) {
          fail(`${stepName(st, r)}: copy ${regionText(l.dst)} <- ${regionText(l.src)} overlaps itself`);
        } else if (l.dst.count > 0 && sameMemory(st, l.dst, l.src)) {
          // Harmless on the host, but a wasted kernel or memcpy on a GPU: usually an in-place case missed.
          fail(`${stepName(st, r)}: copy ${regionText(l.dst)} <- ${regionText(l.src)} copies memory onto itself`);
        }
        write(st, l.dst, src, (m) => fail(`${stepName(st, r)}: ${m}`));
      } else {
        const dst = read(st, l.dst);
        const sum: Sym[] = dst.map((c, i) => {
          const o = src[i] as Sym;
          if (c === null || o === null) {
            fail(`${stepName(st, r)}: reduce ${regionText(l.dst)} += ${regionText(l.src)} reads an unwritten element`);
            return null;
          }
          return { a: c, b: o };
        });
        write(st, l.dst, sum, (m) => fail(`${stepName(st, r)}: ${m}`));
      }
    }
    records?.[r]?.push({ step: s, after: snapshot(st) });
    st.at++;
    post(r);
  }

  const stuck = ranks.map((st, r) => ({ st, r })).filter(({ st }) => st.at < st.steps.length);
  if (stuck.length > 0) {
    const lines = stuck.slice(0, 6).map(({ st, r }) => {
      const s = st.steps[st.at] as Step;
      const ts = s.transfers.map(
        (t) => `${t.kind}(${t.kind === "send" ? "to" : "from"} ${t.peer}, ${regionText(t.region)})`,
      );
      return `${stepName(st, r)} waits in ${ts.join(", ")}`;
    });
    fail(`deadlock under rendezvous semantics: ${lines.join("; ")}${stuck.length > 6 ? "; ..." : ""}`);
    return { ...empty(stride), records, initial };
  }

  for (let r = 0; r < n; r++) checkResult(alg, ranks, r, stride, (m) => fail(`rank ${r}: ${m}`));

  const perRank = ranks.map((st) => ({ steps: st.commSteps, sentElements: st.sent }));
  const steps = Math.max(0, ...perRank.map((p) => p.steps));
  const sentElements = Math.max(0, ...perRank.map((p) => p.sentElements));
  if (!options.skipCost && errors.length === 0) {
    const seg = (ranks[0] as RankState).ctx.segment;
    const wantSteps = alg.cost.steps(n, args.count, seg);
    const wantSent = alg.cost.sentElements(n, args.count, seg);
    if (wantSteps !== steps) {
      fail(`cost: header says ${alg.cost.stepsFormula} = ${wantSteps} steps, the schedule has ${steps}`);
    }
    // NaN says "no formula": only alltoallv may say so, its bytes depend on the split matrix.
    if (Number.isNaN(wantSent) && alg.collective !== "alltoallv") {
      fail(`cost: header's ${alg.cost.bytesFormula} gives no number (NaN) for n=${n}, count=${args.count}`);
    } else if (!Number.isNaN(wantSent) && wantSent !== sentElements) {
      fail(
        `cost: header says ${alg.cost.bytesFormula} = ${wantSent} elements sent per rank (max), the schedule sends ${sentElements}`,
      );
    }
  }
  return { algorithm: name, args, errors, steps, sentElements, perRank, stride, records, initial };
}

function initMemory(alg: Algorithm, st: RankState, rank: number, stride: number): void {
  const l = layout(st.ctx);
  const scratch = alg.scratch?.(st.ctx) ?? 0;
  const inArr: Sym[] = new Array(l.inputCount);
  for (let i = 0; i < l.inputCount; i++) inArr[i] = rank * stride + i;
  const input: Mem = { arr: inArr, base: 0, size: l.inputCount };
  let output: Mem = { arr: new Array<Sym>(l.outputCount).fill(null), base: 0, size: l.outputCount };
  const a = st.ctx.inPlace ? l.alias : undefined;
  if (a?.kind === "same") {
    output = input;
  } else if (a?.kind === "input-in-output") {
    // input is output[offset..]: the caller's data starts inside the output buffer.
    for (let i = 0; i < l.inputCount; i++) output.arr[a.offset + i] = inArr[i] as Sym;
    input.arr = output.arr;
    input.base = a.offset;
  } else if (a?.kind === "output-in-input") {
    output = { arr: inArr, base: a.offset, size: l.outputCount };
  }
  st.mem = { input, output, scratch: { arr: new Array<Sym>(scratch).fill(null), base: 0, size: scratch } };
  st.knows[rank] = 1;
  // Out of place the whole input is the caller's; in place, only what the output does not cover.
  if (!a) st.protectedInput.push({ arr: input.arr, from: input.base, to: input.base + l.inputCount });
  else if (a.kind === "output-in-input") {
    st.protectedInput.push({ arr: inArr, from: 0, to: a.offset });
    st.protectedInput.push({ arr: inArr, from: a.offset + l.outputCount, to: l.inputCount });
  }
}

function read(st: RankState, r: Region): Sym[] {
  const m = st.mem[r.buf];
  return m.arr.slice(m.base + r.offset, m.base + r.offset + r.count);
}

function write(st: RankState, r: Region, cells: Sym[], fail: (m: string) => void): void {
  const m = st.mem[r.buf];
  const from = m.base + r.offset;
  for (const p of st.protectedInput) {
    if (p.arr === m.arr && r.count > 0 && from < p.to && p.from < from + r.count) {
      fail(`writes ${regionText(r)}, which is the caller's input (it must stay unchanged)`);
      break;
    }
  }
  for (let i = 0; i < r.count; i++) m.arr[from + i] = cells[i] ?? null;
}

function span(st: RankState, r: Region): { arr: Sym[]; from: number; to: number } {
  const m = st.mem[r.buf];
  return { arr: m.arr, from: m.base + r.offset, to: m.base + r.offset + r.count };
}

function sameMemory(st: RankState, a: Region, b: Region): boolean {
  const x = span(st, a);
  const y = span(st, b);
  return x.arr === y.arr && x.from === y.from && x.to === y.to;
}

function overlapsPartially(st: RankState, a: Region, b: Region): boolean {
  const x = span(st, a);
  const y = span(st, b);
  if (x.arr !== y.arr || a.count === 0) return false;
  if (x.from === y.from) return false; // a copy onto itself is a no-op
  return x.from < y.to && y.from < x.to;
}

/** A receive must not share memory with any other transfer of its step (undefined on real engines). */
function checkRaces(st: RankState, s: Step, fail: (m: string) => void): void {
  const ts = s.transfers.filter((t) => t.region.count > 0);
  for (let i = 0; i < ts.length; i++) {
    const a = ts[i] as (typeof ts)[number];
    for (let j = i + 1; j < ts.length; j++) {
      const b = ts[j] as (typeof ts)[number];
      if (a.kind === "send" && b.kind === "send") continue;
      const x = span(st, a.region);
      const y = span(st, b.region);
      if (x.arr === y.arr && x.from < y.to && y.from < x.to) {
        fail(`race: ${a.kind} ${regionText(a.region)} and ${b.kind} ${regionText(b.region)} in one step share memory`);
        return;
      }
    }
  }
}

function snapshot(st: RankState): Record<BufferName, Cell[]> {
  const view = (m: Mem) => m.arr.slice(m.base, m.base + m.size).map(flatten);
  return { input: view(st.mem.input), output: view(st.mem.output), scratch: view(st.mem.scratch) };
}

/**
 * The collective's definition of one output element of `rank`: every rank's contribution at
 * input index `index` (a reduction), exactly the contribution `id` (data movement), or
 * undefined for "anything" (barrier).
 */
export type Expected = { readonly all: number } | { readonly id: number } | undefined;

/** The collective's definition: what each output element of `rank` must hold. */
export function expectedOutput(ctx: ScheduleContext, stride: number, all: readonly ScheduleContext[]): Expected[] {
  const { size: n, count: c, rank, root } = ctx;
  const l = layout(ctx);
  const id = (r: number, i: number) => ({ id: r * stride + i });
  const out: Expected[] = new Array(l.outputCount);
  for (let j = 0; j < l.outputCount; j++) {
    switch (ctx.collective) {
      case "broadcast":
        out[j] = id(root, j);
        break;
      case "reduce":
      case "allreduce":
        out[j] = { all: j };
        break;
      case "gather":
      case "allgather":
        out[j] = id(Math.floor(j / c), j % c);
        break;
      case "scatter":
        out[j] = id(root, rank * c + j);
        break;
      case "reducescatter":
        out[j] = { all: rank * c + j };
        break;
      case "alltoall":
        out[j] = id(Math.floor(j / c), rank * c + (j % c));
        break;
      case "alltoallv": {
        // Output block from peer q starts at the prefix sum of recvCounts; it holds q's
        // elements addressed to this rank, which start at q's prefix sum of sendCounts.
        let q = 0;
        let rd = 0;
        while (q < n && j >= rd + (ctx.recvCounts?.[q] ?? 0)) rd += ctx.recvCounts?.[q++] ?? 0;
        const sc = all[q]?.sendCounts ?? [];
        let sd = 0;
        for (let k = 0; k < rank; k++) sd += sc[k] ?? 0;
        out[j] = id(q, sd + (j - rd));
        break;
      }
      case "barrier":
        out[j] = undefined;
    }
  }
  return out;
}

/** The ids an expectation stands for, in increasing order (for messages). */
function expectedIds(want: NonNullable<Expected>, n: number, stride: number): number[] {
  return "id" in want ? [want.id] : Array.from({ length: n }, (_, r) => r * stride + want.all);
}

function checkResult(
  alg: Algorithm,
  ranks: RankState[],
  rank: number,
  stride: number,
  fail: (m: string) => void,
): void {
  const st = ranks[rank] as RankState;
  const ctx = st.ctx;
  const n = ctx.size;
  if (ctx.collective === "barrier") {
    const missing = [...st.knows].map((k, i) => (k ? -1 : i)).filter((i) => i >= 0);
    if (missing.length > 0) fail(`leaves the barrier without having heard from rank(s) ${missing.join(", ")}`);
    return;
  }
  const expected = expectedOutput(
    ctx,
    stride,
    ranks.map((s) => s.ctx),
  );
  const out = st.mem.output;
  // seen[r] === j + 1 marks rank r's contribution as already counted in output element j.
  const seen = new Int32Array(n);
  for (let j = 0; j < expected.length; j++) {
    const want = expected[j];
    if (!want) continue;
    const cell = out.arr[out.base + j] ?? null;
    if (cell === null) {
      fail(`output[${j}] was never written; it should hold ${cellText(expectedIds(want, n, stride), stride)}`);
      return;
    }
    let ok: boolean;
    if ("id" in want) ok = cell === want.id;
    else {
      // Walk the joins without flattening: n contributions, one per rank, all at index want.all.
      let seenCount = 0;
      ok = true;
      const stack: Sym[] = [cell];
      while (ok && stack.length > 0) {
        const c = stack.pop() as Sym;
        if (c === null) continue;
        if (typeof c !== "number") {
          stack.push(c.b, c.a);
          continue;
        }
        const r = Math.floor(c / stride);
        ok = c % stride === want.all && r >= 0 && r < n && seen[r] !== j + 1;
        seen[r] = j + 1;
        seenCount++;
      }
      ok &&= seenCount === n;
    }
    if (!ok) {
      const g = [...(flatten(cell) ?? [])].sort((x, y) => x - y);
      const w = expectedIds(want, n, stride);
      fail(
        `output[${j}] holds ${cellText(g, stride)} but ${alg.collective} needs ${cellText(w, stride)}${diff(g, w, stride)}`,
      );
      return;
    }
  }
}

/** [0+1+2]-style text of a cell: the contributing ranks, with the element index where it is not `index`. */
export function cellText(cell: readonly number[] | null, stride: number, index?: number): string {
  if (cell === null) return ".";
  const sorted = [...cell].sort((a, b) => a - b);
  return `[${sorted
    .map((id) => {
      const r = Math.floor(id / stride);
      const i = id % stride;
      return index === undefined || i === index ? `${r}` : `${r}:${i}`;
    })
    .join("+")}]`;
}

function diff(got: number[], want: number[], stride: number): string {
  const count = (xs: number[]) => {
    const m = new Map<number, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const g = count(got);
  const w = count(want);
  const notes: string[] = [];
  const name = (id: number) => `rank ${Math.floor(id / stride)}'s element ${id % stride}`;
  for (const [id, k] of g) {
    const e = w.get(id) ?? 0;
    if (k > e) notes.push(e === 0 ? `${name(id)} does not belong` : `${name(id)} counted ${k} times`);
  }
  for (const [id] of w) if (!g.has(id)) notes.push(`${name(id)} is missing`);
  return notes.length ? ` (${notes.join("; ")})` : "";
}
