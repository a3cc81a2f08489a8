/**
 * Reduction operators, as NCCL's ncclRedOp_t and torch's ReduceOp: sum, prod, min, max, avg,
 * the bitwise band/bor/bxor (integers only), and premulsum(scalar) (each input is multiplied
 * by the scalar before summing, ncclRedOpCreatePreMulSum), with the element arithmetic every
 * backend must reproduce bit for bit. docs/semantics.md defines it, rule by rule (the rule
 * names in comments here are its).
 *
 * avg and premulsum are sums with a scaling step (sumScaling); algorithms only ever see sum
 * for them and the executor scales (see executor.ts), so no schedule needs to know about them.
 */
import {
  bfloat16BitsToFloat32,
  type DType,
  dtypeInfo,
  float16BitsToFloat32,
  float32ToBFloat16Bits,
  float32ToFloat16Bits,
  getElement,
  setElement,
  storeCanonicalNaN,
  type TypedArray,
} from "./dtype.js";
import { type ErrorSite, InvalidArgumentError } from "./errors.js";

export const OP_NAMES = ["sum", "prod", "min", "max", "avg", "band", "bor", "bxor", "premulsum"] as const;
export type OpName = (typeof OP_NAMES)[number];

export interface ReduceOp {
  readonly name: OpName;
  /** premulsum's scalar. */
  readonly scalar?: number;
}

export const ReduceOp = {
  SUM: { name: "sum" } as ReduceOp,
  PROD: { name: "prod" } as ReduceOp,
  MIN: { name: "min" } as ReduceOp,
  MAX: { name: "max" } as ReduceOp,
  AVG: { name: "avg" } as ReduceOp,
  BAND: { name: "band" } as ReduceOp,
  BOR: { name: "bor" } as ReduceOp,
  BXOR: { name: "bxor" } as ReduceOp,
  premulsum: (scalar: number): ReduceOp => ({ name: "premulsum", scalar }),
} as const;

/** Accepts 'sum', 'premulsum(0.5)' or a ReduceOp; the argument is validated with an exact message. */
export function parseOp(x: unknown, site: ErrorSite): ReduceOp {
  const s: ErrorSite = { ...site, arg: site.arg ?? "op" };
  if (typeof x === "string") {
    const m = /^premulsum\((.+)\)$/.exec(x);
    if (m) return checkScalar({ name: "premulsum", scalar: Number(m[1]) }, s);
    if ((OP_NAMES as readonly string[]).includes(x) && x !== "premulsum") return { name: x as OpName };
  } else if (typeof x === "object" && x !== null && "name" in x) {
    const op = x as ReduceOp;
    if ((OP_NAMES as readonly string[]).includes(op.name)) return op.name === "premulsum" ? checkScalar(op, s) : op;
  }
  throw new InvalidArgumentError(
    s,
    `unknown reduce op ${JSON.stringify(x)}; expected one of sum, prod, min, max, avg, band, bor, bxor, premulsum(<scalar>)`,
  );
}

function checkScalar(op: ReduceOp, site: ErrorSite): ReduceOp {
  if (typeof op.scalar !== "number" || !Number.isFinite(op.scalar)) {
    throw new InvalidArgumentError(site, `premulsum needs a finite scalar, got ${String(op.scalar)}`);
  }
  return op;
}

export function opLabel(op: ReduceOp): string {
  return op.name === "premulsum" ? `premulsum(${op.scalar})` : op.name;
}

/** [least, one past the greatest] value of each integer dtype (premulsum's scalar must fit, P1). */
const INT_RANGE: Partial<Record<DType, readonly [number, number]>> = {
  int8: [-128, 128],
  uint8: [0, 256],
  int32: [-(2 ** 31), 2 ** 31],
  uint32: [0, 2 ** 32],
  int64: [-(2 ** 63), 2 ** 63],
  uint64: [0, 2 ** 64],
};

/** The site of an op error, made only where there is one (checkOpFitsDType runs on every reducing call). */
function opSite(site: ErrorSite): ErrorSite {
  return { ...site, arg: site.arg ?? "op" };
}

/**
 * Throws where the op does not fit the dtype: bitwise ops on floating-point types, and a
 * premulsum scalar that the element type cannot hold (P1: NCCL takes the scalar in the element
 * type; out of its range there is no such scalar).
 */
export function checkOpFitsDType(op: ReduceOp, dtype: DType, site: ErrorSite): void {
  const inf = dtypeInfo(dtype);
  if ((op.name === "band" || op.name === "bor" || op.name === "bxor") && inf.kind === "float") {
    throw new InvalidArgumentError(
      opSite(site),
      `reduce op '${op.name}' is bitwise and does not apply to floating-point dtype ${dtype}`,
    );
  }
  if (op.name !== "premulsum") return;
  const x = op.scalar ?? 1;
  const range = INT_RANGE[dtype];
  if (range ? !(Math.trunc(x) >= range[0] && Math.trunc(x) < range[1]) : !Number.isFinite(elementScalar(dtype, x))) {
    const what = range ? `in ${range[0]}..${BigInt(range[1]) - 1n} after truncation toward zero` : "finite";
    throw new InvalidArgumentError(
      opSite(site),
      `premulsum's scalar ${x} does not fit ${dtype} (it must be ${what}): the scalar is taken in the element type, as NCCL's is`,
    );
  }
}

