/**
 * reduce/rabenseifner: Rabenseifner's reduce, a reduce-scatter followed by a gather of the
 * reduced chunks to the root (MPICH's MPIR_Reduce_intra_reduce_scatter_gather; here the
 * reduce-scatter is family B's ring, which takes any size and uneven chunks).
 *
 * The message is split into n chunks (partition(count, n)), chunk v belonging to vrank v. Every
 * rank accumulates a copy of its input (the root in its output, others in scratch, so no input
 * is written), runs reducescatter/ring's ringReduceScatter in vrank space, after which vrank v
 * holds chunk v fully reduced, and gather/binomial's binomialGatherBlocks (rooted at vrank 0)
 * then brings the chunks, already in order, to the root's output.
 *
 * Limits: any size and root; for large messages (≈ 2·count sent per rank instead of
 * ⌈log2 n⌉·count); latency (n - 1 + ⌈log2 n⌉)·alpha with the ring; scratch about 2·count on
 * non-roots.
 * Cost: n - 1 + ⌈log2 n⌉ steps; max over vranks v of (count - c_v + Σ chunks of v's subtree, v > 0) · s
 * bytes sent per rank (≈ 2(n-1)/n · count · s).
 *
 * Step table (n = 4), from `cclab explain reduce --algorithm rabenseifner -n 4`:
 * reduce/rabenseifner: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: out[0:4]=in[0:4]
 *   rank 1  copy input: tmp[0:4]=in[0:4]
 *   rank 2  copy input: tmp[0:4]=in[0:4]
 *   rank 3  copy input: tmp[0:4]=in[0:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]
 *   out[1]  [0]
 *   out[2]  [0]
 *   out[3]  [0]
 *   tmp[0]  .       [1]     [2]     [3]
 *   tmp[1]          [1]     [2]     [3]
 *   tmp[2]          [1]     [2]     [3]
 *   tmp[3]          [1]     [2]     [3]
 *   tmp[4]          .       .       .
 *   tmp[5]                  .
 *   tmp[6]                  .
 *
 * step 1
 *   rank 0  recvReduceSend chunk 2: out[3]->1 tmp[0]<-3 out[2]+=tmp[0]
 *   rank 1  recvReduceSend chunk 3: tmp[0]->2 tmp[4]<-0 tmp[3]+=tmp[4]
 *   rank 2  recvReduceSend chunk 0: tmp[1]->3 tmp[4]<-1 tmp[0]+=tmp[4]
 *   rank 3  recvReduceSend chunk 1: tmp[2]->0 tmp[4]<-2 tmp[1]+=tmp[4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]
 *   out[1]  [0]
 *   out[2]  [0+3]
 *   out[3]  [0]
 *   tmp[0]  [3]     [1]     [1+2]   [3]
 *   tmp[1]          [1]     [2]     [2+3]
 *   tmp[2]          [1]     [2]     [3]
 *   tmp[3]          [0+1]   [2]     [3]
 *   tmp[4]          [0]     [1]     [2]
 *   tmp[5]                  .
 *   tmp[6]                  .
 *
 * step 2
 *   rank 0  recvReduceSend chunk 1: out[2]->1 tmp[0]<-3 out[1]+=tmp[0]
 *   rank 1  recvReduceSend chunk 2: tmp[3]->2 tmp[4]<-0 tmp[2]+=tmp[4]
 *   rank 2  recvReduceSend chunk 3: tmp[0]->3 tmp[4]<-1 tmp[3]+=tmp[4]
 *   rank 3  recvReduceSend chunk 0: tmp[1]->0 tmp[4]<-2 tmp[0]+=tmp[4]
 *           rank 0   rank 1   rank 2   rank 3
 *   out[0]  [0]
 *   out[1]  [0+2+3]
 *   out[2]  [0+3]
 *   out[3]  [0]
 *   tmp[0]  [2+3]    [1]      [1+2]    [1+2+3]
 *   tmp[1]           [1]      [2]      [2+3]
 *   tmp[2]           [0+1+3]  [2]      [3]
 *   tmp[3]           [0+1]    [0+1+2]  [3]
 *   tmp[4]           [0+3]    [0+1]    [1+2]
 *   tmp[5]                    .
 *   tmp[6]                    .
 *
 * step 3
 *   rank 0  recvReduceSend chunk 0: out[1]->1 tmp[0]<-3 out[0]+=tmp[0]
 *   rank 1  recvReduceSend chunk 1: tmp[2]->2 tmp[4]<-0 tmp[1]+=tmp[4]
 *   rank 2  recvReduceSend chunk 2: tmp[3]->3 tmp[4]<-1 tmp[2]+=tmp[4]
 *   rank 3  recvReduceSend chunk 3: tmp[0]->0 tmp[4]<-2 tmp[3]+=tmp[4]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]
 *   out[1]  [0+2+3]
 *   out[2]  [0+3]
 *   out[3]  [0]
 *   tmp[0]  [1+2+3]    [1]        [1+2]      [1+2+3]
 *   tmp[1]             [0+1+2+3]  [2]        [2+3]
 *   tmp[2]             [0+1+3]    [0+1+2+3]  [3]
 *   tmp[3]             [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[4]             [0+2+3]    [0+1+3]    [0+1+2]
 *   tmp[5]                        .
 *   tmp[6]                        .
 *
 * step 4
 *   rank 0  recv subtree of vrank 1: out[1]<-1
 *   rank 1  send own block: tmp[1]->0
 *   rank 2  recv subtree of vrank 3: tmp[6]<-3 tmp[5]=tmp[2]
 *   rank 3  send own block: tmp[3]->2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]
 *   out[1]  [0+1+2+3]
 *   out[2]  [0+3]
 *   out[3]  [0]
 *   tmp[0]  [1+2+3]    [1]        [1+2]      [1+2+3]
 *   tmp[1]             [0+1+2+3]  [2]        [2+3]
 *   tmp[2]             [0+1+3]    [0+1+2+3]  [3]
 *   tmp[3]             [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[4]             [0+2+3]    [0+1+3]    [0+1+2]
 *   tmp[5]                        [0+1+2+3]
 *   tmp[6]                        [0+1+2+3]
 *
 * step 5
 *   rank 0  recv subtree of vrank 2: out[2:4]<-2
 *   rank 1  -
 *   rank 2  send subtree of vrank 2: tmp[5:7]->0
 *   rank 3  -
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]
 *   out[1]  [0+1+2+3]
 *   out[2]  [0+1+2+3]
 *   out[3]  [0+1+2+3]
 *   tmp[0]  [1+2+3]    [1]        [1+2]      [1+2+3]
 *   tmp[1]             [0+1+2+3]  [2]        [2+3]
 *   tmp[2]             [0+1+3]    [0+1+2+3]  [3]
 *   tmp[3]             [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[4]             [0+2+3]    [0+1+3]    [0+1+2]
 *   tmp[5]                        [0+1+2+3]
 *   tmp[6]                        [0+1+2+3]
 *
 * cost: n - 1 + ⌈log2 n⌉ steps, max over vranks v of (count - c_v + Σ chunks of v's subtree, v > 0) · s ≈ 2(n-1)/n · count · s bytes sent per rank; here 5 steps, at most 5 elements sent by a rank
 */
