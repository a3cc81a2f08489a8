/**
 * Input values for the property and differential tests, and the byte comparison that judges
 * their outputs (docs/semantics.md, "Testing it exactly").
 *
 * Every dtype gets its special values: NaNs with payloads, signaling and negative ones, ±0, ±Inf,
 * subnormals, the extremes, arbitrary bit patterns. Outputs are compared with the sequential
 * oracle byte for byte, so the inputs must be ones for which every order of reduction gives the
 * same bits (an algorithm may legitimately add in another order than the oracle's 0..n-1):
 *
 * - data movement: any bits at all;
 * - integers, every op: any bits (wrapping arithmetic, min, max and the bitwise ops are
 *   associative and commutative, I1-I3);
 * - float min/max: any bits (F3 makes them associative and commutative, NaN and -0 included);
 * - float sum, avg, premulsum: per element (a column across ranks) either small integers with
 *   ±0 (exact in every order, kept only where the pre-multiplier is a power of two), or at most
 *   two arbitrary finite values (one where an infinity is present) among ±0, ±Inf and NaNs: a
 *   NaN anywhere gives the canonical NaN, two finite terms commute, and zeros add exactly;
 * - float prod: small factors 1, 2, -1, or at most two arbitrary values among ±1 and NaNs.
 *
 * A column's plan is drawn from (valueSeed, element) and each rank's value from (valueSeed,
 * element, rank), so every rank builds its own input and anyone can rebuild every rank's (the
 * oracle in a multi-process test needs all of them).
 */
import {
  type DType,
  dtypeInfo,
  elementBits,
  getElement,
  setElement,
  setElementBits,
  type TypedArray,
} from "../core/dtype.js";
import { elementScalar, type ReduceOp, sumScaling } from "../core/op.js";
import { Rng } from "../core/random.js";

export interface ValueSpec {
  readonly dtype: DType;
  readonly op: ReduceOp;
  /** Ranks taking part (sizes the pre-multiplier of float avg). */
  readonly size: number;
  readonly valueSeed: number;
  /** A reducing collective: columns across ranks must stay exact in every order. */
  readonly reducing: boolean;
}

/** Float formats: total bits, exponent bits. */
const FORMAT: Partial<Record<DType, { bits: number; exp: number }>> = {
  float16: { bits: 16, exp: 5 },
  bfloat16: { bits: 16, exp: 8 },
  float32: { bits: 32, exp: 8 },
  float64: { bits: 64, exp: 11 },
};

const mix = (a: number, b: number, c: number): number => {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x27d4eb2f) ^ Math.imul(c + 0x165667b1, 0x85ebca77);
  return (h ^ (h >>> 13)) >>> 0;
};

/** A uniformly random bigint of `bits` bits. */
function randomBits(rng: Rng, bits: number): bigint {
  let x = 0n;
  for (let b = 0; b < bits; b += 16) x = (x << 16n) | BigInt(rng.int(0x10000));
  return BigInt.asUintN(bits, x);
}

/** Bits of a float value class of `dtype` (format f): NaN, infinity, zero, subnormal, finite. */
function floatBits(rng: Rng, f: { bits: number; exp: number }, kind: "nan" | "inf" | "zero" | "finite"): bigint {
  const mant = f.bits - 1 - f.exp;
  const sign = rng.int(2) === 1 ? 1n << BigInt(f.bits - 1) : 0n;
  const expAll = ((1n << BigInt(f.exp)) - 1n) << BigInt(mant);
  const mantMask = (1n << BigInt(mant)) - 1n;
  const quiet = 1n << BigInt(mant - 1);
  switch (kind) {
    case "zero":
      return sign;
    case "inf":
      return sign | expAll;
    case "nan": {
      // quiet or signaling, any payload, either sign (the canonical one now and then)
      if (rng.int(6) === 0)
        return rng.int(2) ? 0x7fffffffffffffffn & ((1n << BigInt(f.bits - 1)) - 1n) : sign | expAll | quiet;
      const payload = randomBits(rng, mant) & mantMask;
      const m = rng.int(2) ? payload | quiet : (payload & ~quiet) | 1n;
      return sign | expAll | m;
    }
    case "finite": {
      const pick = rng.int(8);
      if (pick === 0) return sign | 1n; // least subnormal
      if (pick === 1) return sign | mantMask; // greatest subnormal
      if (pick === 2) return sign | (randomBits(rng, mant) & mantMask) | 1n; // some subnormal
      if (pick === 3) return sign | (1n << BigInt(mant)); // least normal
      if (pick === 4) return sign | (expAll - (1n << BigInt(mant))) | mantMask; // greatest finite
      // any finite: a random exponent short of all ones
      const e = BigInt(rng.int((1 << f.exp) - 1)) << BigInt(mant);
      return sign | e | (randomBits(rng, mant) & mantMask);
    }
  }
}

/** Integer bits: extremes and small values often, any pattern otherwise. */
function intBits(rng: Rng, bits: number): bigint {
  const pick = rng.int(8);
  const top = 1n << BigInt(bits - 1);
  if (pick === 0) return top - 1n; // greatest signed
  if (pick === 1) return top; // least signed, 2^(bits-1) unsigned
  if (pick === 2) return BigInt.asUintN(bits, -1n); // -1, greatest unsigned
  if (pick === 3) return BigInt.asUintN(bits, BigInt(rng.int(9) - 4));
  return randomBits(rng, bits);
}

