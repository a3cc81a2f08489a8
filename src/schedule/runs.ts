/**
 * Symbolic memory in runs, for the static proof over flat plans (flat.ts) at many ranks.
 *
 * symbolic.ts keeps one cell per element of every rank's buffers: at n ranks and a count that
 * fills every chunk, an all-gather holds n² elements a rank, n³ cells in all (a billion at
 * n = 1,024). Here a memory is a list of runs: a run is a stretch of elements whose symbolic
 * value is affine in the element index: element k of the run holds value v at offset o + k,
 * where v is
 *   - a leaf: one rank's input, whose element at offset k is the contribution id + k (one rank,
 *     element index idx + k), or
 *   - a join: the reduction of two values (a at ao + k and b at bo + k), holding the ranks of
 *     `ranks` (sorted intervals, as symbolic.ts's joins) at element index idx + k, or idx = -1
 *     where a contribution is held twice or indices are mixed (then at every k alike: both
 *     operands' indices grow with k together, and their rank sets do not depend on k).
 * A memory starts split where the plan's written regions begin and end, and a write splits runs
 * only where its boundaries or its pieces' fall, so most writes change whole runs in place
 * (splitting a memory of many runs on every write made the proof cubic in n); within a write, a
 * value that continues across runs is one run; copies, sends and receives move runs; a reduction joins run against run, once per piece where both operands' runs agree;
 * the result is compared with the spec once per run.
 *
 * The obligations are symbolic.ts's, element for element: a reduction reads nothing unwritten,
 * sends and receives agree in size, and flattenAt() gives any element's contributions, flattened,
 * for messages.
 *
 * Only a wrong join keeps its operands: a right one's contributions are its ranks at its index,
 * which is all a message needs of it. Kept, the operands hold every partial sum the schedule ever
 * made (a reduce-scatter's result trees: 9.4 million joins, 2.5 GiB of heap for PAT at 1,024 ranks).
 */
import { invariant } from "../core/assert.js";
import { lastAtMost } from "../core/extent.js";
import type { Layout } from "../specs/types.js";
import { type Region, regionText } from "./dsl.js";
import { type FlatEffects, type FlatPlan, REDUCE, SEND } from "./flat.js";
import { type PlanOp, placer } from "./plan.js";
import { type Cell, unionOfDisjoint } from "./symbolic.js";

/** A value affine in the element index (see the header). */
export interface RunVal {
  /** A leaf: the contribution id at offset 0; a join: -1. */
  readonly id: number;
  /** A wrong join's operands (idx -1); null for a leaf and a right join. */
  readonly a: RunVal | null;
  readonly ao: number;
  readonly b: RunVal | null;
  readonly bo: number;
  /** The element index at offset 0 that every contribution has, or -1 (held twice or indices mixed). */
  readonly idx: number;
  /** The ranks held, as sorted disjoint intervals [lo, hi), no two adjacent. */
  readonly ranks: readonly number[];
}

const BAD: readonly number[] = [];

function leaf(rank: number, stride: number): RunVal {
  return { id: rank * stride, a: null, ao: 0, b: null, bo: 0, idx: 0, ranks: [rank, rank + 1] };
}

/** A join that holds a contribution twice or mixes indices. */
function badJoin(x: RunVal, xo: number, y: RunVal, yo: number): RunVal {
  return { id: -1, a: x, ao: xo, b: y, bo: yo, idx: -1, ranks: BAD };
}

/** The join of x at offset xo with y at offset yo (offset 0 of the result is theirs). */
function joinRun(x: RunVal, xo: number, y: RunVal, yo: number): RunVal {
  if (x.idx < 0 || y.idx < 0 || x.idx + xo !== y.idx + yo) return badJoin(x, xo, y, yo);
  const ranks = unionOfDisjoint(x.ranks, y.ranks);
  if (!ranks) return badJoin(x, xo, y, yo);
  return { id: -1, a: null, ao: 0, b: null, bo: 0, idx: x.idx + xo, ranks };
}

