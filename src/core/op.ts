/**
 * Reduction operators, as NCCL's ncclRedOp_t and torch's ReduceOp: sum, prod, min, max, avg,
 * the bitwise band/bor/bxor (integers only), and premulsum(scalar) (each input is multiplied
 * by the scalar before summing, ncclRedOpCreatePreMulSum).
 *
 * avg and premulsum are sums with a scaling step; algorithms only ever see sum for them and
 * the executor scales (see executor.ts), so no schedule needs to know about them.
 */
import { type DType, dtypeInfo, getElement, setElement, type TypedArray } from "./dtype.js";
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

/** Throws where the op does not fit the dtype (bitwise ops on floating-point types). */
export function checkOpFitsDType(op: ReduceOp, dtype: DType, site: ErrorSite): void {
  if ((op.name === "band" || op.name === "bor" || op.name === "bxor") && dtypeInfo(dtype).kind === "float") {
    throw new InvalidArgumentError(
      { ...site, arg: site.arg ?? "op" },
      `reduce op '${op.name}' is bitwise and does not apply to floating-point dtype ${dtype}`,
    );
  }
}

/** The binary operator that combines two elements (avg and premulsum combine as sum). */
export type Combine = "sum" | "prod" | "min" | "max" | "band" | "bor" | "bxor";

export function combineOf(op: ReduceOp): Combine {
  return op.name === "avg" || op.name === "premulsum" ? "sum" : op.name;
}

type Num = (a: number, b: number) => number;
const NUMBER_FNS: Record<Combine, Num> = {
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
 * every backend falls back to and the native one must agree with. Integer arithmetic wraps as in
 * C; half types are combined in float32 and rounded back per element, as NCCL's kernels do.
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
  if (inf.half) {
    const f = NUMBER_FNS[combine];
    for (let i = 0; i < count; i++) {
      const a = getElement(dtype, dst, dOff + i) as number;
      const b = getElement(dtype, src, sOff + i) as number;
      setElement(dtype, dst, dOff + i, f(a, b));
    }
    return;
  }
  const d = dst as Float64Array;
  const s = src as Float64Array;
  if (combine === "prod" && (dtype === "int32" || dtype === "uint32")) {
    // a * b in doubles loses the low bits past 2^53; Math.imul wraps exactly as C does.
    for (let i = 0; i < count; i++) d[dOff + i] = Math.imul(d[dOff + i] as number, s[sOff + i] as number);
    return;
  }
  const f = NUMBER_FNS[combine];
  // Assigning into an integer TypedArray wraps modulo 2^bits, as C's unsigned (and two's complement) arithmetic.
  for (let i = 0; i < count; i++) d[dOff + i] = f(d[dOff + i] as number, s[sOff + i] as number);
}

/**
 * dst[dOff..] = src[sOff..] * mul / div, for `count` elements: premulsum's pre-scaling (mul = scalar)
 * and avg's final division (div = size). Integers truncate toward zero, as NCCL's integer avg.
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
  if (inf.bigint) {
    const m = BigInt(Math.trunc(mul));
    const dv = BigInt(div);
    for (let i = 0; i < count; i++) {
      setElement(dtype, dst, dOff + i, ((src[sOff + i] as bigint) * m) / dv);
    }
    return;
  }
  for (let i = 0; i < count; i++) {
    const v = getElement(dtype, src, sOff + i) as number;
    const r = (v * mul) / div;
    setElement(dtype, dst, dOff + i, inf.kind === "int" ? Math.trunc(r) : r);
  }
}
