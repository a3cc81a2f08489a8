/**
 * allreduce/binary_tree: reduce up one binary tree to rank 0, then broadcast back down, pipelined
 * by segment (NCCL's tree algorithm on a single tree, ncclGetBtree).
 *
 * Runs topology/tree_pipeline over topology/binary_tree with the whole message: interior ranks
 * receive a segment from their children, reduce it and pass it up while the previous segments
 * come back down. Half the ranks are leaves, whose links carry only one direction's worth.
 *
 * Limits: any size; latency about 2·⌈log2 n⌉ steps; interior ranks send 3·count, so bandwidth
 * is worse than ring's 2(n-1)/n·count (the double binary tree brings it to ~2·count).
 * Cost: min(S + 2H - 1, 2S + 2) steps (S = ⌈count/segment⌉, H = ⌈log2 n⌉; 0 for n = 1);
 * min(3, n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm binary_tree -n 4`:
 * allreduce/binary_tree: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recvReduce seg 0 up: tmp[0]<-2 out[0]=in[0] out[0]+=tmp[0]
 *   rank 1  send seg 0 up: in[0]->2
 *   rank 2  recvReduce seg 0 up: tmp[0]<-1 tmp[1]<-3 out[0]=in[0] out[0]+=tmp[0] out[0]+=tmp[1]
 *   rank 3  send seg 0 up: in[0]->2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  .          [1+2+3]    .
 *   out[1]  .          .          .          .
 *   out[2]  .          .          .          .
 *   out[3]  .          .          .          .
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *
 * step 2
 *   rank 0  recvReduce seg 1 up, send seg 0 down: out[0]->2 tmp[0]<-2 out[1]=in[1] out[1]+=tmp[0]
 *   rank 1  send seg 1 up: in[1]->2
 *   rank 2  recvReduce seg 1 up, send seg 0 up: out[0]->0 tmp[0]<-1 tmp[1]<-3 out[1]=in[1] out[1]+=tmp[0] out[1]+=tmp[1]
 *   rank 3  send seg 1 up: in[1]->2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  .          [1+2+3]    .
 *   out[1]  [0+1+2+3]  .          [1+2+3]    .
 *   out[2]  .          .          .          .
 *   out[3]  .          .          .          .
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *
 * step 3
 *   rank 0  recvReduce seg 2 up, send seg 1 down: out[1]->2 tmp[0]<-2 out[2]=in[2] out[2]+=tmp[0]
 *   rank 1  send seg 2 up: in[2]->2
 *   rank 2  recvReduce seg 2 up, send seg 1 up, recv seg 0 down: out[0]<-0 out[1]->0 tmp[0]<-1 tmp[1]<-3 out[2]=in[2] out[2]+=tmp[0] out[2]+=tmp[1]
 *   rank 3  send seg 2 up: in[2]->2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  .          [0+1+2+3]  .
 *   out[1]  [0+1+2+3]  .          [1+2+3]    .
 *   out[2]  [0+1+2+3]  .          [1+2+3]    .
 *   out[3]  .          .          .          .
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *
 * step 4
 *   rank 0  recvReduce seg 3 up, send seg 2 down: out[2]->2 tmp[0]<-2 out[3]=in[3] out[3]+=tmp[0]
 *   rank 1  send seg 3 up, recv seg 0 down: out[0]<-2 in[3]->2
 *   rank 2  recvReduce seg 3 up, send seg 2 up, recv seg 1 down, send seg 0 down: out[0]->1 out[0]->3 out[1]<-0 out[2]->0 tmp[0]<-1 tmp[1]<-3 out[3]=in[3] out[3]+=tmp[0] out[3]+=tmp[1]
 *   rank 3  send seg 3 up, recv seg 0 down: out[0]<-2 in[3]->2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  .          [0+1+2+3]  .
 *   out[2]  [0+1+2+3]  .          [1+2+3]    .
 *   out[3]  [0+1+2+3]  .          [1+2+3]    .
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *
 * step 5
 *   rank 0  send seg 3 down: out[3]->2
 *   rank 1  recv seg 1 down: out[1]<-2
 *   rank 2  send seg 3 up, recv seg 2 down, send seg 1 down: out[1]->1 out[1]->3 out[2]<-0 out[3]->0
 *   rank 3  recv seg 1 down: out[1]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  .          [0+1+2+3]  .
 *   out[3]  [0+1+2+3]  .          [1+2+3]    .
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *
 * step 6
 *   rank 0  -
 *   rank 1  recv seg 2 down: out[2]<-2
 *   rank 2  recv seg 3 down, send seg 2 down: out[2]->1 out[2]->3 out[3]<-0
 *   rank 3  recv seg 2 down: out[2]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  .          [0+1+2+3]  .
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *
 * step 7
 *   rank 0  -
 *   rank 1  recv seg 3 down: out[3]<-2
 *   rank 2  send seg 3 down: out[3]->1 out[3]->3
 *   rank 3  recv seg 3 down: out[3]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *
 * cost: min(S + 2⌈log2 n⌉ - 1, 2S + 2), S = ⌈count/segment⌉ steps, min(3, n-1) · count · s bytes sent per rank; here 7 steps, at most 12 elements sent by a rank
 */
import { copy, region, step } from "../../src/schedule/build.js";
import type { Algorithm, ScheduleContext } from "../../src/schedule/types.js";
import { binaryTree, binaryTreeHeight, type Tree } from "../topology/binary_tree.js";
import { treeAllreduce, treeScratch } from "../topology/tree_pipeline.js";

const nsegments = (count: number, segment: number) => Math.ceil(count / Math.max(1, segment));

export const binaryTreeAllreduce: Algorithm = {
  collective: "allreduce",
  name: "binary_tree",
  summary: "Reduce up a binary tree to rank 0 and broadcast back down, pipelined by segment (NCCL tree, one tree).",
  limits: "any size; latency ~2·log2(n) steps; interior ranks send 3·count (double_binary_tree cuts that to ~2·count)",
  cost: {
    stepsFormula: "min(S + 2⌈log2 n⌉ - 1, 2S + 2), S = ⌈count/segment⌉",
    bytesFormula: "min(3, n-1) · count · s",
    steps: (n, count, segment) => {
      if (n === 1 || count === 0) return 0;
      const s = nsegments(count, segment);
      return Math.min(s + 2 * binaryTreeHeight(n) - 1, 2 * s + 2);
    },
    sentElements: (n, count) => Math.min(3, n - 1) * count,
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : treeScratch(ctx.count, ctx.segment)),
  *schedule(ctx: ScheduleContext) {
    const { rank, size, count, inPlace } = ctx;
    if (count === 0) return;
    if (size === 1) {
      if (!inPlace) yield step("copy", [], [copy(region("output", 0, count), region("input", 0, count))]);
      return;
    }
    const tree: Tree = (r) => binaryTree(r, size);
    yield* treeAllreduce({
      rank,
      size,
      tree,
      height: binaryTreeHeight(size),
      input: region("input", 0, count),
      output: region("output", 0, count),
      inPlace,
      scratch: region("scratch", 0, treeScratch(count, ctx.segment)),
      segment: ctx.segment,
    });
  },
};
