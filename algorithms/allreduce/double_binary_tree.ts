/**
 * allreduce/double_binary_tree: NCCL's double binary tree: each half of the message is reduced up
 * and broadcast down its own tree, together.
 *
 * Limits: any size; latency ~2·log2(n) rounds; ~2·count sent per rank, where one tree sends
 *         3·count.
 * Cost:   Σ_trees 2S_t (+2 in a tree where the rank is inner), S_t = ⌈half_t/segment⌉ steps;
 *         busiest rank's Σ_trees (parent + children)·half, ≤ 3·count elements sent per rank.
 * Source: NCCL's tree algorithm (ncclGetDtree, src/graph/trees.cc; runTreeUpDown), pipelined by
 *         segment.
 *
 * Step table: `cclab explain allreduce --algorithm double_binary_tree -n 4`
 * (kept current in test/golden/explain/allreduce/double_binary_tree.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, parallel, sub } from "../../src/schedule/dsl.js";
import { treeAllreduce, treeSteps } from "../lib/tree.js";
import { doubleBinaryTree } from "../topology/double_binary_tree.js";

/** Tree t carries halves[t] elements: the first ⌈count/2⌉ on tree 0, the rest on tree 1. */
const halves = (count: number): [number, number] => [Math.ceil(count / 2), Math.floor(count / 2)];

/** The busiest rank's steps (one tree's after the other's in program order) and elements sent over both trees. */
function busiest(n: number, count: number, segment: number): { steps: number; sent: number } {
  const [h0, h1] = halves(count);
  let steps = 0;
  let sent = 0;
  for (let r = 0; r < n; r++) {
    const nodes = [doubleBinaryTree(r, n, 0), doubleBinaryTree(r, n, 1)];
    const s = nodes.map((node, t) => treeSteps(node, Math.ceil((t === 0 ? h0 : h1) / segment)));
    steps = Math.max(steps, (s[0] as number) + (s[1] as number));
    sent = Math.max(
      sent,
      nodes.reduce((a, node, t) => a + ((node.parent >= 0 ? 1 : 0) + node.children.length) * (t === 0 ? h0 : h1), 0),
    );
  }
  return { steps, sent };
}

export const doubleBinaryTreeAllreduce = defineAlgorithm({
  collective: "allreduce",
  name: "double_binary_tree",
  summary:
    "NCCL's double binary tree: each half of the message is reduced up and broadcast down its own tree, together.",
  limits: "any size; latency ~2·log2(n) rounds; ~2·count sent per rank, where one tree sends 3·count",
  source: "NCCL's tree algorithm (ncclGetDtree, src/graph/trees.cc; runTreeUpDown), pipelined by segment",
  cost: {
    steps: f(
      "Σ_trees 2S_t (+2 in a tree where the rank is inner), S_t = ⌈half_t/segment⌉",
      (n, count, seg) => busiest(n, count, seg).steps,
    ),
    sent: f(
      "busiest rank's Σ_trees (parent + children)·half, ≤ 3·count",
      (n, count, seg) => busiest(n, count, seg).sent,
    ),
  },
  schedule({ rank, size, count, segment }, { input, output, scratch }) {
    // Each tree runs the generic pipelined tree routine on its half, on its own channel, so the
    // two halves never wait on each other's messages: dataflow runs them side by side (and each
    // tree's down phase for one segment while later segments climb).
    const [h0, h1] = halves(count);
    const part = (t: 0 | 1, offset: number, n: number) =>
      treeAllreduce({
        node: doubleBinaryTree(rank, size, t),
        input: sub(input, offset, n),
        output: sub(output, offset, n),
        segment,
        scratch,
        label: `tree ${t}: `,
      });
    return parallel(part(0, 0, h0), part(1, h0, h1));
  },
});
