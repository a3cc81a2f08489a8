/**
 * allreduce/binary_tree: Reduce up a binary tree to rank 0 and broadcast back down, pipelined by
 * segment (NCCL's tree, one tree).
 *
 * Limits: any size; latency ~2·log2(n) rounds; interior ranks send 3·count (double_binary_tree cuts
 *         that to ~2·count).
 * Cost:   2S + 2 (2S for n = 2), S = ⌈count/segment⌉ steps; min(3, n-1)·count elements sent per
 *         rank.
 * Source: NCCL's tree algorithm (ncclGetBtree, runTreeUpDown) on a single tree.
 *
 * Step table: `cclab explain allreduce --algorithm binary_tree -n 4`
 * (kept current in test/golden/explain/allreduce/binary_tree.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { maxOf } from "../../src/core/extent.js";
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { treeAllreduce, treeSteps } from "../lib/tree.js";
import { binaryTree } from "../topology/binary_tree.js";

const nseg = (count: number, segment: number) => Math.ceil(count / segment);

export const binaryTreeAllreduce = defineAlgorithm({
  collective: "allreduce",
  name: "binary_tree",
  summary: "Reduce up a binary tree to rank 0 and broadcast back down, pipelined by segment (NCCL's tree, one tree).",
  limits: "any size; latency ~2·log2(n) rounds; interior ranks send 3·count (double_binary_tree cuts that to ~2·count)",
  source: "NCCL's tree algorithm (ncclGetBtree, runTreeUpDown) on a single tree",
  cost: {
    steps: f("2S + 2 (2S for n = 2), S = ⌈count/segment⌉", (n, count, seg) =>
      maxOf(Array.from({ length: n }, (_, r) => treeSteps(binaryTree(r, n), nseg(count, seg)))),
    ),
    sent: f("min(3, n-1)·count", (n, count) => Math.min(3, n - 1) * count),
  },
  schedule: ({ rank, size, segment }, mem) =>
    treeAllreduce({
      node: binaryTree(rank, size),
      input: mem.input,
      output: mem.output,
      segment,
      scratch: mem.scratch,
    }),
});
