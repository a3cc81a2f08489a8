/**
 * allgather/gather_broadcast: all-gather as a binomial gather to rank 0 followed by a binomial
 * broadcast of the gathered buffer (the naive composition MPI libraries fall back to; kept as a
 * baseline for the ring, recursive-doubling and Bruck all-gathers).
 *
 * Composed from family A's building blocks: binomialGatherBlocks collects every rank's chunk in
 * rank 0's output, then binomialBroadcast sends the whole n·count output down the tree.
 *
 * Limits: any size; 2⌈log2 n⌉ latency, but rank 0 sends the whole output ⌈log2 n⌉ times, so it is
 * a bandwidth bottleneck for all but tiny messages.
 * Cost: 2⌈log2 n⌉ steps; ⌈log2 n⌉ · n · count · s bytes sent per rank (rank 0).
 *
 * Step table (n = 4), from `cclab explain allgather --algorithm gather_broadcast -n 4`:
 * allgather/gather_broadcast: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recv subtree of vrank 1: out[1]<-1 out[0]=in[0]
 *   rank 1  send own block: in[0]->0
 *   rank 2  recv subtree of vrank 3: tmp[1]<-3 tmp[0]=in[0]
 *   rank 3  send own block: in[0]->2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     .       .       .
 *   out[1]  [1]     .       .       .
 *   out[2]  .       .       .       .
 *   out[3]  .       .       .       .
 *   tmp[0]                  [2]
 *   tmp[1]                  [3]
 *
 * step 2
 *   rank 0  recv subtree of vrank 2: out[2:4]<-2
 *   rank 1  recv: out[0:4]<-0
 *   rank 2  send subtree of vrank 2: tmp[0:2]->0
 *   rank 3  recv: out[0:4]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     .       [0]
 *   out[1]  [1]     [1]     .       [1]
 *   out[2]  [2]     [2]     .       [2]
 *   out[3]  [3]     [3]     .       [3]
 *   tmp[0]                  [2]
 *   tmp[1]                  [3]
 *
 * step 3
 *   rank 0  send to vrank 2: out[0:4]->2
 *   rank 1  -
 *   rank 2  recv: out[0:4]<-0
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *   tmp[0]                  [2]
 *   tmp[1]                  [3]
 *
 * step 4
 *   rank 0  send to vrank 1: out[0:4]->1
 *   rank 1  -
 *   rank 2  send to vrank 3: out[0:4]->3
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *   tmp[0]                  [2]
 *   tmp[1]                  [3]
 *
 * cost: 2⌈log2 n⌉ steps, ⌈log2 n⌉ · n · count · s bytes sent per rank; here 4 steps, at most 8 elements sent by a rank
 */
import { region } from "../../src/schedule/build.js";
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { binomialBroadcast } from "../broadcast/binomial.js";
import { binomialBlocksScratch, binomialGatherBlocks } from "../gather/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

const ROOT = 0;
const counts = (ctx: ScheduleContext) => Array.from({ length: ctx.size }, () => ctx.count);

export const allgatherGatherBroadcast: Algorithm = {
  collective: "allgather",
  name: "gather_broadcast",
  summary: "Binomial gather to rank 0, then binomial broadcast of the whole output.",
  limits: "any size; log latency; rank 0 sends the whole output ⌈log2 n⌉ times",
  cost: {
    stepsFormula: "2⌈log2 n⌉",
    bytesFormula: "⌈log2 n⌉ · n · count · s",
    steps: (n, count) => (count === 0 ? 0 : 2 * ceilLog2(n)),
    sentElements: (n, count) => ceilLog2(n) * n * count,
  },
  scratch: (ctx) => (ctx.count === 0 ? 0 : binomialBlocksScratch(ctx.rank, ctx.size, ROOT, counts(ctx))),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, size * count);
    // In place the chunk already sits in the output; naming it there lets the gather skip the self-copy.
    const own = ctx.inPlace ? region("output", rank * count, count) : region("input", 0, count);
    yield* binomialGatherBlocks({ rank, size, root: ROOT, counts: counts(ctx), own, all: out, scratch: 0 });
    yield* binomialBroadcast(rank, size, ROOT, out);
  },
};
