/**
 * gather/binomial: gather up a binomial tree rooted at the root (Open MPI's
 * ompi_coll_base_gather_intra_binomial, MPICH's MPIR_Gather_intra_binomial).
 *
 * Every rank's subtree is a contiguous range of vranks. A leaf sends its block to its parent;
 * an inner rank collects its own block and its children's subtrees in scratch, contiguous in
 * vrank order, and forwards them in one message. The root receives each child's subtree
 * straight into its output, except the one subtree whose ranks wrap past size-1 to 0, which it
 * stages in scratch and copies out in two pieces.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency, but inner ranks forward up to half the data.
 * Cost: ⌈log2 n⌉ steps; max(n - 2^(⌈log2 n⌉-1), 2^(⌈log2 n⌉-2)) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain gather --algorithm binomial -n 4`:
 * gather/binomial: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recv subtree of vrank 1: out[1]<-1 out[0]=in[0]
 *   rank 1  send own block: in[0]->0
 *   rank 2  recv subtree of vrank 3: tmp[1]<-3 tmp[0]=in[0]
 *   rank 3  send own block: in[0]->2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]
 *   out[1]  [1]
 *   out[2]  .
 *   out[3]  .
 *   tmp[0]                  [2]
 *   tmp[1]                  [3]
 *
 * step 2
 *   rank 0  recv subtree of vrank 2: out[2:4]<-2
 *   rank 1  -
 *   rank 2  send subtree of vrank 2: tmp[0:2]->0
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]
 *   out[1]  [1]
 *   out[2]  [2]
 *   out[3]  [3]
 *   tmp[0]                  [2]
 *   tmp[1]                  [3]
 *
 * cost: ⌈log2 n⌉ steps, max(n - 2^(⌈log2 n⌉-1), 2^(⌈log2 n⌉-2)) · count · s bytes sent per rank; here 2 steps, at most 2 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { copy, rankOf, recv, region, sameRegion, send, step, sub, vrankOf } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { binomialTree, ceilLog2, subtreeSize } from "../topology/binomial.js";

/** Where the blocks of the vrank range [first, first + n) sit in a rank-ordered buffer. */
export interface Piece {
  /** Offset in the rank-ordered buffer. */
  readonly offset: number;
  /** Offset within the range's vrank-ordered staging area. */
  readonly staged: number;
  readonly count: number;
}

/** prefix[r] = elements of the blocks of ranks 0..r-1; prefix[size] is the total. */
export function prefixSums(counts: readonly number[]): number[] {
  const prefix = [0];
  for (const c of counts) prefix.push(prefix[prefix.length - 1]! + c);
  return prefix;
}

/**
 * The blocks of vranks [first, first + span), in rank order: one piece, or two when the ranks
 * wrap past size-1 back to 0.
 */
export function rangePieces(first: number, span: number, root: number, prefix: readonly number[]): Piece[] {
  const size = prefix.length - 1;
  const start = rankOf(first, root, size);
  if (start + span <= size) {
    return [{ offset: prefix[start]!, staged: 0, count: prefix[start + span]! - prefix[start]! }];
  }
  const head = prefix[size]! - prefix[start]!;
  return [
    { offset: prefix[start]!, staged: 0, count: head },
    { offset: 0, staged: head, count: prefix[start + span - size]! },
  ];
}

const total = (pieces: readonly Piece[]): number => pieces.reduce((a, p) => a + p.count, 0);

export interface BlocksArgs {
  readonly rank: number;
  readonly size: number;
  readonly root: number;
  /** Elements in each rank's block, indexed by rank (uneven is fine). */
  readonly counts: readonly number[];
  /** This rank's block. */
  readonly own: Region;
  /** At the root: the buffer of all blocks in rank order (block r at counts[0] + ... + counts[r-1]). */
  readonly all: Region;
  /** First scratch element this building block may use. */
  readonly scratch: number;
}

/** Scratch elements rank needs in binomialGatherBlocks / binomialScatterBlocks. */
export function binomialBlocksScratch(rank: number, size: number, root: number, counts: readonly number[]): number {
  const prefix = prefixSums(counts);
  const vrank = vrankOf(rank, root, size);
  const node = binomialTree(vrank, size);
  if (vrank !== 0) return node.children.length === 0 ? 0 : total(rangePieces(vrank, node.subtree, root, prefix));
  let most = 0;
  for (const c of node.children) {
    const pieces = rangePieces(c, subtreeSize(c, size), root, prefix);
    if (pieces.length > 1) most = Math.max(most, total(pieces));
  }
  return most;
}

