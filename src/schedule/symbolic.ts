/**
 * The symbolic effect of the interpreter: every rank's memory holds, per element, which
 * contributions it carries (MSCCLang's checker does the same), so a walk over the plans says
 * what each output element ends up with. Used by the checker (is it the collective's result?)
 * and explain (what does each rank hold after each step?).
 *
 * A contribution is the id rank·stride + index of one input element. A reduction does not copy
 * its operands' contributions: it joins them in a pair, flattened only where a result is
 * compared or shown (copying made long reduction chains quadratic in n). Each join also carries,
 * worked out exactly when it is made from its operands' own, which ranks it holds (as sorted
 * intervals) and at which element index, or that it holds one contribution twice or mixes
 * indices: the checker then compares an output element with the spec in time independent of n
 * (walking every chain made the proof cubic in n).
 */

import type { Layout } from "../specs/types.js";
import { type BufferName, type Region, regionText } from "./dsl.js";
import type { Effects, Order } from "./interpret.js";
import { type Place, type Plan, type PlanOp, placer } from "./plan.js";

interface Join {
  readonly a: Sym;
  readonly b: Sym;
  /** The element index every contribution has, or -1: some contribution is held twice, or indices differ. */
  readonly idx: number;
  /** The ranks held, as sorted disjoint intervals [lo, hi) with no two adjacent: [lo0, hi0, lo1, hi1, ...]. */
  readonly ranks: readonly number[];
}
/** One contribution's id, a join of two cells, or null (never written). */
export type Sym = number | Join | null;
/** The contributions an element holds, flattened; null where nothing was written. */
export type Cell = readonly number[] | null;

export function flatten(cell: Sym): Cell {
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

/** Which ranks a cell holds at one index, or undefined where it holds one twice or mixes indices (or holds nothing). */
export function summary(
  cell: Sym,
  stride: number,
): { readonly idx: number; readonly ranks: readonly number[] } | undefined {
  if (cell === null) return undefined;
  if (typeof cell === "number") {
    const r = Math.floor(cell / stride);
    return { idx: cell - r * stride, ranks: [r, r + 1] };
  }
  return cell.idx < 0 ? undefined : cell;
}

const BAD: readonly number[] = [];

/** The join of two written cells, with its summary: the operands' intervals merged, overlap (a contribution twice) marked. */
export function join(a: Sym, b: Sym, stride: number): Join {
  const x = summary(a, stride);
  const y = summary(b, stride);
  if (!x || !y || x.idx !== y.idx) return { a, b, idx: -1, ranks: BAD };
  const ranks = unionOfDisjoint(x.ranks, y.ranks);
  return ranks ? { a, b, idx: x.idx, ranks } : { a, b, idx: -1, ranks: BAD };
}

/**
 * The union of two sorted lists of half-open rank intervals [lo, hi, lo, hi, ...], adjacent ones
 * merged; undefined where they overlap (a contribution held twice).
 */
export function unionOfDisjoint(p: readonly number[], q: readonly number[]): number[] | undefined {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < p.length || j < q.length) {
    let lo: number;
    let hi: number;
    if (j >= q.length || (i < p.length && (p[i] as number) < (q[j] as number))) {
      lo = p[i] as number;
      hi = p[i + 1] as number;
      i += 2;
    } else {
      lo = q[j] as number;
      hi = q[j + 1] as number;
      j += 2;
    }
    const last = out.length - 1;
    if (last > 0 && lo < (out[last] as number)) return undefined;
    if (last > 0 && lo === out[last]) out[last] = hi;
    else out.push(lo, hi);
  }
  return out;
}

/**
 * A rank's memories 0 (input), 1 (output), 2 (scratch) before its plan runs: the input holds the
 * rank's own contributions, the rest nothing, except where in place the output aliases the input.
 */
export function initialMemory(
  p: { readonly layout: Layout; readonly call: { readonly inPlace: boolean }; readonly scratch: number },
  rank: number,
  stride: number,
): Sym[][] {
  const l = p.layout;
  const a = p.call.inPlace ? l.alias : undefined;
  const input: Sym[] = new Array<Sym>(l.inputCount);
  for (let i = 0, id = rank * stride; i < l.inputCount; i++) input[i] = id + i;
  // In place the output memory holds the input where they alias (memory 1 or memory 0 is shared).
  const output: Sym[] = new Array<Sym>(Math.max(l.outputCount, a?.kind === "same" ? l.inputCount : 0)).fill(null);
  if (a?.kind === "same") for (let i = 0; i < l.inputCount; i++) output[i] = input[i] as Sym;
  if (a?.kind === "input-in-output") for (let i = 0; i < l.inputCount; i++) output[a.offset + i] = input[i] as Sym;
  return [input, output, new Array<Sym>(p.scratch).fill(null)];
}

export interface SymbolicOptions {
  /** Reports a finding about one operation. */
  readonly fail: (rank: number, op: PlanOp, message: string) => void;
  /** Track which ranks each rank has heard from, transitively (the barrier's proof). */
  readonly knowledge?: boolean;
}

