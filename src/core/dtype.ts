/**
 * Element types, as NCCL's ncclDataType_t and torch's dtypes. Host storage is the matching
 * TypedArray; float16 and bfloat16 are stored as their raw bits in a Uint16Array, with
 * conversion helpers below.
 */
import { InvalidArgumentError } from "./errors.js";

export const DTYPES = [
  "int8",
  "uint8",
  "int32",
  "uint32",
  "int64",
  "uint64",
  "float16",
  "bfloat16",
  "float32",
  "float64",
] as const;
export type DType = (typeof DTYPES)[number];

export type TypedArray =
  | Int8Array
  | Uint8Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | Uint16Array
  | Float32Array
  | Float64Array;

type ArrayCtor = { new (n: number): TypedArray; BYTES_PER_ELEMENT: number };

export interface DTypeInfo {
  readonly name: DType;
  readonly bytes: number;
  readonly kind: "int" | "float";
  /** Stored in a BigInt64Array/BigUint64Array; elements are bigint. */
  readonly bigint: boolean;
  /** Stored as raw 16-bit patterns (float16, bfloat16). */
  readonly half: boolean;
  readonly array: ArrayCtor;
}

const info = (name: DType, array: ArrayCtor, kind: "int" | "float"): DTypeInfo => ({
  name,
  bytes: array.BYTES_PER_ELEMENT,
  kind,
  bigint: name === "int64" || name === "uint64",
  half: name === "float16" || name === "bfloat16",
  array,
});

const INFO: Record<DType, DTypeInfo> = {
  int8: info("int8", Int8Array, "int"),
  uint8: info("uint8", Uint8Array, "int"),
  int32: info("int32", Int32Array, "int"),
  uint32: info("uint32", Uint32Array, "int"),
  int64: info("int64", BigInt64Array, "int"),
  uint64: info("uint64", BigUint64Array, "int"),
  float16: info("float16", Uint16Array, "float"),
  bfloat16: info("bfloat16", Uint16Array, "float"),
  float32: info("float32", Float32Array, "float"),
  float64: info("float64", Float64Array, "float"),
};

export function isDType(x: unknown): x is DType {
  return typeof x === "string" && (DTYPES as readonly string[]).includes(x);
}

export function dtypeInfo(dtype: DType): DTypeInfo {
  return INFO[dtype];
}

/** Validates a dtype given at the public boundary. */
export function parseDType(x: unknown, site: { rank?: number; op: string; arg?: string }): DType {
  if (isDType(x)) return x;
  throw new InvalidArgumentError(
    { ...site, arg: site.arg ?? "dtype" },
    `unknown dtype ${JSON.stringify(x)}; expected one of ${DTYPES.join(", ")}`,
  );
}

/**
 * The canonical NaN of each floating-point dtype (docs/semantics.md F2): every NaN an arithmetic
 * operation produces has these bits. CUDA's own for float16 and bfloat16 (CUDART_NAN_FP16/BF16,
 * what __float2half_rn and __float2bfloat16 make of any NaN) and float32 (CUDART_NAN_F, what
 * every single-precision instruction returns); the same all-ones pattern for float64.
 */
export const CANONICAL_NAN_BITS = {
  float16: 0x7fff,
  bfloat16: 0x7fff,
  float32: 0x7fffffff,
  float64: 0x7fffffffffffffffn,
} as const;

/** The platform's byte order: typed arrays use it, so the canonical NaN writers below need it. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Stores the canonical NaN (F2) at element i of a float32 or float64 array. Through an integer
 * view of the same bytes: a JS NaN stored into a Float32Array/Float64Array may keep any payload.
 * Returns the view it made, so a loop that meets many NaNs makes one (pass it back as `words`).
 */
export function storeCanonicalNaN(arr: Float32Array | Float64Array, i: number, words?: Uint32Array): Uint32Array {
  const w = words ?? new Uint32Array(arr.buffer, arr.byteOffset, arr.length * (arr.BYTES_PER_ELEMENT / 4));
  if (arr.BYTES_PER_ELEMENT === 4) w[i] = CANONICAL_NAN_BITS.float32;
  else {
    w[2 * i + (LITTLE_ENDIAN ? 0 : 1)] = 0xffffffff;
    w[2 * i + (LITTLE_ENDIAN ? 1 : 0)] = 0x7fffffff;
  }
  return w;
}

