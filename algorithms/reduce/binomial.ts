/**
 * reduce/binomial: reduce up a binomial tree (MPICH's MPIR_Reduce_intra_binomial, Open MPI's
 * ompi_coll_base_reduce_intra_binomial without segmentation).
 *
 * In vrank space each rank receives its children's partial results, smallest subtree first,
 * and reduces each into an accumulator, then sends the accumulator to its parent. The root
 * accumulates in its output; other ranks copy their input to scratch and accumulate there, so
 * no input is ever written. Leaves send their input as it is.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency, but every round carries the whole message, so
 * large messages prefer rabenseifner.
 * Cost: ⌈log2 n⌉ steps; count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain reduce --algorithm binomial -n 4`:
 * reduce/binomial: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recvReduce from vrank 1: tmp[0:4]<-1 out[0:4]=in[0:4] out[0:4]+=tmp[0:4]
 *   rank 1  send: in[0:4]->0
 *   rank 2  recvReduce from vrank 3: tmp[0:4]<-3 tmp[4:8]=in[0:4] tmp[4:8]+=tmp[0:4]
 *   rank 3  send: in[0:4]->2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0+1]
 *   out[1]  [0+1]
 *   out[2]  [0+1]
 *   out[3]  [0+1]
 *   tmp[0]  [1]             [3]
 *   tmp[1]  [1]             [3]
 *   tmp[2]  [1]             [3]
 *   tmp[3]  [1]             [3]
 *   tmp[4]                  [2+3]
 *   tmp[5]                  [2+3]
 *   tmp[6]                  [2+3]
 *   tmp[7]                  [2+3]
 *
 * step 2
 *   rank 0  recvReduce from vrank 2: tmp[0:4]<-2 out[0:4]+=tmp[0:4]
 *   rank 1  -
 *   rank 2  send: tmp[4:8]->0
 *   rank 3  -
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]
 *   out[1]  [0+1+2+3]
 *   out[2]  [0+1+2+3]
 *   out[3]  [0+1+2+3]
 *   tmp[0]  [2+3]                 [3]
 *   tmp[1]  [2+3]                 [3]
 *   tmp[2]  [2+3]                 [3]
 *   tmp[3]  [2+3]                 [3]
 *   tmp[4]                        [2+3]
 *   tmp[5]                        [2+3]
 *   tmp[6]                        [2+3]
 *   tmp[7]                        [2+3]
 *
 * cost: ⌈log2 n⌉ steps, count · s bytes sent per rank; here 2 steps, at most 4 elements sent by a rank
 */
import { copy, rankOf, recv, reduce, region, send, step, vrankOf } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule } from "../../src/schedule/types.js";
import { binomialTree, ceilLog2 } from "../topology/binomial.js";

/**
 * The binomial reduce, reusable: `input` holds this rank's contribution; the root's result
 * lands in `output` (which may be `input`, in place); non-roots use `acc` and `tmp` (count
 * elements each) and never write `input`. The root uses only `tmp`.
 */
export function* binomialReduce(
  rank: number,
  size: number,
  root: number,
  input: Region,
  output: Region,
  acc: Region,
  tmp: Region,
): Schedule {
  const node = binomialTree(vrankOf(rank, root, size), size);
  const isRoot = node.parent < 0;
  const into = isRoot ? output : acc;
  const init = into === input || (into.buf === input.buf && into.offset === input.offset) ? [] : [copy(into, input)];
  const children = [...node.children].reverse();
  if (isRoot && children.length === 0) {
    if (init.length > 0) yield step("copy input", [], init);
    return;
  }
  for (const [i, c] of children.entries()) {
    const local = [...(i === 0 ? init : []), reduce(into, tmp)];
    yield step(`recvReduce from vrank ${c}`, [recv(rankOf(c, root, size), tmp)], local);
  }
  if (!isRoot) yield step("send", [send(rankOf(node.parent, root, size), children.length > 0 ? acc : input)]);
}

export const binomial: Algorithm = {
  collective: "reduce",
  name: "binomial",
  summary: "Reduce up a binomial tree: each rank folds in its children's partial results.",
  limits: "any size and root; ⌈log2 n⌉ latency; every round carries the whole message",
  cost: {
    stepsFormula: "⌈log2 n⌉",
    bytesFormula: "count · s",
    steps: (n, count) => (count === 0 ? 0 : ceilLog2(n)),
    sentElements: (n, count) => (n === 1 ? 0 : count),
  },
  scratch: (ctx) => {
    const node = binomialTree(vrankOf(ctx.rank, ctx.root, ctx.size), ctx.size);
    if (node.children.length === 0) return 0;
    return node.parent < 0 ? ctx.count : 2 * ctx.count;
  },
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    const input = region("input", 0, count);
    yield* binomialReduce(
      rank,
      size,
      root,
      input,
      ctx.inPlace && rank === root ? input : region("output", 0, count),
      region("scratch", count, count),
      region("scratch", 0, count),
    );
  },
};