/**
 * The contributions of value v at offset o, flattened (null for unwritten), in no set order:
 * contribution ids are rank · stride + index. A leaf or a right join holds each of its ranks once
 * at index idx + o; a wrong join, its operands'.
 */
export function flattenAt(v: RunVal | null, o: number, stride: number): Cell {
  if (v === null) return null;
  const out: number[] = [];
  const vs: RunVal[] = [v];
  const os: number[] = [o];
  while (vs.length > 0) {
    const x = vs.pop() as RunVal;
    const k = os.pop() as number;
    if (x.idx >= 0) {
      const { ranks } = x;
      for (let i = 0; i < ranks.length; i += 2) {
        for (let r = ranks[i] as number; r < (ranks[i + 1] as number); r++) out.push(r * stride + x.idx + k);
      }
    } else {
      vs.push(x.b as RunVal, x.a as RunVal);
      os.push(x.bo + k, x.ao + k);
    }
  }
  return out;
}

// Stryker disable ArrayDeclaration: the lists below are filled before they are read.
/**
 * Pieces read from a memory: piece i is len[i] elements of val[i] from offset off[i] (an
 * unwritten piece's offset means nothing).
 */
export class Pieces {
  len: number[] = [];
  val: (RunVal | null)[] = [];
  off: number[] = [];
  size = 0;
  clear(): void {
    this.size = 0;
  }
  push(len: number, val: RunVal | null, off: number): void {
    const s = this.size++;
    this.len[s] = len;
    this.val[s] = val;
    this.off[s] = off;
  }
}

/** One memory as runs: run i covers [start[i], start[i+1]) (the last up to length). */
export class RunMem {
  start: number[] = [];
  val: (RunVal | null)[] = [];
  off: number[] = [];

  /** Unwritten, split at `cuts` (sorted, each inside (0, length)): where the plan's regions begin and end. */
  constructor(
    readonly length: number,
    cuts: ArrayLike<number> = [],
  ) {
    // Stryker restore ArrayDeclaration
    if (length === 0) return;
    this.start.push(0);
    for (let i = 0; i < cuts.length; i++) {
      const c = cuts[i] as number;
      if (c > (this.start[this.start.length - 1] as number) && c < length) this.start.push(c);
    }
    this.val = new Array(this.start.length).fill(null);
    this.off = new Array(this.start.length).fill(0);
  }

  end(i: number): number {
    return i + 1 < this.start.length ? (this.start[i + 1] as number) : this.length;
  }

  /** The run holding element `at` (0 <= at < length). */
  find(at: number): number {
    return lastAtMost(this.start, at);
  }

  /** Appends elements [from, from + count) to `out` as pieces. */
  read(from: number, count: number, out: Pieces): void {
    if (from < 0 || from + count > this.length) invariant(false, `read [${from}, ${from + count}) of ${this.length}`);
    const to = from + count;
    for (let i = this.find(from), at = from; at < to; i++) {
      const e = Math.min(this.end(i), to);
      out.push(e - at, this.val[i] as RunVal | null, (this.off[i] as number) + at - (this.start[i] as number));
      at = e;
    }
  }

  /** Splits so that a run starts at `at` (0 < at < length); returns that run. */
  private splitAt(at: number): number {
    const i = this.find(at);
    const st = this.start[i] as number;
    if (st === at) return i;
    const v = this.val[i] as RunVal | null;
    this.start.splice(i + 1, 0, at);
    this.val.splice(i + 1, 0, v);
    this.off.splice(i + 1, 0, (this.off[i] as number) + at - st);
    return i + 1;
  }

