/**
 * The oracle: every collective computed sequentially from all ranks' inputs, in the most
 * obvious way (reductions in rank order 0..n-1). Property tests compare every algorithm on
 * every backend with this; it shares no code with the algorithms.
 */
import { type DType, dtypeInfo, type TypedArray } from "../core/dtype.js";
import { combineOf, type ReduceOp, reduceArrays, scaleArrays, sumScaling } from "../core/op.js";
import { layout } from "../schedule/layout.js";
import type { Collective } from "../schedule/types.js";

export interface ReferenceArgs {
  readonly collective: Collective;
  readonly size: number;
  readonly count: number;
  readonly root: number;
  readonly dtype: DType;
  readonly op: ReduceOp;
  /** alltoallv: sendCounts[src][dst]. */
  readonly sendCounts?: readonly (readonly number[])[];
}

/** Expected outputs, one array per rank (length per layout.ts; 0 where a rank receives nothing). */
export function reference(args: ReferenceArgs, inputs: readonly TypedArray[]): TypedArray[] {
  const { size: n, count: c, root, dtype, op } = args;
  const make = (len: number) => new (dtypeInfo(dtype).array)(len);
  const outLen = (rank: number) =>
    layout({
      ...args,
      rank,
      sendCounts: args.sendCounts?.[rank],
      recvCounts: args.sendCounts?.map((row) => row[rank] ?? 0),
    }).outputCount;
  const outs = Array.from({ length: n }, (_, r) => make(outLen(r)));
  const input = (r: number) => inputs[r] as TypedArray;

  /**
   * Element-wise reduction over all ranks of input[r][from .. from+len), in rank order, with
   * docs/semantics.md's arithmetic (op.ts) and scaling (sumScaling: each contribution
   * pre-multiplied, the sum post-divided, as the op and dtype say).
   */
  const { premul, postdiv } = sumScaling(op, dtype, n);
  const reduced = (from: number, len: number): TypedArray => {
    const acc = make(len);
    const contrib = (r: number): TypedArray => {
      const x = make(len);
      x.set(input(r).subarray(from, from + len) as never);
      if (premul !== undefined) scaleArrays(dtype, x, 0, x, 0, len, premul, 1);
      return x;
    };
    acc.set(contrib(0) as never);
    for (let r = 1; r < n; r++) reduceArrays(dtype, combineOf(op), acc, 0, contrib(r), 0, len);
    if (postdiv !== undefined) scaleArrays(dtype, acc, 0, acc, 0, len, 1, postdiv);
    return acc;
  };

  switch (args.collective) {
    case "broadcast":
      for (const o of outs) o.set(input(root) as never);
      break;
    case "reduce":
      (outs[root] as TypedArray).set(reduced(0, c) as never);
      break;
    case "allreduce": {
      const all = reduced(0, c);
      for (const o of outs) o.set(all as never);
      break;
    }
    case "gather":
      for (let r = 0; r < n; r++) (outs[root] as TypedArray).set(input(r).subarray(0, c) as never, r * c);
      break;
    case "allgather":
      for (const o of outs) for (let r = 0; r < n; r++) o.set(input(r).subarray(0, c) as never, r * c);
      break;
    case "scatter":
      for (let r = 0; r < n; r++) (outs[r] as TypedArray).set(input(root).subarray(r * c, r * c + c) as never);
      break;
    case "reducescatter":
      for (let r = 0; r < n; r++) (outs[r] as TypedArray).set(reduced(r * c, c) as never);
      break;
    case "alltoall":
      for (let dst = 0; dst < n; dst++) {
        for (let src = 0; src < n; src++) {
          (outs[dst] as TypedArray).set(input(src).subarray(dst * c, dst * c + c) as never, src * c);
        }
      }
      break;
    case "alltoallv": {
      const sc = args.sendCounts ?? [];
      const at = (row: readonly number[] | undefined, k: number) => (row ?? []).slice(0, k).reduce((a, b) => a + b, 0);
      for (let dst = 0; dst < n; dst++) {
        for (let src = 0; src < n; src++) {
          const len = sc[src]?.[dst] ?? 0;
          const from = at(sc[src], dst);
          const to = at(
            sc.map((row) => row[dst] ?? 0),
            src,
          );
          (outs[dst] as TypedArray).set(input(src).subarray(from, from + len) as never, to);
        }
      }
      break;
    }
    case "barrier":
      break;
  }
  return outs;
}