/** Every rank's symbolic memory, and the effects that move it. */
export class SymbolicMemory {
  /** Per rank: the arrays of memories 0 (input), 1 (output), 2 (scratch). */
  readonly mem: Sym[][][];
  private readonly place: ((r: Region) => Place)[];
  /** Per rank and operation: the ranks it has heard from when it completes (knowledge only). */
  private readonly heard: (Uint8Array | undefined)[][];
  /** Per rank: everything its completed operations heard (steps order, and the rank's exit). */
  readonly knows: Uint8Array[];

  constructor(
    readonly plans: readonly Plan[],
    readonly stride: number,
    private readonly options: SymbolicOptions,
  ) {
    const n = plans.length;
    this.place = plans.map((p) => placer(p.layout, p.call.inPlace));
    this.mem = plans.map((p, rank) => initialMemory(p, rank, stride));
    this.heard = plans.map((p) => new Array(p.ops.length));
    this.knows = plans.map((_, r) => {
      const k = new Uint8Array(n);
      k[r] = 1;
      return k;
    });
  }

  /** The cells of a region of `rank`, as stored (not flattened). */
  read(rank: number, r: Region): Sym[] {
    const p = (this.place[rank] as (r: Region) => Place)(r);
    return (this.mem[rank] as Sym[][])[p.mem]?.slice(p.from, p.to) ?? [];
  }

  /** What rank `rank` holds in buffer `buf` (the output as its layout sizes it), flattened. */
  view(rank: number, buf: BufferName): Cell[] {
    const plan = this.plans[rank] as Plan;
    const count = buf === "input" ? plan.layout.inputCount : buf === "output" ? plan.layout.outputCount : plan.scratch;
    return this.read(rank, { buf, offset: 0, count }).map(flatten);
  }

  /** The effects to give the interpreter, for one order. */
  effects(order: Order): Effects {
    const { fail } = this.options;
    const heardAt = (rank: number, index: number): Uint8Array | undefined => {
      if (!this.options.knowledge) return undefined;
      const plan = this.plans[rank] as Plan;
      if (order === "steps") return this.knows[rank]?.slice();
      // Dataflow: an operation knows only what the operations it waits for knew.
      const k = new Uint8Array(this.plans.length);
      k[rank] = 1;
      for (const d of (plan.ops[index] as PlanOp).deps) {
        const h = this.heard[rank]?.[d];
        if (h) for (let i = 0; i < k.length; i++) k[i] ||= h[i] as number;
      }
      return k;
    };
    const memOf = (rank: number, k: number, index: number): [Sym[], number] => {
      const places = (this.plans[rank] as Plan).places;
      return [this.mem[rank]?.[places[6 * index + 2 * k] as number] as Sym[], places[6 * index + 2 * k + 1] as number];
    };
    return {
      transfer: (s, r) => {
        const n = s.op.region.count;
        if (n !== r.op.region.count) {
          fail(
            s.rank,
            s.op,
            `sends ${regionText(s.op.region)} (${n} elements) to rank ${r.rank}, which receives ${regionText(r.op.region)} (${r.op.region.count} elements) in step ${r.op.step}`,
          );
        } else {
          const [src, sf] = memOf(s.rank, 0, s.index);
          const [dst, df] = memOf(r.rank, 0, r.index);
          for (let i = 0; i < n; i++) dst[df + i] = src[sf + i] as Sym;
        }
        if (this.options.knowledge) {
          const ks = heardAt(s.rank, s.index) as Uint8Array;
          const kr = heardAt(r.rank, r.index) as Uint8Array;
          for (let i = 0; i < kr.length; i++) kr[i] ||= ks[i] as number;
          (this.heard[s.rank] as (Uint8Array | undefined)[])[s.index] = ks;
          (this.heard[r.rank] as (Uint8Array | undefined)[])[r.index] = kr;
        }
        return undefined;
      },
      local: ({ rank, index, op }) => {
        const n = op.region.count;
        const [dst, df] = memOf(rank, 0, index);
        const [src, sf] = memOf(rank, 1, index);
        if (op.kind === "reduce") {
          const [a, af] = op.with ? memOf(rank, 2, index) : [dst, df];
          // The destination may be an operand: read both before writing.
          const out: Sym[] = new Array(n);
          for (let i = 0; i < n; i++) {
            const x = a[af + i] as Sym;
            const y = src[sf + i] as Sym;
            if (x === null || y === null) {
              fail(rank, op, `reduce ${regionText(op.region)} reads an unwritten element`);
              return undefined;
            }
            out[i] = join(x, y, this.stride);
          }
          for (let i = 0; i < n; i++) dst[df + i] = out[i] as Sym;
        } else if (dst !== src || df < sf) {
          // copy, and scale (which keeps the contributions); backwards where it overlaps forwards.
          for (let i = 0; i < n; i++) dst[df + i] = src[sf + i] as Sym;
        } else for (let i = n - 1; i >= 0; i--) dst[df + i] = src[sf + i] as Sym;
        if (this.options.knowledge) (this.heard[rank] as (Uint8Array | undefined)[])[index] = heardAt(rank, index);
        return undefined;
      },
      done: ({ rank, index }) => {
        const h = this.heard[rank]?.[index];
        const k = this.knows[rank] as Uint8Array;
        if (h) for (let i = 0; i < k.length; i++) k[i] ||= h[i] as number;
      },
    };
  }
}
