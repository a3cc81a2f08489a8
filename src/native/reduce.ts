/**
 * Host-buffer reductions for backends: native (native/reduce.cc, vectorised) where the addon is
 * loaded, src/core/op.ts otherwise. Both compute docs/semantics.md, bit for bit.
 */
import { type DType, dtypeInfo, type TypedArray } from "../core/dtype.js";
import { type Combine, reduceArrays, scaleArrays } from "../core/op.js";
import { native } from "./load.js";

/**
 * Whether the addon's kernel beats the TypeScript loop for `count` elements of `dtype`. A call
 * into C++ costs ~0.35 – 0.4 µs whatever the count; the loop, per element, ~2.8 ns for float32,
 * ~7 ns for float16 (through its encoder), ~8 – 13 ns for 64-bit integers (BigInt): the native
 * kernel wins from ~128 elements for float32, ~80 for float16, ~45 for 64-bit integers (sums
 * timed at 1 – 256 elements, node 20 on the development VM, 2026-11-23). The threshold is 48
 * elements for 64-bit integers and 128 for every other dtype (float16 included: one threshold
 * for the non-BigInt dtypes).
 */
function useNative(dtype: DType, count: number): boolean {
  return count >= (dtypeInfo(dtype).bigint ? 48 : 128);
}

/**
 * dst[dOff..] = dst (combine) src[sOff..] for count elements; with `a`, dst = a[aOff..] (combine)
 * src (NCCL's reduceCopy: no copy of a into dst first). dst may be src or a, never partly.
 */
export function reduceHost(
  dtype: DType,
  combine: Combine,
  dst: TypedArray,
  dOff: number,
  src: TypedArray,
  sOff: number,
  count: number,
  a?: TypedArray,
  aOff = 0,
): void {
  const addon = useNative(dtype, count) ? native() : undefined;
  if (addon) {
    addon.reduce(dtype, combine, dst, dOff, src, sOff, count, a, aOff);
    return;
  }
  if (a && !(a === dst && aOff === dOff)) {
    // Where src is dst, reduce a into it instead (the ops commute bit for bit, semantics.md A3).
    if (src === dst && sOff === dOff) {
      reduceArrays(dtype, combine, dst, dOff, a, aOff, count);
      return;
    }
    dst.set(a.subarray(aOff, aOff + count) as never, dOff);
  }
  reduceArrays(dtype, combine, dst, dOff, src, sOff, count);
}

/** dst[dOff..] = src[sOff..] * mul / div for count elements. */
export function scaleHost(
  dtype: DType,
  dst: TypedArray,
  dOff: number,
  src: TypedArray,
  sOff: number,
  count: number,
  mul: number,
  div: number,
): void {
  const addon = useNative(dtype, count) ? native() : undefined;
  // Native 64-bit integer division takes a positive integer divisor only (avg's group size).
  const bigOk = !dtypeInfo(dtype).bigint || (Number.isSafeInteger(div) && div >= 1);
  if (addon && bigOk) addon.scale(dtype, dst, dOff, src, sOff, count, mul, div);
  else scaleArrays(dtype, dst, dOff, src, sOff, count, mul, div);
}