/** Whether x is ±2^k (multiplying by it is exact short of overflow and underflow). */
const powerOfTwo = (x: number): boolean =>
  x !== 0 && Number.isFinite(x) && 2 ** Math.round(Math.log2(Math.abs(x))) === Math.abs(x);

/**
 * Rank `rank`'s `len` input elements (any dtype, raw bits where it matters), built from the
 * spec alone: see the file header for which values each op and dtype gets and why.
 */
export function caseInput(spec: ValueSpec, rank: number, len: number): TypedArray {
  const { dtype, op, size } = spec;
  const inf = dtypeInfo(dtype);
  const arr = new inf.array(len);
  const f = FORMAT[dtype];
  const bits = inf.bytes * 8;
  for (let i = 0; i < len; i++) {
    const own = new Rng(mix(spec.valueSeed, i, rank + 1));
    if (!f) {
      setElementBits(dtype, arr, i, intBits(own, bits));
      continue;
    }
    if (!spec.reducing || op.name === "min" || op.name === "max") {
      const k = own.int(10);
      const kind = k < 2 ? "nan" : k < 3 ? "inf" : k < 5 ? "zero" : "finite";
      setElementBits(dtype, arr, i, floatBits(own, f, kind));
      continue;
    }
    const plan = new Rng(mix(spec.valueSeed, i, 0));
    const nanRate = plan.int(3) === 0 ? 0.3 : 0;
    if (op.name === "prod") {
      const a = plan.int(size);
      const b = plan.int(size);
      if (plan.int(2) === 0) setElement(dtype, arr, i, [1, 2, -1][own.int(3)] ?? 1);
      else if (rank === a || rank === b) {
        const k = own.int(8);
        setElementBits(dtype, arr, i, floatBits(own, f, k < 1 ? "nan" : k < 2 ? "inf" : k < 3 ? "zero" : "finite"));
      } else if (own.next() < nanRate) setElementBits(dtype, arr, i, floatBits(own, f, "nan"));
      else setElement(dtype, arr, i, own.int(2) ? 1 : -1);
      continue;
    }
    // sum, avg, premulsum: small integers only where pre-multiplying keeps them exact
    const { premul } = sumScaling(op, dtype, size);
    const exactInts = premul === undefined || powerOfTwo(elementScalar(dtype, premul) as number);
    if (exactInts && plan.int(2) === 0) {
      const v = own.int(9) - 4;
      setElement(dtype, arr, i, v === 0 && own.int(2) ? -0 : v);
      continue;
    }
    const withInf = plan.int(2) === 0;
    const a = plan.int(size);
    const b = withInf ? a : plan.int(size);
    if (rank === a || rank === b) setElementBits(dtype, arr, i, floatBits(own, f, "finite"));
    else if (own.next() < nanRate) setElementBits(dtype, arr, i, floatBits(own, f, "nan"));
    else if (withInf && own.int(3) === 0) setElementBits(dtype, arr, i, floatBits(own, f, "inf"));
    else setElementBits(dtype, arr, i, floatBits(own, f, "zero"));
  }
  return arr;
}

/**
 * premulsum scalars the tests use for `dtype` (P1): a power of two, a fraction (integers
 * truncate it), a negative one where the type has negatives.
 */
export function premulScalars(dtype: DType): number[] {
  return dtype.startsWith("uint") ? [2, 2.5, 3] : [2, 2.5, -1, 0.5];
}

/** Element i as hex bits and value, for messages: 0x7fc00001 (NaN). */
export function showElement(dtype: DType, arr: TypedArray, i: number): string {
  if (i >= arr.length) return "nothing";
  const hex = `0x${elementBits(dtype, arr, i)
    .toString(16)
    .padStart(dtypeInfo(dtype).bytes * 2, "0")}`;
  const v = getElement(dtype, arr, i);
  return `${hex} (${Object.is(v, -0) ? "-0" : String(v)})`;
}

/** The index of the first element whose bytes differ (or the shorter length), -1 if identical. */
export function firstDifference(dtype: DType, got: TypedArray, want: TypedArray): number {
  const n = Math.min(got.length, want.length);
  for (let i = 0; i < n; i++) if (elementBits(dtype, got, i) !== elementBits(dtype, want, i)) return i;
  return got.length === want.length ? -1 : n;
}

/** "output[3] = 0x7fc00001 (NaN), want 0x7fffffff (NaN)" for the first difference, or undefined. */
export function describeDifference(
  dtype: DType,
  got: TypedArray,
  want: TypedArray,
  what = "output",
  wantName = "want",
): string | undefined {
  const i = firstDifference(dtype, got, want);
  if (i < 0) return undefined;
  const len = got.length === want.length ? "" : ` (${got.length} elements, ${wantName} ${want.length})`;
  return `${what}[${i}] = ${showElement(dtype, got, i)}, ${wantName} ${showElement(dtype, want, i)}${len}`;
}
