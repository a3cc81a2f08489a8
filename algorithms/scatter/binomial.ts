/**
 * scatter/binomial: scatter down a binomial tree rooted at the root (Open MPI's
 * ompi_coll_base_scatter_intra_binomial, MPICH's MPIR_Scatter_intra_binomial).
 *
 * The root sends each child the blocks of the child's whole subtree (a contiguous vrank range)
 * in one message, largest subtree first; an inner rank receives its subtree's blocks in scratch,
 * keeps its own and passes each child its part. The one subtree whose ranks wrap past size-1
 * to 0 is first packed into scratch at the root, since a message is one contiguous region.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency, but the root sends (n-1)·count like linear.
 * Cost: ⌈log2 n⌉ steps; (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain scatter --algorithm binomial -n 4`:
 * scatter/binomial: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  send subtree of vrank 2: in[2:4]->2 out[0]=in[0]
 *   rank 1  recv own block: out[0]<-0
 *   rank 2  recv subtree of vrank 2: tmp[0:2]<-0 out[0]=tmp[0]
 *   rank 3  recv own block: out[0]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   tmp[0]                  [0]
 *   tmp[1]                  [0]
 *
 * step 2
 *   rank 0  send subtree of vrank 1: in[1]->1
 *   rank 1  -
 *   rank 2  send subtree of vrank 3: tmp[1]->3
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   tmp[0]                  [0]
 *   tmp[1]                  [0]
 *
 * cost: ⌈log2 n⌉ steps, (n-1) · count · s bytes sent per rank; here 2 steps, at most 3 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { copy, rankOf, recv, region, sameRegion, send, step, sub, vrankOf } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { binomialBlocksScratch, prefixSums, rangePieces } from "../gather/binomial.js";
import { binomialTree, ceilLog2, subtreeSize } from "../topology/binomial.js";

export interface ScatterBlocksArgs {
  readonly rank: number;
  readonly size: number;
  readonly root: number;
  /** Elements in each rank's block, indexed by rank (uneven is fine). */
  readonly counts: readonly number[];
  /** At the root: the buffer of all blocks in rank order. */
  readonly all: Region;
  /** Where this rank's block goes. */
  readonly own: Region;
  /** First scratch element this building block may use. */
  readonly scratch: number;
}

/** The binomial scatter of uneven blocks; scratch needs are binomialBlocksScratch's. */
export function* binomialScatterBlocks(a: ScatterBlocksArgs): Schedule {
  const { rank, size, root, counts } = a;
  invariant(counts.length === size, () => `binomialScatterBlocks: ${counts.length} counts for size ${size}`);
  const prefix = prefixSums(counts);
  const vrank = vrankOf(rank, root, size);
  const node = binomialTree(vrank, size);
  const stage = (offset: number, count: number) => region("scratch", a.scratch + offset, count);

  if (vrank === 0) {
    const mine = sub(a.all, prefix[rank]!, counts[rank]!);
    const own = sameRegion(mine, a.own) ? [] : [copy(a.own, mine)];
    // Pack the wrapping subtree (at most one) before anything is sent.
    const pack: ReturnType<typeof copy>[] = [];
    const sources = node.children.map((c) => {
      const pieces = rangePieces(c, subtreeSize(c, size), root, prefix);
      if (pieces.length === 1) return sub(a.all, pieces[0]!.offset, pieces[0]!.count);
      for (const p of pieces) pack.push(copy(stage(p.staged, p.count), sub(a.all, p.offset, p.count)));
      return stage(
        0,
        pieces.reduce((s, p) => s + p.count, 0),
      );
    });
    if (node.children.length === 0) {
      if (own.length > 0) yield step("copy own block", [], own);
      return;
    }
    if (pack.length > 0) yield step("pack wrapped subtree", [], pack);
    for (const [i, c] of node.children.entries()) {
      yield step(`send subtree of vrank ${c}`, [send(rankOf(c, root, size), sources[i]!)], i === 0 ? own : []);
    }
    return;
  }

  const parent = rankOf(node.parent, root, size);
  if (node.children.length === 0) {
    yield step("recv own block", [recv(parent, a.own)]);
    return;
  }
  // Scratch holds the subtree's blocks in vrank order: own block first, then each child's subtree.
  const base = (v: number) => {
    let off = 0;
    for (let u = vrank; u < v; u++) off += counts[rankOf(u, root, size)]!;
    return off;
  };
  yield step(
    `recv subtree of vrank ${vrank}`,
    [recv(parent, stage(0, base(vrank + node.subtree)))],
    [copy(a.own, stage(0, a.own.count))],
  );
  for (const c of node.children) {
    const count = base(c + subtreeSize(c, size)) - base(c);
    yield step(`send subtree of vrank ${c}`, [send(rankOf(c, root, size), stage(base(c), count))]);
  }
}

const counts = (ctx: ScheduleContext) => Array.from({ length: ctx.size }, () => ctx.count);

export const binomial: Algorithm = {
  collective: "scatter",
  name: "binomial",
  summary: "Scatter down a binomial tree; each child gets its whole subtree's blocks in one message.",
  limits: "any size and root; ⌈log2 n⌉ latency; the root still sends (n-1)·count",
  cost: {
    stepsFormula: "⌈log2 n⌉",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (count === 0 ? 0 : ceilLog2(n)),
    sentElements: (n, count) => (n - 1) * count,
  },
  scratch: (ctx) => (ctx.count === 0 ? 0 : binomialBlocksScratch(ctx.rank, ctx.size, ctx.root, counts(ctx))),
  *schedule(ctx) {
    if (ctx.count === 0) return;
    const isRoot = ctx.rank === ctx.root;
    yield* binomialScatterBlocks({
      rank: ctx.rank,
      size: ctx.size,
      root: ctx.root,
      counts: counts(ctx),
      all: region("input", 0, isRoot ? ctx.size * ctx.count : 0),
      own: isRoot && ctx.inPlace ? region("input", ctx.root * ctx.count, ctx.count) : region("output", 0, ctx.count),
      scratch: 0,
    });
  },
};