/** Unsigned integer view of the same bytes (the element's raw bits, whatever the dtype). */
function bitsView(dtype: DType, arr: TypedArray): Uint8Array | Uint16Array | Uint32Array | BigUint64Array {
  const n = arr.length;
  switch (INFO[dtype].bytes) {
    case 1:
      return new Uint8Array(arr.buffer, arr.byteOffset, n);
    case 2:
      return new Uint16Array(arr.buffer, arr.byteOffset, n);
    case 4:
      return new Uint32Array(arr.buffer, arr.byteOffset, n);
    default:
      return new BigUint64Array(arr.buffer, arr.byteOffset, n);
  }
}

/** The raw bits of element i (any dtype), as an unsigned bigint: what the tests compare. */
export function elementBits(dtype: DType, arr: TypedArray, i: number): bigint {
  return BigInt(bitsView(dtype, arr)[i] as number | bigint);
}

/** Sets element i to the raw bits `bits` (a NaN payload, a signaling NaN, -0: anything). */
export function setElementBits(dtype: DType, arr: TypedArray, i: number, bits: bigint): void {
  const v = bitsView(dtype, arr);
  if (v instanceof BigUint64Array) v[i] = BigInt.asUintN(64, bits);
  else v[i] = Number(BigInt.asUintN(INFO[dtype].bytes * 8, bits));
}

// ---- float16 / bfloat16 <-> float32, round to nearest even (as CUDA's __float2half_rn) ----

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function float32ToFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return mant ? CANONICAL_NAN_BITS.float16 : sign | 0x7c00; // nan (semantics.md F2) / inf
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> inf
  if (e <= 0) {
    if (e < -10) return sign; // underflow -> signed zero
    mant |= 0x800000; // subnormal: add the implicit bit, shift into place, round
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = mant & ((1 << shift) - 1);
    let r = mant >>> shift;
    if (rest > half || (rest === half && r & 1)) r++;
    return sign | r;
  }
  const rest = mant & 0x1fff;
  mant >>>= 13;
  if (rest > 0x1000 || (rest === 0x1000 && mant & 1)) {
    mant++;
    if (mant === 0x400) {
      mant = 0;
      e++;
      if (e >= 0x1f) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | mant;
}

export function float16BitsToFloat32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

export function float32ToBFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) return CANONICAL_NAN_BITS.bfloat16; // semantics.md F2
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

export function bfloat16BitsToFloat32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0] as number;
}

/** Reads element i as a JS number (bigint for 64-bit integers), decoding half types. */
export function getElement(dtype: DType, arr: TypedArray, i: number): number | bigint {
  const v = arr[i] as number | bigint;
  if (dtype === "float16") return float16BitsToFloat32(v as number);
  if (dtype === "bfloat16") return bfloat16BitsToFloat32(v as number);
  return v;
}

/** Writes element i from a JS number (or bigint), encoding half types and wrapping 64-bit integers. */
export function setElement(dtype: DType, arr: TypedArray, i: number, value: number | bigint): void {
  if (dtype === "float16") (arr as Uint16Array)[i] = float32ToFloat16Bits(Number(value));
  else if (dtype === "bfloat16") (arr as Uint16Array)[i] = float32ToBFloat16Bits(Number(value));
  else if (dtype === "int64") (arr as BigInt64Array)[i] = BigInt.asIntN(64, BigInt(value));
  else if (dtype === "uint64") (arr as BigUint64Array)[i] = BigInt.asUintN(64, BigInt(value));
  else (arr as Float64Array)[i] = Number(value);
}

/** A host array of `dtype` holding `values` (numbers or bigints), encoded as the dtype stores them. */
export function fromValues(dtype: DType, values: ArrayLike<number | bigint>): TypedArray {
  const arr = new (dtypeInfo(dtype).array)(values.length);
  for (let i = 0; i < values.length; i++) setElement(dtype, arr, i, values[i] as number | bigint);
  return arr;
}

/** The elements of a host array as plain JS numbers (bigints for 64-bit integers). */
export function toValues(dtype: DType, arr: TypedArray, offset = 0, count = arr.length - offset): (number | bigint)[] {
  const out: (number | bigint)[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = getElement(dtype, arr, offset + i);
  return out;
}
