/**
 * topology/tree_pipeline: the generic pipelined reduce-up-then-broadcast-down over any tree, the
 * building block of the tree all-reduces (NCCL's tree algorithm, runTreeUpDown; shaped like
 * Open MPI's ompi_coll_base_bcast_intra_generic, which takes its tree as a parameter).
 *
 * The region is cut into segments. Going up, every rank receives segment k from its children
 * into scratch, reduces it into its output, and sends the partial sum to its parent
 * (recvReduceSend); the root ends the reduction. Going down, the root sends the result to its
 * children and every rank forwards what it gets from its parent (recvCopySend).
 *
 * The steps run on one global clock, with every send and its receive at the same tick, so the
 * schedule cannot deadlock and two trees' steps merge by tick (double binary tree). With H the
 * tree's height, a rank at depth d
 *   receives segment k from its children at tick k + H - d - 1 (and reduces it),
 *   sends it to its parent at tick k + H - d,
 *   receives the result from its parent at tick k + H + d - 1,
 *   sends it to its children at tick k + H + d,
 * so the root turns segment k around at ticks k + H - 1 and k + H while segment k+1 climbs
 * (segment k goes up while segment k-1 goes down), and a rank at depth d is busy over at most
 * S + 2d + 1 ticks for S segments.
 */
import { invariant } from "../../src/core/assert.js";
import { copy, recv, reduce, segments, send, step, sub } from "../../src/schedule/build.js";
import type { LocalOp, Region, Schedule, Step, Transfer } from "../../src/schedule/types.js";
import { type Tree, treeDepth } from "./binary_tree.js";

export interface TreeAllreduceArgs {
  readonly rank: number;
  readonly size: number;
  readonly tree: Tree;
  /** The tree's height (largest depth), which sets the clock: binaryTreeHeight for NCCL's trees. */
  readonly height: number;
  /** This rank's contribution; same count as `output`. */
  readonly input: Region;
  /** Where the result lands; the partial sums are built here too. */
  readonly output: Region;
  /** True when input and output are the same memory: no initial copy. */
  readonly inPlace: boolean;
  /** treeScratch(count, segment, arity) elements: one segment slot per child. */
  readonly scratch: Region;
  readonly segment: number;
  /** Prefix for step labels, e.g. 'tree 1: '. */
  readonly label?: string;
}

/** A step on the global clock. */
export interface TimedStep extends Step {
  readonly tick: number;
}

/** Scratch elements the routine needs for `count` elements: one segment slot per child (`arity` at most). */
export function treeScratch(count: number, segment: number, arity = 2): number {
  return arity * Math.min(Math.max(1, segment), count);
}

/** The routine's steps for one rank, in tick order; ticks with nothing to do are left out. */
export function treeAllreduceTimed(a: TreeAllreduceArgs): TimedStep[] {
  const { rank, size, tree, input, output, inPlace, scratch } = a;
  invariant(input.count === output.count, "treeAllreduce: input and output differ in count");
  const count = output.count;
  if (size === 1 || count === 0) return [];
  const { parent, children } = tree(rank);
  const depth = treeDepth(tree, rank);
  const height = a.height;
  invariant(depth <= height && (children.length === 0 || depth < height), "treeAllreduce: height below a depth");
  const segs = segments(count, a.segment);
  const slot = Math.min(Math.max(1, a.segment), count);
  invariant(scratch.count >= children.length * slot, "treeAllreduce: scratch too small");

  interface Tick {
    transfers: Transfer[];
    local: LocalOp[];
    /** [order, text]: labels read up-receive, up-send, down-receive, down-send. */
    parts: [number, string][];
  }
  const ticks = new Map<number, Tick>();
  const at = (t: number): Tick => {
    let x = ticks.get(t);
    if (!x) ticks.set(t, (x = { transfers: [], local: [], parts: [] }));
    return x;
  };
  // Leaves send their own input; every other rank sends the partial sum it built in output.
  const upSource = children.length === 0 ? input : output;

  segs.forEach((s, k) => {
    const out = sub(output, s.offset, s.count);
    if (children.length > 0) {
      const t = at(k + height - depth - 1);
      const slots = children.map((c, i) => ({ child: c, slot: sub(scratch, i * slot, s.count) }));
      for (const x of slots) t.transfers.push(recv(x.child, x.slot));
      if (!inPlace) t.local.push(copy(out, sub(input, s.offset, s.count)));
      for (const x of slots) t.local.push(reduce(out, x.slot));
      t.parts.push([0, `recvReduce seg ${k} up`]);
    }
    if (parent >= 0) {
      const t = at(k + height - depth);
      t.transfers.push(send(parent, sub(upSource, s.offset, s.count)));
      t.parts.push([1, `send seg ${k} up`]);
      const d = at(k + height + depth - 1);
      d.transfers.push(recv(parent, out));
      d.parts.push([2, `recv seg ${k} down`]);
    }
    if (children.length > 0) {
      const t = at(k + height + depth);
      for (const c of children) t.transfers.push(send(c, out));
      t.parts.push([3, `send seg ${k} down`]);
    }
  });

  return [...ticks.entries()]
    .sort(([x], [y]) => x - y)
    .map(([tick, x]) => ({
      ...step(
        (a.label ?? "") +
          x.parts
            .sort((p, q) => p[0] - q[0])
            .map((p) => p[1])
            .join(", "),
        x.transfers,
        x.local,
      ),
      tick,
    }));
}

/** The routine as a schedule: reduce up the tree, broadcast down, pipelined by segment. */
export function* treeAllreduce(a: TreeAllreduceArgs): Schedule {
  for (const { tick: _, ...s } of treeAllreduceTimed(a)) yield s;
}

/**
 * Runs several timed schedules side by side: the steps of one tick become one step (one group),
 * transfers in list order, so each pair of ranks posts its messages in the same order.
 */
export function* mergeByTick(lists: readonly (readonly TimedStep[])[]): Schedule {
  const byTick = new Map<number, Step[]>();
  for (const list of lists) {
    for (const { tick, ...s } of list) {
      const q = byTick.get(tick);
      if (q) q.push(s);
      else byTick.set(tick, [s]);
    }
  }
  for (const [, parts] of [...byTick.entries()].sort(([x], [y]) => x - y)) {
    yield step(
      parts.map((p) => p.label).join("; "),
      parts.flatMap((p) => p.transfers),
      parts.flatMap((p) => p.local),
    );
  }
}

/**
 * Ticks at which a rank of `depth` has transfers, as closed intervals, for `nseg` segments on a
 * tree of `height`: what the cost formulas count.
 */
export function treeBusyTicks(
  depth: number,
  hasParent: boolean,
  hasChildren: boolean,
  height: number,
  nseg: number,
): [number, number][] {
  const out: [number, number][] = [];
  if (nseg === 0) return out;
  const span = (first: number): [number, number] => [first, first + nseg - 1];
  if (hasChildren) out.push(span(height - depth - 1), span(height + depth));
  if (hasParent) out.push(span(height - depth), span(height + depth - 1));
  return out;
}

/** Number of integers in a union of closed intervals. */
export function unionSize(intervals: readonly (readonly [number, number])[]): number {
  const sorted = [...intervals].sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [from, to] of sorted) {
    const start = Math.max(from, end + 1);
    if (to >= start) total += to - start + 1;
    end = Math.max(end, to);
  }
  return total;
}