  /**
   * Writes the pieces at `from` (they cover count elements). Runs are split where the write's
   * boundaries and its pieces' fall (the memory starts split where the plan's written regions
   * fall, so most writes land on whole runs and change them in place); a piece that continues
   * the one before it (the same value, the next offset) is one run with it.
   */
  write(from: number, count: number, p: Pieces): void {
    if (count === 0) return;
    const to = from + count;
    if (from < 0 || to > this.length) invariant(false, `write [${from}, ${to}) of ${this.length}`);
    const i0 = this.splitAt(from);
    const i1 = to < this.length ? this.splitAt(to) : this.start.length;
    // The runs of [from, to), from the pieces alone: what the runs there held is overwritten.
    const r = rebuilt;
    r.size = 0;
    let at = from;
    for (let k = 0; at < to; k++) {
      const v = p.val[k] as RunVal | null;
      const o = p.off[k] as number;
      const last = r.size - 1;
      if (!(r.val[last] === v && (v === null || (r.off[last] as number) + at - (r.start[last] as number) === o))) {
        r.start[r.size] = at;
        r.val[r.size] = v;
        r.off[r.size++] = o;
      }
      at += p.len[k] as number;
    }
    invariant(at === to, () => `write [${from}, ${to}): pieces of ${at - from} elements`);
    const k = i1 - i0;
    // Stryker disable next-line ConditionalExpression: as many runs as before are rewritten in place, only faster
    if (r.size !== k) {
      this.start.splice(i0, k, ...r.start.slice(0, r.size));
      this.val.splice(i0, k, ...r.val.slice(0, r.size));
      this.off.splice(i0, k, ...r.off.slice(0, r.size));
      return;
    }
    for (let j = 0; j < k; j++) {
      this.start[i0 + j] = r.start[j] as number;
      this.val[i0 + j] = r.val[j] as RunVal | null;
      this.off[i0 + j] = r.off[j] as number;
    }
  }
}

/** The runs a write makes, before they replace the ones it covers. */
const rebuilt = { start: [] as number[], val: [] as (RunVal | null)[], off: [] as number[], size: 0 };

/** Where rank `p`'s plan's written regions begin and end, per memory (sorted, with repeats). */
function cutsOf(p: FlatPlan): Int32Array[] {
  const cuts: number[][] = [[], [], []];
  for (let i = 0; i < p.m; i++) {
    // Only where operations write (a receive's, copy's or reduction's region): a memory only read
    // (the input, most often) stays one run, and reads split nothing.
    if (p.kind[i] === SEND) continue;
    const m = p.places[6 * i] as number;
    if (m < 0) continue;
    const from = p.places[6 * i + 1] as number;
    (cuts[m] as number[]).push(from, from + (p.count[i] as number));
  }
  return cuts.map((c) => Int32Array.from(c).sort());
}

/**
 * A rank's memories 0 (input), 1 (output), 2 (scratch) before its plan runs, as symbolic.ts's
 * initialMemory: the input holds the rank's own contributions, the rest nothing, except where in
 * place the output aliases the input.
 */
function initialRuns(p: FlatPlan, rank: number, stride: number): RunMem[] {
  const l: Layout = p.layout;
  const a = p.call.inPlace ? l.alias : undefined;
  const cuts = cutsOf(p);
  const input = new RunMem(l.inputCount, cuts[0]);
  const mine = new Pieces();
  if (l.inputCount > 0) {
    mine.push(l.inputCount, leaf(rank, stride), 0);
    input.write(0, l.inputCount, mine);
  }
  // In place as one buffer ('same'), input and output are one memory of outputCount (= inputCount).
  const output = new RunMem(l.outputCount, cuts[1]);
  if (a?.kind === "same") output.write(0, l.inputCount, mine);
  if (a?.kind === "input-in-output") output.write(a.offset, l.inputCount, mine);
  return [input, output, new RunMem(p.scratch, cuts[2])];
}

/**
 * Every rank's symbolic memory as runs, and the walk's effects that move it: the same moves as
 * symbolic.ts's SymbolicMemory, read from the flat plans' numbers. Messages name regions, which
 * `opOf` gives (the rank's plan compiled again: only on a failure).
 */
export class RunMemory {
  /** Per rank: memories 0 (input), 1 (output), 2 (scratch). */
  readonly mem: RunMem[][];