/** The binary operator that combines two elements (avg and premulsum combine as sum). */
export type Combine = "sum" | "prod" | "min" | "max" | "band" | "bor" | "bxor";

export function combineOf(op: ReduceOp): Combine {
  return op.name === "avg" || op.name === "premulsum" ? "sum" : op.name;
}

/**
 * How a sum-based op scales around its sum for `dtype` on `size` ranks: `premul` multiplies
 * each rank's contribution before it is combined (premulsum's scalar, P2; float avg's 1/size,
 * A2), `postdiv` divides the finished sum (integer avg, A1). Undefined where none applies. The
 * executor, the oracle and the built-in wrappers all scale through this one definition.
 */
export function sumScaling(op: ReduceOp, dtype: DType, size: number): { premul?: number; postdiv?: number } {
  if (op.name === "premulsum") return { premul: op.scalar ?? 1 };
  if (op.name !== "avg") return {};
  return dtypeInfo(dtype).kind === "float" ? { premul: 1 / size } : { postdiv: size };
}

/**
 * The number x taken in `dtype`'s element type, as a scalar argument is (P1): integers truncate
 * toward zero and wrap to the type's width; float32 rounds to nearest even; float16 and
 * bfloat16 go through float32 first, as NCCL's __float2half(float(1.0 / nRanks)) and torch's
 * c10::Half(float) do. A bigint for the 64-bit integer types.
 */
export function elementScalar(dtype: DType, x: number): number | bigint {
  switch (dtype) {
    case "int64":
      return BigInt.asIntN(64, BigInt(Math.trunc(x)));
    case "uint64":
      return BigInt.asUintN(64, BigInt(Math.trunc(x)));
    case "float16":
      return float16BitsToFloat32(float32ToFloat16Bits(x));
    case "bfloat16":
      return bfloat16BitsToFloat32(float32ToBFloat16Bits(x));
    case "float32":
      return Math.fround(x);
    case "float64":
      return x;
    default: {
      const one = new (dtypeInfo(dtype).array)(1) as Float64Array;
      one[0] = Number.isFinite(x) ? Math.trunc(x) : 0; // ToInt8/ToUint8/ToInt32/ToUint32: modulo 2^bits
      return one[0] as number;
    }
  }
}

type Num = (a: number, b: number) => number;

/**
 * Floating-point element operations (F1-F4), on values already decoded to JS numbers. A NaN
 * result is left as some NaN here; the caller stores it as the canonical NaN (F2). min and max
 * ignore a NaN operand and order -0 below +0 (F3: fminf/fmaxf and CUDA's min.f32, __hmin), so
 * each is commutative and associative bit for bit.
 */
const FLOAT_FNS: Record<"sum" | "prod" | "min" | "max", Num> = {
  sum: (a, b) => a + b,
  prod: (a, b) => a * b,
  // biome-ignore lint/suspicious/noSelfCompare: x !== x is the NaN test
  min: (a, b) => (a !== a ? b : b !== b ? a : a < b ? a : b < a ? b : 1 / a < 0 ? a : b),
  // biome-ignore lint/suspicious/noSelfCompare: x !== x is the NaN test
  max: (a, b) => (a !== a ? b : b !== b ? a : a > b ? a : b > a ? b : 1 / a < 0 ? b : a),
};

/** Integer element operations (I1-I3) on numbers; the store into the integer array wraps. */
const INT_FNS: Record<Combine, Num> = {
  sum: (a, b) => a + b,
  prod: (a, b) => a * b,
  min: (a, b) => (b < a ? b : a),
  max: (a, b) => (b > a ? b : a),
  band: (a, b) => a & b,
  bor: (a, b) => a | b,
  bxor: (a, b) => a ^ b,
};
type Big = (a: bigint, b: bigint) => bigint;
const BIGINT_FNS: Record<Combine, Big> = {
  sum: (a, b) => a + b,
  prod: (a, b) => a * b,
  min: (a, b) => (b < a ? b : a),
  max: (a, b) => (b > a ? b : a),
  band: (a, b) => a & b,
  bor: (a, b) => a | b,
  bxor: (a, b) => a ^ b,
};

/**
 * dst[dOff..] = dst[dOff..] (op) src[sOff..], for `count` elements: the TypeScript reduction that
 * every backend falls back to and the native ones (native/ops.h) must agree with bit for bit.
 * Integers wrap (I1); floats round once to the element type, float16/bfloat16 computed in
 * float32 and rounded back (F1); every NaN result is the canonical NaN (F2).
 */
