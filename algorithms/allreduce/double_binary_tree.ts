/**
 * allreduce/double_binary_tree: NCCL's double binary tree all-reduce (ncclGetDtree): two
 * complementary binary trees, each reducing and broadcasting half of the message.
 *
 * The first ⌈count/2⌉ elements run topology/tree_pipeline on tree 0 (root 0), the rest on
 * tree 1 (mirrored for even n, shifted for odd n, so a leaf of one tree is interior in the
 * other). Both trees run on one clock: the transfers of the same tick of both trees are posted
 * as one group, so the halves progress together and every rank uses its links in both trees.
 *
 * Limits: any size; latency about 2·⌈log2 n⌉ steps, as one tree; each rank sends about
 * 2·count (an interior rank sends a half 3 times, a leaf once, and each rank is a leaf in one
 * tree), against 3·count for one binary tree.
 * Cost: S + 2⌈log2 n⌉ - 1 steps when S = ⌈⌈count/2⌉/segment⌉ ≥ 2⌈log2 n⌉ (in general the
 * most ticks any rank is busy in either tree, which depends on its depths in both); Σ over the
 * two trees of (parent + children) · half · s bytes sent per rank, the maximum over ranks
 * (at most 3 · count · s).
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm double_binary_tree -n 4`:
 * allreduce/double_binary_tree: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  tree 1: send seg 0 up: in[2]->1
 *   rank 1  tree 0: send seg 0 up; tree 1: recvReduce seg 0 up: in[0]->2 tmp[2]<-2 tmp[3]<-0 out[2]=in[2] out[2]+=tmp[2] out[2]+=tmp[3]
 *   rank 2  tree 0: recvReduce seg 0 up; tree 1: send seg 0 up: tmp[0]<-1 tmp[1]<-3 in[2]->1 out[0]=in[0] out[0]+=tmp[0] out[0]+=tmp[1]
 *   rank 3  tree 0: send seg 0 up: in[0]->2
 *           rank 0   rank 1   rank 2   rank 3
 *   out[0]  .        .        [1+2+3]  .
 *   out[1]  .        .        .        .
 *   out[2]  .        [0+1+2]  .        .
 *   out[3]  .        .        .        .
 *   tmp[0]  .        .        [1]      .
 *   tmp[1]  .        .        [3]      .
 *   tmp[2]  .        [2]      .        .
 *   tmp[3]  .        [0]      .        .
 *
 * step 2
 *   rank 0  tree 0: recvReduce seg 0 up; tree 1: send seg 1 up: tmp[0]<-2 in[3]->1 out[0]=in[0] out[0]+=tmp[0]
 *   rank 1  tree 0: send seg 1 up; tree 1: recvReduce seg 1 up, send seg 0 up: in[1]->2 out[2]->3 tmp[2]<-2 tmp[3]<-0 out[3]=in[3] out[3]+=tmp[2] out[3]+=tmp[3]
 *   rank 2  tree 0: recvReduce seg 1 up, send seg 0 up; tree 1: send seg 1 up: out[0]->0 tmp[0]<-1 tmp[1]<-3 in[3]->1 out[1]=in[1] out[1]+=tmp[0] out[1]+=tmp[1]
 *   rank 3  tree 0: send seg 1 up; tree 1: recvReduce seg 0 up: in[1]->2 tmp[2]<-1 out[2]=in[2] out[2]+=tmp[2]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  .          [1+2+3]    .
 *   out[1]  .          .          [1+2+3]    .
 *   out[2]  .          [0+1+2]    .          [0+1+2+3]
 *   out[3]  .          [0+1+2]    .          .
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *   tmp[2]  .          [2]        .          [0+1+2]
 *   tmp[3]  .          [0]        .          .
 *
 * step 3
 *   rank 0  tree 0: recvReduce seg 1 up, send seg 0 down: out[0]->2 tmp[0]<-2 out[1]=in[1] out[1]+=tmp[0]
 *   rank 1  tree 1: send seg 1 up, recv seg 0 down: out[2]<-3 out[3]->3
 *   rank 2  tree 0: send seg 1 up, recv seg 0 down: out[0]<-0 out[1]->0
 *   rank 3  tree 1: recvReduce seg 1 up, send seg 0 down: out[2]->1 tmp[2]<-1 out[3]=in[3] out[3]+=tmp[2]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  .          [0+1+2+3]  .
 *   out[1]  [0+1+2+3]  .          [1+2+3]    .
 *   out[2]  .          [0+1+2+3]  .          [0+1+2+3]
 *   out[3]  .          [0+1+2]    .          [0+1+2+3]
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *   tmp[2]  .          [2]        .          [0+1+2]
 *   tmp[3]  .          [0]        .          .
 *
 * step 4
 *   rank 0  tree 0: send seg 1 down; tree 1: recv seg 0 down: out[1]->2 out[2]<-1
 *   rank 1  tree 0: recv seg 0 down; tree 1: recv seg 1 down, send seg 0 down: out[0]<-2 out[2]->2 out[2]->0 out[3]<-3
 *   rank 2  tree 0: recv seg 1 down, send seg 0 down; tree 1: recv seg 0 down: out[0]->1 out[0]->3 out[1]<-0 out[2]<-1
 *   rank 3  tree 0: recv seg 0 down; tree 1: send seg 1 down: out[0]<-2 out[3]->1
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  .          [0+1+2+3]  .
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  .          [0+1+2+3]  .          [0+1+2+3]
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *   tmp[2]  .          [2]        .          [0+1+2]
 *   tmp[3]  .          [0]        .          .
 *
 * step 5
 *   rank 0  tree 1: recv seg 1 down: out[3]<-1
 *   rank 1  tree 0: recv seg 1 down; tree 1: send seg 1 down: out[1]<-2 out[3]->2 out[3]->0
 *   rank 2  tree 0: send seg 1 down; tree 1: recv seg 1 down: out[1]->1 out[1]->3 out[3]<-1
 *   rank 3  tree 0: recv seg 1 down: out[1]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [1+2+3]    .          [1]        .
 *   tmp[1]  .          .          [3]        .
 *   tmp[2]  .          [2]        .          [0+1+2]
 *   tmp[3]  .          [0]        .          .
 *
 * cost: S + 2⌈log2 n⌉ - 1 when S = ⌈⌈count/2⌉/segment⌉ ≥ 2⌈log2 n⌉; else the busiest rank's ticks steps, busiest rank's Σ_trees (parent + children) · half · s, ≤ 3 · count · s bytes sent per rank; here 5 steps, at most 8 elements sent by a rank
 */
