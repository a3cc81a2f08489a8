/**
 * allreduce/ring: ring all-reduce (MPICH allreduce_intra_ring, NCCL's ring algorithm).
 *
 * Out of place the input is first copied to the output; then the output, partitioned into n
 * uneven chunks, goes through a ring reduce-scatter (n-1 recvReduceSend steps, after which rank r
 * holds chunk r reduced) and a ring all-gather of those chunks (n-1 recvCopySend steps). Both
 * phases are the shared building blocks ringReduceScatter and ringAllGather, composed.
 *
 * Limits: any size; bandwidth-optimal, latency 2(n-1)·alpha; count < n leaves some chunks empty
 * (zero-length messages); scratch one chunk.
 * Cost: 2(n-1) steps; 2(n-1)/n · count · s bytes sent per rank (exactly 2·count minus the two
 * chunks a rank never sends).
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm ring -n 4`:
 * allreduce/ring: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: out[0:4]=in[0:4]
 *   rank 1  copy input: out[0:4]=in[0:4]
 *   rank 2  copy input: out[0:4]=in[0:4]
 *   rank 3  copy input: out[0:4]=in[0:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [1]     [2]     [3]
 *   out[1]  [0]     [1]     [2]     [3]
 *   out[2]  [0]     [1]     [2]     [3]
 *   out[3]  [0]     [1]     [2]     [3]
 *
 * step 1
 *   rank 0  recvReduceSend chunk 2: out[3]->1 tmp[0]<-3 out[2]+=tmp[0]
 *   rank 1  recvReduceSend chunk 3: out[0]->2 tmp[0]<-0 out[3]+=tmp[0]
 *   rank 2  recvReduceSend chunk 0: out[1]->3 tmp[0]<-1 out[0]+=tmp[0]
 *   rank 3  recvReduceSend chunk 1: out[2]->0 tmp[0]<-2 out[1]+=tmp[0]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [1]     [1+2]   [3]
 *   out[1]  [0]     [1]     [2]     [2+3]
 *   out[2]  [0+3]   [1]     [2]     [3]
 *   out[3]  [0]     [0+1]   [2]     [3]
 *   tmp[0]  [3]     [0]     [1]     [2]
 *
 * step 2
 *   rank 0  recvReduceSend chunk 1: out[2]->1 tmp[0]<-3 out[1]+=tmp[0]
 *   rank 1  recvReduceSend chunk 2: out[3]->2 tmp[0]<-0 out[2]+=tmp[0]
 *   rank 2  recvReduceSend chunk 3: out[0]->3 tmp[0]<-1 out[3]+=tmp[0]
 *   rank 3  recvReduceSend chunk 0: out[1]->0 tmp[0]<-2 out[0]+=tmp[0]
 *           rank 0   rank 1   rank 2   rank 3
 *   out[0]  [0]      [1]      [1+2]    [1+2+3]
 *   out[1]  [0+2+3]  [1]      [2]      [2+3]
 *   out[2]  [0+3]    [0+1+3]  [2]      [3]
 *   out[3]  [0]      [0+1]    [0+1+2]  [3]
 *   tmp[0]  [2+3]    [0+3]    [0+1]    [1+2]
 *
 * step 3
 *   rank 0  recvReduceSend chunk 0: out[1]->1 tmp[0]<-3 out[0]+=tmp[0]
 *   rank 1  recvReduceSend chunk 1: out[2]->2 tmp[0]<-0 out[1]+=tmp[0]
 *   rank 2  recvReduceSend chunk 2: out[3]->3 tmp[0]<-1 out[2]+=tmp[0]
 *   rank 3  recvReduceSend chunk 3: out[0]->0 tmp[0]<-2 out[3]+=tmp[0]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [1]        [1+2]      [1+2+3]
 *   out[1]  [0+2+3]    [0+1+2+3]  [2]        [2+3]
 *   out[2]  [0+3]      [0+1+3]    [0+1+2+3]  [3]
 *   out[3]  [0]        [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * step 4
 *   rank 0  recvCopySend chunk 3: out[0]->1 out[3]<-3
 *   rank 1  recvCopySend chunk 0: out[1]->2 out[0]<-0
 *   rank 2  recvCopySend chunk 1: out[2]->3 out[1]<-1
 *   rank 3  recvCopySend chunk 2: out[3]->0 out[2]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [1+2]      [1+2+3]
 *   out[1]  [0+2+3]    [0+1+2+3]  [0+1+2+3]  [2+3]
 *   out[2]  [0+3]      [0+1+3]    [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * step 5
 *   rank 0  recvCopySend chunk 2: out[3]->1 out[2]<-3
 *   rank 1  recvCopySend chunk 3: out[0]->2 out[3]<-0
 *   rank 2  recvCopySend chunk 0: out[1]->3 out[0]<-1
 *   rank 3  recvCopySend chunk 1: out[2]->0 out[1]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [1+2+3]
 *   out[1]  [0+2+3]    [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+3]    [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2]    [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * step 6
 *   rank 0  recvCopySend chunk 1: out[2]->1 out[1]<-3
 *   rank 1  recvCopySend chunk 2: out[3]->2 out[2]<-0
 *   rank 2  recvCopySend chunk 3: out[0]->3 out[3]<-1
 *   rank 3  recvCopySend chunk 0: out[1]->0 out[0]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * cost: 2(n-1) steps, 2(n-1)/n · count · s bytes sent per rank; here 6 steps, at most 6 elements sent by a rank
 */
import { copy, partition, region, step } from "../../src/schedule/build.js";
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { ringAllGather } from "../allgather/ring.js";
import { ringReduceScatter } from "../reducescatter/ring.js";

export const allreduceRing: Algorithm = {
  collective: "allreduce",
  name: "ring",
  summary: "Ring all-reduce: ring reduce-scatter then ring all-gather over n chunks.",
  limits: "any size; bandwidth-optimal; latency grows as 2(n-1)",
  cost: {
    stepsFormula: "2(n-1)",
    bytesFormula: "2(n-1)/n · count · s",
    steps: (n, count) => (count === 0 ? 0 : 2 * (n - 1)),
    sentElements: (n, count) => {
      if (count === 0 || n === 1) return 0;
      // Rank r sends every chunk but r in the reduce-scatter and every chunk but r+1 in the all-gather.
      const c = partition(count, n).map((ch) => ch.count);
      let max = 0;
      for (let r = 0; r < n; r++) max = Math.max(max, 2 * count - c[r]! - c[(r + 1) % n]!);
      return max;
    },
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : Math.ceil(ctx.count / ctx.size)),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (!ctx.inPlace) yield step("copy input", [], [copy(out, region("input", 0, count))]);
    if (size === 1) return;
    const chunks = partition(count, size);
    yield* ringReduceScatter(rank, size, out, chunks, region("scratch", 0, chunks[0]!.count));
    yield* ringAllGather(rank, size, out, chunks);
  },
};
