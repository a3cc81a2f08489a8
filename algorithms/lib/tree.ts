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
  labelled,
  type Region,
  recv,
  recvCopySend,
  recvReduceSend,
  reduce,
  type Schedule,
  segments,
  send,
  sub,
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

/**
 * S + 1 recvReduceSend steps up and S + 1 recvCopySend steps down for S segments (fewer at the
 * root and the leaves, whose steps the verbs name recvReduce, send and directRecv).
 */
export function* treeAllreduce(a: TreeAllreduce): Schedule {
  yield* a.label ? labelled(a.label, upAndDown(a)) : upAndDown(a);
}

function* upAndDown(a: TreeAllreduce): Schedule {
  const { node, input, output } = a;
  invariant(input.count === output.count, "treeAllreduce: input and output differ in count");
  if (output.count === 0) return;
  const { parent, children } = node;
  const segs = segments(output.count, a.segment);
  const seg = (r: Region, k: number) => chunkOf(r, segs[k] as Chunk);
  // One slot per child, reused by every segment: the receive of segment k+1 waits for segment k's reduction.
  const slot = Math.min(Math.max(1, a.segment), output.count);
  const slots = children.length > 0 ? a.scratch(children.length * slot) : undefined;
  // Leaves send their input as it is; the others send the partial sums they build in the output.
  const up = children.length === 0 ? input : output;

  // Step k receives segment k and sends segment k-1 on, the one reduced at the step before.
  for (let k = 0; k <= segs.length; k++) {
    const s = segs[k];
    const sends = k > 0 && parent >= 0;
    const tmps = s && slots ? children.map((_, i) => sub(slots, i * slot, s.count)) : [];
    if (tmps.length === 0 && !sends) continue;
    yield recvReduceSend(
      `seg ${tmps.length > 0 ? k : k - 1} up`,
      [...tmps.map((t, i) => recv(children[i] as number, t)), sends ? send(parent, seg(up, k - 1)) : undefined],
      // The first child's segment is reduced with this rank's own contribution: no input copy.
      tmps.map((t, i) => reduce(seg(output, k), t, i === 0 ? seg(input, k) : undefined)),
    );
  }
  for (let k = 0; k <= segs.length; k++) {
    const receives = segs[k] !== undefined && parent >= 0;
    const sends = k > 0 && children.length > 0;
    if (!receives && !sends) continue;
    yield recvCopySend(`seg ${receives ? k : k - 1} down`, [
      receives ? recv(parent, seg(output, k)) : undefined,
      ...(sends ? children.map((c) => send(c, seg(output, k - 1))) : []),
    ]);
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