import { copy, region, step } from "../../src/schedule/build.js";
import type { Algorithm, ScheduleContext } from "../../src/schedule/types.js";
import { binaryTreeHeight, type Tree, treeDepth } from "../topology/binary_tree.js";
import { doubleBinaryTree } from "../topology/double_binary_tree.js";
import { mergeByTick, treeAllreduceTimed, treeBusyTicks, treeScratch, unionSize } from "../topology/tree_pipeline.js";

const trees = (size: number): [Tree, Tree] => [
  (r) => doubleBinaryTree(r, size, 0),
  (r) => doubleBinaryTree(r, size, 1),
];

/** Tree t carries halves[t] elements: the first ⌈count/2⌉ on tree 0, the rest on tree 1. */
const halves = (count: number): [number, number] => [Math.ceil(count / 2), Math.floor(count / 2)];

const nsegments = (count: number, segment: number) => Math.ceil(count / Math.max(1, segment));

/** Max over ranks of what the rank does in both trees: ticks with a transfer, elements sent. */
function perRankMax(size: number, count: number, segment: number): { steps: number; sent: number } {
  if (size === 1 || count === 0) return { steps: 0, sent: 0 };
  const ts = trees(size);
  const hs = halves(count);
  const height = binaryTreeHeight(size);
  let steps = 0;
  let sent = 0;
  for (let r = 0; r < size; r++) {
    const busy: [number, number][] = [];
    let s = 0;
    ts.forEach((tree, t) => {
      const node = tree(r);
      const half = hs[t] as number;
      const hasParent = node.parent >= 0;
      const hasChildren = node.children.length > 0;
      busy.push(...treeBusyTicks(treeDepth(tree, r), hasParent, hasChildren, height, nsegments(half, segment)));
      s += ((hasParent ? 1 : 0) + node.children.length) * half;
    });
    steps = Math.max(steps, unionSize(busy));
    sent = Math.max(sent, s);
  }
  return { steps, sent };
}

export const doubleBinaryTreeAllreduce: Algorithm = {
  collective: "allreduce",
  name: "double_binary_tree",
  summary:
    "NCCL's double binary tree: each half of the message is reduced up and broadcast down its own tree, together.",
  limits: "any size; latency ~2·log2(n) steps; ~2·count sent per rank, where one tree sends 3·count",
  cost: {
    stepsFormula: "S + 2⌈log2 n⌉ - 1 when S = ⌈⌈count/2⌉/segment⌉ ≥ 2⌈log2 n⌉; else the busiest rank's ticks",
    bytesFormula: "busiest rank's Σ_trees (parent + children) · half · s, ≤ 3 · count · s",
    steps: (n, count, segment) => perRankMax(n, count, segment).steps,
    sentElements: (n, count, segment) => perRankMax(n, count, segment).sent,
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : 2 * treeScratch(halves(ctx.count)[0], ctx.segment)),
  *schedule(ctx: ScheduleContext) {
    const { rank, size, count, inPlace, segment } = ctx;
    if (count === 0) return;
    if (size === 1) {
      if (!inPlace) yield step("copy", [], [copy(region("output", 0, count), region("input", 0, count))]);
      return;
    }
    const [h0, h1] = halves(count);
    // Each tree gets its own scratch: both trees' receives can land in the same tick.
    const slot = treeScratch(h0, segment);
    const ts = trees(size);
    const part = (t: 0 | 1, offset: number, n: number) =>
      treeAllreduceTimed({
        rank,
        size,
        tree: ts[t],
        height: binaryTreeHeight(size),
        input: region("input", offset, n),
        output: region("output", offset, n),
        inPlace,
        scratch: region("scratch", t * slot, slot),
        segment,
        label: `tree ${t}: `,
      });
    yield* mergeByTick([part(0, 0, h0), part(1, h0, h1)]);
  },
};