import { copy, mapPeers, partition, rankOf, region, sameRegion, step, sub, vrankOf } from "../../src/schedule/build.js";
import type { Algorithm, ScheduleContext } from "../../src/schedule/types.js";
import { binomialBlocksScratch, binomialGatherBlocks } from "../gather/binomial.js";
import { ringReduceScatter } from "../reducescatter/ring.js";
import { ceilLog2, subtreeSize } from "../topology/binomial.js";

/** Scratch layout: [accumulator (non-roots)] [receive temporary] [gather staging]. */
function layoutOf(ctx: ScheduleContext) {
  const chunks = partition(ctx.count, ctx.size);
  const counts = chunks.map((c) => c.count);
  const acc = ctx.rank === ctx.root ? 0 : ctx.count;
  const tmp = Math.max(0, ...counts);
  const gather = binomialBlocksScratch(vrankOf(ctx.rank, ctx.root, ctx.size), ctx.size, 0, counts);
  return { chunks, counts, acc, tmp, gather, total: acc + tmp + gather };
}

export const rabenseifner: Algorithm = {
  collective: "reduce",
  name: "rabenseifner",
  summary: "Reduce-scatter (ring) then a binomial gather of the reduced chunks to the root.",
  limits: "any size and root; for large messages; latency (n - 1 + ⌈log2 n⌉)·alpha",
  cost: {
    stepsFormula: "n - 1 + ⌈log2 n⌉",
    bytesFormula: "max over vranks v of (count - c_v + Σ chunks of v's subtree, v > 0) · s ≈ 2(n-1)/n · count · s",
    steps: (n, count) => (count === 0 ? 0 : n - 1 + ceilLog2(n)),
    sentElements: (n, count) => {
      if (n === 1 || count === 0) return 0;
      // The ring sends every chunk but the vrank's own; the gather sends the vrank's subtree.
      const chunks = partition(count, n);
      let most = count - chunks[0]!.count;
      for (let v = 1; v < n; v++) {
        let subtree = 0;
        for (let u = v; u < v + subtreeSize(v, n); u++) subtree += chunks[u]!.count;
        most = Math.max(most, count - chunks[v]!.count + subtree);
      }
      return most;
    },
  },
  scratch: (ctx) => (ctx.count === 0 || ctx.size === 1 ? 0 : layoutOf(ctx).total),
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    const input = region("input", 0, count);
    const isRoot = rank === root;
    const acc = isRoot ? (ctx.inPlace ? input : region("output", 0, count)) : region("scratch", 0, count);
    if (!sameRegion(acc, input)) yield step("copy input", [], [copy(acc, input)]);
    if (size === 1) return;
    const l = layoutOf(ctx);
    // Both phases run in vrank space with chunk v belonging to vrank v, so the gather's root is
    // vrank 0, no subtree wraps, and the cost is the same for every root.
    const vrank = vrankOf(rank, root, size);
    const toRank = (v: number) => rankOf(v, root, size);
    yield* mapPeers(ringReduceScatter(vrank, size, acc, l.chunks, region("scratch", l.acc, l.tmp)), toRank);
    const mine = l.chunks[vrank]!;
    const gather = binomialGatherBlocks({
      rank: vrank,
      size,
      root: 0,
      counts: l.counts,
      own: sub(acc, mine.offset, mine.count),
      all: isRoot ? acc : region("output", 0, 0),
      scratch: l.acc + l.tmp,
    });
    yield* mapPeers(gather, toRank);
  },
};
