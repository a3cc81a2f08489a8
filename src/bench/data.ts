/**
 * Inputs whose results are exact, and the expected results without a second copy of the data
 * (nccl-tests' -c check). Rank r's input element k is T_r[k mod P] for a period P = 1021 (a
 * prime, so no power-of-two chunking aliases it), where T_r holds small integers the op keeps
 * exact in every dtype: sums of |x| ≤ 4, products of ±1 with at most one 2 per element,
 * averages of multiples of n. Every order of reduction then gives the same bits, so a result is
 * wrong exactly when it differs from the oracle — the sequential reduction of the P-long tables
 * (src/collectives/reference.ts), computed once per call shape.
 */
import { reference } from "../collectives/reference.js";
import { type DType, dtypeInfo, fromValues, type TypedArray } from "../core/dtype.js";
import type { ReduceOp } from "../core/op.js";
import { Rng } from "../core/random.js";
import { makeCall, rankCall, specOf } from "../specs/index.js";
import type { BenchCollective } from "./types.js";

export const PERIOD = 1021;
/** Written to outputs before a checked call, so anything the call fails to write counts as wrong. */
export const SENTINEL = 111;

export interface Patterns {
  /** T_r, one per rank, PERIOD elements each in the dtype's storage. */
  readonly inputs: readonly TypedArray[];
  /** The reduction over ranks of T_r, in rank order (reducing collectives only). */
  readonly reduced: TypedArray;
  /** PERIOD copies of SENTINEL. */
  readonly sentinel: TypedArray;
}

function values(dtype: DType, op: ReduceOp, n: number, rank: number, seed: number): number[] {
  const rng = new Rng(seed * 7919 + rank * 104729 + 17);
  const signed = !dtype.startsWith("uint");
  const out: number[] = new Array(PERIOD);
  for (let j = 0; j < PERIOD; j++) {
    switch (op.name) {
      case "prod": {
        // One rank per element may contribute 2, the rest ±1 (1 for unsigned): |product| <= 2.
        const two = j % n === rank && rng.int(2) === 0;
        out[j] = two ? 2 : signed && rng.int(2) === 0 ? -1 : 1;
        break;
      }
      case "avg":
        // Multiples of n: the sum divides exactly.
        out[j] = n * (signed ? rng.int(3) - 1 : rng.int(2));
        break;
      case "min":
      case "max":
        out[j] = signed ? rng.int(61) - 30 : rng.int(61);
        break;
      case "band":
      case "bor":
      case "bxor":
        out[j] = rng.int(61);
        break;
      default:
        out[j] = signed ? rng.int(9) - 4 : rng.int(5);
    }
  }
  return out;
}

/** The per-rank tables and their reduction for one (dtype, op, n). */
export function patterns(dtype: DType, op: ReduceOp, n: number, seed = 1): Patterns {
  const inputs = Array.from({ length: n }, (_, r) => fromValues(dtype, values(dtype, op, n, r, seed)));
  const reduced = reference(
    makeCall({ collective: "allreduce", size: n, count: PERIOD, dtype, op }),
    inputs,
  )[0] as TypedArray;
  const sentinel = fromValues(dtype, new Array(PERIOD).fill(SENTINEL));
  return { inputs, reduced, sentinel };
}

/** dst[i] = table[(start + i) mod P] for every i: a periodic fill, one block copy at a time. */
export function fillPeriodic(dst: TypedArray, table: TypedArray, start = 0): void {
  const len = dst.length;
  if (len === 0) return;
  let phase = start % PERIOD;
  let i = 0;
  // The head up to the next period boundary, then whole periods, then the tail.
  while (i < len) {
    const take = Math.min(PERIOD - phase, len - i);
    dst.set(table.subarray(phase, phase + take) as never, i);
    i += take;
    phase = 0;
  }
}

/** How many of got[i] differ from table[(start + i) mod P]. Raw storage is compared (bits for half types). */
export function countWrong(got: TypedArray, table: TypedArray, start = 0): number {
  const len = got.length;
  let wrong = 0;
  let k = start % PERIOD;
  if (typeof got[0] === "bigint") {
    const g = got as BigInt64Array;
    const t = table as BigInt64Array;
    for (let i = 0; i < len; i++) {
      if (g[i] !== t[k]) wrong++;
      if (++k === PERIOD) k = 0;
    }
    return wrong;
  }
  const g = got as Float64Array;
  const t = table as Float64Array;
  for (let i = 0; i < len; i++) {
    const a = g[i] as number;
    const b = t[k] as number;
    // NaN never equals itself; an exact oracle never produces NaN, so a NaN is wrong.
    if (a !== b) wrong++;
    if (++k === PERIOD) k = 0;
  }
  return wrong;
}

/**
 * The expected contents of one rank's output, as pieces [offset, length, table, start]: output
 * elements offset..offset+length equal table[(start + i) mod P]. Empty where the rank receives
 * nothing (non-roots of reduce and gather).
 */
export interface Expected {
  readonly offset: number;
  readonly length: number;
  readonly table: TypedArray;
  readonly start: number;
}

export function expectedOutput(
  collective: BenchCollective,
  p: Patterns,
  rank: number,
  n: number,
  count: number,
  root: number,
): Expected[] {
  const spec = specOf(collective);
  const c = rankCall(makeCall({ collective, size: n, count, root }), rank);
  return spec
    .result(c, c)
    .map((b) =>
      "reduce" in b
        ? { offset: b.at, length: b.count, table: p.reduced, start: b.reduce }
        : { offset: b.at, length: b.count, table: p.inputs[b.rank] as TypedArray, start: b.index },
    );
}

/** Bytes of one element, for callers that size things in bytes. */
export function elementBytes(dtype: DType): number {
  return dtypeInfo(dtype).bytes;
}
