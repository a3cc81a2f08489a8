/**
 * allreduce/double_binary_tree: NCCL's double binary tree: each half of the message is reduced up
 * and broadcast down its own tree, together.
 *
 * Limits: any size; latency ~2·log2(n) rounds; ~2·count sent per rank, where one tree sends
 *         3·count.
 * Cost:   Σ_trees 2S_t (+2 in a tree where the rank is inner), S_t = ⌈half_t/segment⌉ steps;
 *         busiest rank's Σ_trees (parent + children)·half, ≤ 3·count elements sent per rank.
 * Source: NCCL's tree algorithm with one GPU per node (ncclGetDtree, src/graph/trees.cc;
 *         connectTrees; runTreeSplit), pipelined by segment.
 *
 * Step table: `cclab explain allreduce --algorithm double_binary_tree -n 4`
 * (kept current in test/golden/explain/allreduce/double_binary_tree.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, parallel, sub } from "../../src/schedule/dsl.js";
import { treeAllreduce, treeSteps } from "../lib/tree.js";
import { doubleBinaryTree } from "../topology/double_binary_tree.js";

/*
 * How this follows NCCL's tree all-reduce (checked against NCCL 2.29: src/graph/trees.cc
 * ncclGetDtree, src/graph/connect.cc connectTrees, src/device/all_reduce.h runTreeSplit and
 * runTreeUpDown, src/enqueue.cc's channel split), and where it differs:
 *
 * - The trees: tree 0 is ncclGetBtree, tree 1 its mirror (even n) or shift (odd n), as
 *   ncclGetDtree (topology/double_binary_tree.ts; test/trees.test.ts holds NCCL's pictures).
 * - The split: NCCL gives tree 0 to channels 0..c-1 and tree 1 to channels c..2c-1
 *   (connectTrees: channel1 = channel0 + nChannels) and cuts the data over the channels in
 *   order, so tree 0 carries the first half and tree 1 the second. cclab does the same with one
 *   channel per tree (parallel()), so neither tree's messages wait on the other's; NCCL cuts each
 *   half again over its c channels, which cclab does not model.
 * - The pipeline: NCCL walks the channel's data chunk by chunk (chunkCount, here the segment):
 *   a leaf sends its input (directSend), an inner rank receives its children's chunk, reduces it
 *   with its own and sends it up (directRecvReduceDirectSend), the root reduces and sends straight
 *   down (directRecvReduceCopyDirectSend), and on the way down each rank receives and forwards
 *   (directRecvCopyDirectSend). runTreeSplit, NCCL's default, gives the way up and the way down
 *   half of the threads each, so chunk k goes down while chunk k+1 goes up. cclab's tree routine
 *   (lib/tree.ts) has the same operations per segment; in dataflow order, as cclab's executors run
 *   it, segment k's way down overlaps later segments' way up as in runTreeSplit; in steps order
 *   (a stream-ordered engine) every segment goes up before any comes down, as runTreeUpDown.
 * - Where it differs: cclab's trees span ranks, NCCL's span nodes (the GPUs of a node form a chain
 *   under the node's tree position: treeIntra), so this is NCCL with one GPU per node. NCCL lets a
 *   child run up to NCCL_STEPS = 8 chunks ahead (its connection buffers); lib/tree.ts receives into
 *   one slot per child, so a child is at most one segment ahead. Giving it 8 slots was tried and
 *   kept out: in cclab's model, where a link carries one message at a time in the order they
 *   become ready, the deeper buffer makes up and down traffic contend and the modelled time
 *   worse (n = 64, 64 MiB at 5 µs, 25 GB/s: 12.7 ms with 8 slots against 10.8 ms with one).
 *   NCCL's protocol choice (LL, LL128, Simple) and its tree chunk-size tuning are not modelled.
 */

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
  source:
    "NCCL's tree algorithm with one GPU per node (ncclGetDtree, src/graph/trees.cc; connectTrees; runTreeSplit), pipelined by segment",
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