export function reduceArrays(
  dtype: DType,
  combine: Combine,
  dst: TypedArray,
  dOff: number,
  src: TypedArray,
  sOff: number,
  count: number,
): void {
  const inf = dtypeInfo(dtype);
  if (inf.bigint) {
    const f = BIGINT_FNS[combine];
    const d = dst as BigInt64Array;
    const s = src as BigInt64Array;
    for (let i = 0; i < count; i++) setElement(dtype, d, dOff + i, f(d[dOff + i] as bigint, s[sOff + i] as bigint));
    return;
  }
  const d = dst as Float64Array;
  const s = src as Float64Array;
  if (inf.kind === "int") {
    if (combine === "prod" && (dtype === "int32" || dtype === "uint32")) {
      // a * b in doubles loses the low bits past 2^53; Math.imul wraps exactly as C does.
      for (let i = 0; i < count; i++) d[dOff + i] = Math.imul(d[dOff + i] as number, s[sOff + i] as number);
      return;
    }
    const f = INT_FNS[combine];
    // Assigning into an integer TypedArray wraps modulo 2^bits, as C's unsigned (and two's complement) arithmetic.
    for (let i = 0; i < count; i++) d[dOff + i] = f(d[dOff + i] as number, s[sOff + i] as number);
    return;
  }
  const f = FLOAT_FNS[combine as keyof typeof FLOAT_FNS];
  if (inf.half) {
    // Encoding rounds to nearest even and turns any NaN into the canonical one.
    for (let i = 0; i < count; i++) {
      setElement(
        dtype,
        dst,
        dOff + i,
        f(getElement(dtype, dst, dOff + i) as number, getElement(dtype, src, sOff + i) as number),
      );
    }
    return;
  }
  // float32 is computed in double and rounded on the store: correctly rounded (53 >= 2*24+2).
  let words: Uint32Array | undefined;
  for (let i = 0; i < count; i++) {
    const r = f(d[dOff + i] as number, s[sOff + i] as number);
    // biome-ignore lint/suspicious/noSelfCompare: x === x is false only for NaN
    if (r === r) d[dOff + i] = r;
    else words = storeCanonicalNaN(d, dOff + i, words);
  }
}

/**
 * dst[dOff..] = (src[sOff..] * mul) / div, for `count` elements: premulsum's and float avg's
 * multiplication (div = 1) and integer avg's division (mul = 1). mul is first taken in the
 * element type (elementScalar, P1); then each element is multiplied in the element type
 * (integers wrap, floats round once, NaN canonical) and, where div != 1, divided by it
 * (integers truncate toward zero, A1; floats round once).
 */
export function scaleArrays(
  dtype: DType,
  dst: TypedArray,
  dOff: number,
  src: TypedArray,
  sOff: number,
  count: number,
  mul: number,
  div: number,
): void {
  const inf = dtypeInfo(dtype);
  const m = elementScalar(dtype, mul);
  if (inf.bigint) {
    const mb = m as bigint;
    const dv = BigInt(div);
    const wrap = dtype === "int64" ? BigInt.asIntN : BigInt.asUintN;
    for (let i = 0; i < count; i++) {
      const p = wrap(64, (src[sOff + i] as bigint) * mb);
      setElement(dtype, dst, dOff + i, div === 1 ? p : p / dv);
    }
    return;
  }
  const d = dst as Float64Array;
  const s = src as Float64Array;
  const mn = m as number;
  if (inf.kind === "int") {
    // The product wrapped to the element type, read back signed or unsigned as the type is.
    const bits = inf.bytes * 8;
    const signed = !dtype.startsWith("uint");
    const wrapped = (p: number): number =>
      bits === 32 ? (signed ? p : p >>> 0) : signed ? (p << (32 - bits)) >> (32 - bits) : p & ((1 << bits) - 1);
    for (let i = 0; i < count; i++) {
      const x = s[sOff + i] as number;
      const p = wrapped(bits === 32 ? Math.imul(x, mn) : x * mn);
      d[dOff + i] = div === 1 ? p : Math.trunc(p / div);
    }
    return;
  }
  if (inf.half) {
    for (let i = 0; i < count; i++) {
      let r = (getElement(dtype, src, sOff + i) as number) * mn;
      if (div !== 1) {
        setElement(dtype, dst, dOff + i, r);
        r = (getElement(dtype, dst, dOff + i) as number) / div;
      }
      setElement(dtype, dst, dOff + i, r);
    }
    return;
  }
  const round = dtype === "float32" ? Math.fround : (x: number) => x;
  let words: Uint32Array | undefined;
  for (let i = 0; i < count; i++) {
    let r = (s[sOff + i] as number) * mn;
    if (div !== 1) r = round(r) / div;
    // biome-ignore lint/suspicious/noSelfCompare: x === x is false only for NaN
    if (r === r) d[dOff + i] = r;
    else words = storeCanonicalNaN(d, dOff + i, words);
  }
}
