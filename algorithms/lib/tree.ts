/**
 * The generic pipelined tree all-reduce over any tree (NCCL's tree algorithm, runTreeUpDown;
 * shaped like Open MPI's ompi_coll_base_bcast_intra_generic, which takes its tree as a
 * parameter): the building block of allreduce/binary_tree and allreduce/double_binary_tree.
 *
 * The message is cut into segments. Going up, a rank receives segment k from its children while
 * it sends segment k-1, already reduced, to its parent (recvReduceSend); the root ends the
 * reduction. Going down, a rank receives segment k from its parent while it forwards segment k-1
 * to its children (recvCopySend). The schedule names no clock: dataflow runs segment k's way
 * down while later segments still climb, because each operation waits only for its own segment.
 */
import { invariant } from "../../src/core/assert.js";
import {
  type Chunk,
  chunkOf,
  type Region,
  recv,
  reduce,
  type Schedule,
  segments,
  send,
  step,
  sub,
  type Transfer,
} from "../../src/schedule/dsl.js";
import type { TreeNode } from "../topology/binary_tree.js";

export interface TreeAllreduce {
  /** This rank's place in the tree. */
  readonly node: TreeNode;
  /** This rank's contribution, and where the result lands (the same region in place). */
  readonly input: Region;
  readonly output: Region;
  readonly segment: number;
  /** Scratch for one segment per child. */
  readonly scratch: (count: number) => Region;
  /** Prefix for step labels, e.g. 'tree 1: '. */
  readonly label?: string;
}

/** S + 1 recvReduceSend steps up and S + 1 recvCopySend steps down for S segments (fewer at the root and the leaves). */
export function* treeAllreduce(a: TreeAllreduce): Schedule {
  const { node, input, output } = a;
  invariant(input.count === output.count, "treeAllreduce: input and output differ in count");
  if (output.count === 0) return;
  const { parent, children } = node;
  const segs = segments(output.count, a.segment);
  const label = a.label ?? "";
  const seg = (r: Region, k: number) => chunkOf(r, segs[k] as Chunk);
  // One slot per child, reused by every segment: the receive of segment k+1 waits for segment k's reduction.
  const slot = Math.min(Math.max(1, a.segment), output.count);
  const slots = children.length > 0 ? a.scratch(children.length * slot) : undefined;
  // Leaves send their input as it is; the others send the partial sums they build in the output.
  const up = children.length === 0 ? input : output;

  for (let k = 0; k <= segs.length; k++) {
    const transfers: Transfer[] = [];
    const parts: string[] = [];
    const s = segs[k];
    const tmps = s && slots ? children.map((_, i) => sub(slots, i * slot, s.count)) : [];
    if (s) for (const [i, c] of children.entries()) transfers.push(recv(c, tmps[i] as Region));
    if (k > 0 && parent >= 0) transfers.push(send(parent, seg(up, k - 1)));
    if (transfers.length === 0) continue;
    if (s && children.length > 0) parts.push(`recvReduce seg ${k} up`);
    if (k > 0 && parent >= 0) parts.push(`send seg ${k - 1} up`);
    // The first child's segment is reduced with this rank's own contribution: no input copy.
    const local = tmps.map((t, i) => reduce(seg(output, k), t, i === 0 ? seg(input, k) : undefined));
    yield step(label + parts.join(", "), transfers, local);
  }
  for (let k = 0; k <= segs.length; k++) {
    const transfers: Transfer[] = [];
    const parts: string[] = [];
    if (segs[k] && parent >= 0) {
      transfers.push(recv(parent, seg(output, k)));
      parts.push(`recv seg ${k} down`);
    }
    if (k > 0 && children.length > 0) {
      for (const c of children) transfers.push(send(c, seg(output, k - 1)));
      parts.push(`send seg ${k - 1} down`);
    }
    if (transfers.length > 0) yield step(label + parts.join(", "), transfers);
  }
}

/**
 * Communication steps of one rank of treeAllreduce with S segments: S + 1 each way with both a
 * parent and children, S each way for the root and the leaves.
 */
export function treeSteps(node: TreeNode, nseg: number): number {
  if (nseg === 0) return 0;
  const inner = node.parent >= 0 && node.children.length > 0;
  return 2 * (inner ? nseg + 1 : nseg);
}
