/**
 * reducescatter/reduce_scatter: reduce-scatter as a binomial reduce of the whole n·count input
 * to rank 0 followed by a binomial scatter of the result (the naive composition; kept as a
 * baseline for the ring and recursive-halving reduce-scatters).
 *
 * Composed from family A's building blocks: binomialReduce accumulates in scratch (so the input
 * is never written) and leaves the full reduction in rank 0's scratch, then
 * binomialScatterBlocks hands every rank its chunk.
 *
 * Limits: any size, commutative ops; 2⌈log2 n⌉ latency, but every reduce step carries all n·count
 * elements and rank 0 sends (n-1)·count more; scratch 2·n·count.
 * Cost: 2⌈log2 n⌉ steps; (n + m - 1) · count · s bytes sent per rank, m = the largest subtree below
 * rank 0 (max(n - 2^(⌈log2 n⌉-1), 2^(⌈log2 n⌉-2))).
 *
 * Step table (n = 4), from `cclab explain reducescatter --algorithm reduce_scatter -n 4`:
 * reducescatter/reduce_scatter: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recvReduce from vrank 1: tmp[4:8]<-1 tmp[0:4]=in[0:4] tmp[0:4]+=tmp[4:8]
 *   rank 1  send: in[0:4]->0
 *   rank 2  recvReduce from vrank 3: tmp[4:8]<-3 tmp[0:4]=in[0:4] tmp[0:4]+=tmp[4:8]
 *   rank 3  send: in[0:4]->2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   tmp[0]  [0+1]   .       [2+3]   .
 *   tmp[1]  [0+1]   .       [2+3]   .
 *   tmp[2]  [0+1]   .       [2+3]   .
 *   tmp[3]  [0+1]   .       [2+3]   .
 *   tmp[4]  [1]     .       [3]     .
 *   tmp[5]  [1]     .       [3]     .
 *   tmp[6]  [1]     .       [3]     .
 *   tmp[7]  [1]     .       [3]     .
 *   tmp[8]                  .
 *   tmp[9]                  .
 *
 * step 2
 *   rank 0  recvReduce from vrank 2: tmp[4:8]<-2 tmp[0:4]+=tmp[4:8]
 *   rank 1  recv own block: out[0]<-0
 *   rank 2  send: tmp[0:4]->0
 *   rank 3  recv own block: out[0]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  .          [0+1+2+3]  .          [0+1+2+3]
 *   tmp[0]  [0+1+2+3]  .          [2+3]      .
 *   tmp[1]  [0+1+2+3]  .          [2+3]      .
 *   tmp[2]  [0+1+2+3]  .          [2+3]      .
 *   tmp[3]  [0+1+2+3]  .          [2+3]      .
 *   tmp[4]  [2+3]      .          [3]        .
 *   tmp[5]  [2+3]      .          [3]        .
 *   tmp[6]  [2+3]      .          [3]        .
 *   tmp[7]  [2+3]      .          [3]        .
 *   tmp[8]                        .
 *   tmp[9]                        .
 *
 * step 3
 *   rank 0  send subtree of vrank 2: tmp[2:4]->2 out[0]=tmp[0]
 *   rank 1  -
 *   rank 2  recv subtree of vrank 2: tmp[8:10]<-0 out[0]=tmp[8]
 *   rank 3  -
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [0+1+2+3]  .          [2+3]      .
 *   tmp[1]  [0+1+2+3]  .          [2+3]      .
 *   tmp[2]  [0+1+2+3]  .          [2+3]      .
 *   tmp[3]  [0+1+2+3]  .          [2+3]      .
 *   tmp[4]  [2+3]      .          [3]        .
 *   tmp[5]  [2+3]      .          [3]        .
 *   tmp[6]  [2+3]      .          [3]        .
 *   tmp[7]  [2+3]      .          [3]        .
 *   tmp[8]                        [0+1+2+3]
 *   tmp[9]                        [0+1+2+3]
 *
 * step 4
 *   rank 0  send subtree of vrank 1: tmp[1]->1
 *   rank 1  -
 *   rank 2  send subtree of vrank 3: tmp[9]->3
 *   rank 3  -
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [0+1+2+3]  .          [2+3]      .
 *   tmp[1]  [0+1+2+3]  .          [2+3]      .
 *   tmp[2]  [0+1+2+3]  .          [2+3]      .
 *   tmp[3]  [0+1+2+3]  .          [2+3]      .
 *   tmp[4]  [2+3]      .          [3]        .
 *   tmp[5]  [2+3]      .          [3]        .
 *   tmp[6]  [2+3]      .          [3]        .
 *   tmp[7]  [2+3]      .          [3]        .
 *   tmp[8]                        [0+1+2+3]
 *   tmp[9]                        [0+1+2+3]
 *
 * cost: 2⌈log2 n⌉ steps, (n + m - 1) · count · s, m = largest subtree below rank 0 bytes sent per rank; here 4 steps, at most 5 elements sent by a rank
 */
import { copy, region, step } from "../../src/schedule/build.js";
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { binomialBlocksScratch, largestSubtree } from "../gather/binomial.js";
import { binomialReduce } from "../reduce/binomial.js";
import { binomialScatterBlocks } from "../scatter/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

const ROOT = 0;
const counts = (ctx: ScheduleContext) => Array.from({ length: ctx.size }, () => ctx.count);

export const reducescatterReduceScatter: Algorithm = {
  collective: "reducescatter",
  name: "reduce_scatter",
  summary: "Binomial reduce of the whole input to rank 0, then binomial scatter of the chunks.",
  limits: "any size, commutative ops; log latency; every step carries n·count; scratch 2·n·count",
  cost: {
    stepsFormula: "2⌈log2 n⌉",
    bytesFormula: "(n + m - 1) · count · s, m = largest subtree below rank 0",
    steps: (n, count) => (count === 0 ? 0 : 2 * ceilLog2(n)),
    sentElements: (n, count) => (n === 1 ? 0 : (n + largestSubtree(n) - 1) * count),
  },
  scratch: (ctx) =>
    ctx.size === 1 || ctx.count === 0
      ? 0
      : 2 * ctx.size * ctx.count + binomialBlocksScratch(ctx.rank, ctx.size, ROOT, counts(ctx)),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const total = size * count;
    const input = region("input", 0, total);
    const out = region("output", 0, count);
    if (size === 1) {
      if (!ctx.inPlace) yield step("copy input", [], [copy(out, input)]);
      return;
    }
    // scratch[0, total): the root's result (a non-root's accumulator); scratch[total, 2·total): receive buffer.
    const result = region("scratch", 0, total);
    const tmp = region("scratch", total, total);
    yield* binomialReduce(rank, size, ROOT, input, result, result, tmp);
    yield* binomialScatterBlocks({
      rank,
      size,
      root: ROOT,
      counts: counts(ctx),
      all: result,
      own: out,
      scratch: 2 * total,
    });
  },
};
