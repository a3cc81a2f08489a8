/**
 * The oracle: every collective computed sequentially from all ranks' inputs in the most obvious
 * way, from its spec's definition (src/specs/<name>.ts: which input element each output element
 * is, or which elements it reduces). Data movement copies bits; reductions fold the ranks in rank
 * order 0..n-1 with the reference arithmetic (src/core/op.ts, docs/semantics.md). Property tests
 * compare every algorithm on every backend with this; it shares no code with the algorithms.
 */
import { type DType, dtypeInfo, type TypedArray } from "../core/dtype.js";
import { combineOf, type ReduceOp, reduceArrays, scaleArrays, sumScaling } from "../core/op.js";
import { rankCall, specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";

/** The same memory as an unsigned integer array of the element's width: copies through it keep every bit (NaN payloads too). */
export function bitsOf(a: TypedArray): Uint8Array | Uint16Array | Uint32Array | BigUint64Array {
  const w = a.BYTES_PER_ELEMENT;
  const Ctor = w === 1 ? Uint8Array : w === 2 ? Uint16Array : w === 4 ? Uint32Array : BigUint64Array;
  return new Ctor(a.buffer as ArrayBuffer, a.byteOffset, a.length);
}

/**
 * Element-wise reduction over every rank of input[r][0 .. len), in rank order, with
 * docs/semantics.md's arithmetic (op.ts) and scaling (sumScaling: each contribution
 * pre-multiplied, the sum post-divided, as the op and dtype say).
 */
function reduceAll(dtype: DType, op: ReduceOp, inputs: readonly TypedArray[], len: number): TypedArray {
  const n = inputs.length;
  const { premul, postdiv } = sumScaling(op, dtype, n);
  const make = () => new (dtypeInfo(dtype).array)(len);
  const contrib = (r: number): TypedArray => {
    const x = make();
    bitsOf(x).set(bitsOf((inputs[r] as TypedArray).subarray(0, len) as TypedArray) as never);
    if (premul !== undefined) scaleArrays(dtype, x, 0, x, 0, len, premul, 1);
    return x;
  };
  const acc = contrib(0);
  for (let r = 1; r < n; r++) reduceArrays(dtype, combineOf(op), acc, 0, contrib(r), 0, len);
  if (postdiv !== undefined) scaleArrays(dtype, acc, 0, acc, 0, len, 1, postdiv);
  return acc;
}

/** Expected outputs, one array per rank (its layout's output count; 0 where a rank receives nothing). */
export function reference(call: CollectiveCall, inputs: readonly TypedArray[]): TypedArray[] {
  const spec = specOf(call.collective);
  const n = call.size;
  const calls = Array.from({ length: n }, (_, r) => rankCall(call, r));
  let reduced: ReturnType<typeof bitsOf> | undefined;
  return calls.map((c) => {
    const out = new (dtypeInfo(call.dtype).array)(spec.layout(c).outputCount);
    const bits = bitsOf(out);
    for (const b of spec.result(c, call)) {
      if ("reduce" in b) {
        reduced ??= bitsOf(reduceAll(call.dtype, call.op, inputs, spec.layout(calls[0]!).inputCount));
        bits.set(reduced.subarray(b.reduce, b.reduce + b.count) as never, b.at);
      } else {
        const src = bitsOf(inputs[b.rank] as TypedArray);
        bits.set(src.subarray(b.index, b.index + b.count) as never, b.at);
      }
    }
    return out;
  });
}