  constructor(
    readonly plans: readonly FlatPlan[],
    readonly stride: number,
    private readonly fail: (rank: number, index: number, message: string) => void,
    private readonly opOf: (rank: number, index: number) => PlanOp,
    /** Where a send and its receive differ in size (the cause of what reads after them): by default `fail`. */
    private readonly failPairing: (rank: number, index: number, message: string) => void = fail,
  ) {
    this.mem = plans.map((p, rank) => initialRuns(p, rank, stride));
  }

  /** Where a region of `rank` lives: its memory and first element. */
  where(rank: number, r: Region): { readonly mem: RunMem; readonly from: number } {
    const plan = this.plans[rank] as FlatPlan;
    const p = placer(plan.layout, plan.call.inPlace)(r);
    return { mem: (this.mem[rank] as RunMem[])[p.mem] as RunMem, from: p.from };
  }

  effects(): FlatEffects {
    const { plans, mem, fail, failPairing, opOf } = this;
    const src = new Pieces();
    const acc = new Pieces();
    const out = new Pieces();
    return {
      transfer: (sr, si, rr, ri) => {
        const s = plans[sr] as FlatPlan;
        const r = plans[rr] as FlatPlan;
        const n = s.count[si] as number;
        if (n !== r.count[ri]) {
          const so = opOf(sr, si);
          const ro = opOf(rr, ri);
          failPairing(
            sr,
            si,
            `sends ${regionText(so.region)} (${n} elements) to rank ${rr}, which receives ${regionText(ro.region)} (${ro.region.count} elements) in step ${ro.step}`,
          );
          return;
        }
        src.clear();
        ((mem[sr] as RunMem[])[s.places[6 * si] as number] as RunMem).read(s.places[6 * si + 1] as number, n, src);
        ((mem[rr] as RunMem[])[r.places[6 * ri] as number] as RunMem).write(r.places[6 * ri + 1] as number, n, src);
      },
      local: (rank, index) => {
        const p = plans[rank] as FlatPlan;
        const m = mem[rank] as RunMem[];
        const at = 6 * index;
        const n = p.count[index] as number;
        const dst = m[p.places[at] as number] as RunMem;
        const df = p.places[at + 1] as number;
        src.clear();
        // Read before writing: the destination may be an operand, or overlap the source.
        (m[p.places[at + 2] as number] as RunMem).read(p.places[at + 3] as number, n, src);
        if (p.kind[index] !== REDUCE) {
          // copy, and scale (which keeps the contributions).
          dst.write(df, n, src);
          return;
        }
        const withMem = p.places[at + 4] as number;
        acc.clear();
        if (withMem >= 0) (m[withMem] as RunMem).read(p.places[at + 5] as number, n, acc);
        else dst.read(df, n, acc);
        // dst <- acc op src (acc: `with`, or dst itself).
        if (!joinPieces(acc, src, out)) {
          fail(rank, index, `reduce ${regionText(opOf(rank, index).region)} reads an unwritten element`);
          return;
        }
        dst.write(df, n, out);
      },
    };
  }
}

/**
 * acc op src, element for element, into `out`: piece by piece where both operands' runs agree
 * (both cover the same elements). False, with `out` incomplete, where either holds an unwritten
 * element.
 */
export function joinPieces(acc: Pieces, src: Pieces, out: Pieces): boolean {
  out.clear();
  let i = 0;
  let j = 0;
  let ui = 0;
  let uj = 0;
  // Both cover the same elements, so they end together.
  while (i < acc.size) {
    const x = acc.val[i] as RunVal | null;
    const y = src.val[j] as RunVal | null;
    if (x === null || y === null) return false;
    const len = Math.min((acc.len[i] as number) - ui, (src.len[j] as number) - uj);
    out.push(len, joinRun(x, (acc.off[i] as number) + ui, y, (src.off[j] as number) + uj), 0);
    ui += len;
    uj += len;
    if (ui === acc.len[i]) {
      i++;
      ui = 0;
    }
    if (uj === src.len[j]) {
      j++;
      uj = 0;
    }
  }
  return true;
}