/** The binomial gather of uneven blocks, reusable (reduce/rabenseifner gathers its chunks with it). */
export function* binomialGatherBlocks(a: BlocksArgs): Schedule {
  const { rank, size, root, counts } = a;
  invariant(counts.length === size, () => `binomialGatherBlocks: ${counts.length} counts for size ${size}`);
  const prefix = prefixSums(counts);
  const vrank = vrankOf(rank, root, size);
  const node = binomialTree(vrank, size);
  const stage = (offset: number, count: number) => region("scratch", a.scratch + offset, count);
  // Children are received smallest subtree first: the reverse of the order a broadcast sends.
  const children = [...node.children].reverse();

  if (vrank === 0) {
    const mine = sub(a.all, prefix[rank]!, counts[rank]!);
    const own = sameRegion(mine, a.own) ? [] : [copy(mine, a.own)];
    if (children.length === 0) {
      if (own.length > 0) yield step("copy own block", [], own);
      return;
    }
    for (const [i, c] of children.entries()) {
      const peer = rankOf(c, root, size);
      const pieces = rangePieces(c, subtreeSize(c, size), root, prefix);
      const first = i === 0 ? own : [];
      if (pieces.length === 1) {
        yield step(`recv subtree of vrank ${c}`, [recv(peer, sub(a.all, pieces[0]!.offset, pieces[0]!.count))], first);
      } else {
        const unstage = pieces.map((p) => copy(sub(a.all, p.offset, p.count), stage(p.staged, p.count)));
        yield step(`recv subtree of vrank ${c}`, [recv(peer, stage(0, total(pieces)))], [...first, ...unstage]);
      }
    }
    return;
  }

  const parent = rankOf(node.parent, root, size);
  if (children.length === 0) {
    yield step("send own block", [send(parent, a.own)]);
    return;
  }
  // Scratch holds the subtree's blocks in vrank order: own block first, then each child's subtree.
  const base = (v: number) => {
    let off = 0;
    for (let u = vrank; u < v; u++) off += counts[rankOf(u, root, size)]!;
    return off;
  };
  for (const [i, c] of children.entries()) {
    const peer = rankOf(c, root, size);
    const span = subtreeSize(c, size);
    const count = base(c + span) - base(c);
    const first = i === 0 ? [copy(stage(0, a.own.count), a.own)] : [];
    yield step(`recv subtree of vrank ${c}`, [recv(peer, stage(base(c), count))], first);
  }
  yield step(`send subtree of vrank ${vrank}`, [send(parent, stage(0, base(vrank + node.subtree)))]);
}

/** Elements the largest non-root subtree holds when every block has `count` elements. */
export function largestSubtree(size: number): number {
  if (size < 2) return 0;
  const top = 1 << (ceilLog2(size) - 1);
  return Math.max(size - top, top >> 1);
}

const counts = (ctx: ScheduleContext) => Array.from({ length: ctx.size }, () => ctx.count);

export const binomial: Algorithm = {
  collective: "gather",
  name: "binomial",
  summary: "Gather up a binomial tree; inner ranks forward their whole subtree in one message.",
  limits: "any size and root; ⌈log2 n⌉ latency; inner ranks forward up to half the data",
  cost: {
    stepsFormula: "⌈log2 n⌉",
    bytesFormula: "max(n - 2^(⌈log2 n⌉-1), 2^(⌈log2 n⌉-2)) · count · s",
    steps: (n, count) => (count === 0 ? 0 : ceilLog2(n)),
    sentElements: (n, count) => largestSubtree(n) * count,
  },
  scratch: (ctx) => (ctx.count === 0 ? 0 : binomialBlocksScratch(ctx.rank, ctx.size, ctx.root, counts(ctx))),
  *schedule(ctx) {
    if (ctx.count === 0) return;
    const isRoot = ctx.rank === ctx.root;
    yield* binomialGatherBlocks({
      rank: ctx.rank,
      size: ctx.size,
      root: ctx.root,
      counts: counts(ctx),
      own: isRoot && ctx.inPlace ? region("output", ctx.root * ctx.count, ctx.count) : region("input", 0, ctx.count),
      all: region("output", 0, isRoot ? ctx.size * ctx.count : 0),
      scratch: 0,
    });
  },
};
