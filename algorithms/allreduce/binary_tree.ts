/**
 * allreduce/binary_tree: reduce up one binary tree to rank 0, then broadcast back down, pipelined
 * by segment (NCCL's tree algorithm on a single tree, ncclGetBtree).
 *
 * Runs topology/tree_pipeline over topology/binary_tree with the whole message: interior ranks
 * receive a segment from their children, reduce it and pass it up while the previous segments
 * come back down. Half the ranks are leaves, whose links carry only one direction's worth.
 *
 * Limits: any size; latency about 2·⌈log2 n⌉ steps; interior ranks send 3·count, so bandwidth
 * is worse than ring's 2(n-1)/n·count (the double binary tree halves it).
 * Cost: S + 2H - 1 steps, at most 2S + 2 (S = ⌈count/segment⌉, H = ⌈log2 n⌉; 0 for n = 1);
 * min(3, n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm binary_tree -n 4`:
 * (generated)
 */
import { copy, region, step } from "../../src/schedule/build.js";
import type { Algorithm, ScheduleContext } from "../../src/schedule/types.js";
import { binaryTree, type Tree } from "../topology/binary_tree.js";
import { ceilLog2 } from "../topology/binomial.js";
import { treeAllreduce, treeScratch } from "../topology/tree_pipeline.js";

const nsegments = (count: number, segment: number) => Math.ceil(count / Math.max(1, segment));

export const binaryTreeAllreduce: Algorithm = {
  collective: "allreduce",
  name: "binary_tree",
  summary: "Reduce up a binary tree to rank 0 and broadcast back down, pipelined by segment (NCCL tree, one tree).",
  limits: "any size; latency ~2·log2(n) steps; interior ranks send 3·count (double_binary_tree halves that)",
  cost: {
    stepsFormula: "min(S + 2⌈log2 n⌉ - 1, 2S + 2), S = ⌈count/segment⌉",
    bytesFormula: "min(3, n-1) · count · s",
    steps: (n, count, segment) => {
      if (n === 1 || count === 0) return 0;
      const s = nsegments(count, segment);
      return Math.min(s + 2 * ceilLog2(n) - 1, 2 * s + 2);
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
      input: region("input", 0, count),
      output: region("output", 0, count),
      inPlace,
      scratch: region("scratch", 0, treeScratch(count, ctx.segment)),
      segment: ctx.segment,
    });
  },
};
