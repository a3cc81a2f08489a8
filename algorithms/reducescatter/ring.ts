/**
 * reducescatter/ring: ring reduce-scatter (MPICH reduce_scatter ring, NCCL's ring reduce-scatter).
 *
 * Each rank copies its input to a scratch accumulator (so the input is never written), then for
 * n-1 steps sends to next the chunk it reduced last and receives from prev the next chunk into a
 * temporary, reducing it into the accumulator (recvReduceSend). After n-1 steps chunk r on rank
 * r holds every rank's contribution; it is copied to the output. `ringReduceScatter` is the
 * building block over explicit chunks that ring all-reduce and Rabenseifner reduce reuse.
 *
 * Limits: any size; bandwidth-optimal, latency (n-1)·alpha; scratch (n+1)·count.
 * Cost: n-1 steps; (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain reducescatter --algorithm ring -n 4`:
 * reducescatter/ring: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: tmp[0:4]=in[0:4]
 *   rank 1  copy input: tmp[0:4]=in[0:4]
 *   rank 2  copy input: tmp[0:4]=in[0:4]
 *   rank 3  copy input: tmp[0:4]=in[0:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  [0]     [1]     [2]     [3]
 *   tmp[2]  [0]     [1]     [2]     [3]
 *   tmp[3]  [0]     [1]     [2]     [3]
 *   tmp[4]  .       .       .       .
 *
 * step 1
 *   rank 0  recvReduceSend chunk 2: tmp[3]->1 tmp[4]<-3 tmp[2]+=tmp[4]
 *   rank 1  recvReduceSend chunk 3: tmp[0]->2 tmp[4]<-0 tmp[3]+=tmp[4]
 *   rank 2  recvReduceSend chunk 0: tmp[1]->3 tmp[4]<-1 tmp[0]+=tmp[4]
 *   rank 3  recvReduceSend chunk 1: tmp[2]->0 tmp[4]<-2 tmp[1]+=tmp[4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   tmp[0]  [0]     [1]     [1+2]   [3]
 *   tmp[1]  [0]     [1]     [2]     [2+3]
 *   tmp[2]  [0+3]   [1]     [2]     [3]
 *   tmp[3]  [0]     [0+1]   [2]     [3]
 *   tmp[4]  [3]     [0]     [1]     [2]
 *
 * step 2
 *   rank 0  recvReduceSend chunk 1: tmp[2]->1 tmp[4]<-3 tmp[1]+=tmp[4]
 *   rank 1  recvReduceSend chunk 2: tmp[3]->2 tmp[4]<-0 tmp[2]+=tmp[4]
 *   rank 2  recvReduceSend chunk 3: tmp[0]->3 tmp[4]<-1 tmp[3]+=tmp[4]
 *   rank 3  recvReduceSend chunk 0: tmp[1]->0 tmp[4]<-2 tmp[0]+=tmp[4]
 *           rank 0   rank 1   rank 2   rank 3
 *   out[0]  .        .        .        .
 *   tmp[0]  [0]      [1]      [1+2]    [1+2+3]
 *   tmp[1]  [0+2+3]  [1]      [2]      [2+3]
 *   tmp[2]  [0+3]    [0+1+3]  [2]      [3]
 *   tmp[3]  [0]      [0+1]    [0+1+2]  [3]
 *   tmp[4]  [2+3]    [0+3]    [0+1]    [1+2]
 *
 * step 3
 *   rank 0  recvReduceSend chunk 0: tmp[1]->1 tmp[4]<-3 tmp[0]+=tmp[4]; copy result: out[0]=tmp[0]
 *   rank 1  recvReduceSend chunk 1: tmp[2]->2 tmp[4]<-0 tmp[1]+=tmp[4]; copy result: out[0]=tmp[1]
 *   rank 2  recvReduceSend chunk 2: tmp[3]->3 tmp[4]<-1 tmp[2]+=tmp[4]; copy result: out[0]=tmp[2]
 *   rank 3  recvReduceSend chunk 3: tmp[0]->0 tmp[4]<-2 tmp[3]+=tmp[4]; copy result: out[0]=tmp[3]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [0+1+2+3]  [1]        [1+2]      [1+2+3]
 *   tmp[1]  [0+2+3]    [0+1+2+3]  [2]        [2+3]
 *   tmp[2]  [0+3]      [0+1+3]    [0+1+2+3]  [3]
 *   tmp[3]  [0]        [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[4]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * cost: n-1 steps, (n-1) · count · s bytes sent per rank; here 3 steps, at most 3 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { type Chunk, copy, recv, reduce, region, send, step, sub } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { allGatherChunks } from "../allgather/ring.js";
import { mod, ring } from "../topology/ring.js";

/**
 * In place over `buf`: on entry every rank's buf holds its contribution to every chunk (offsets
 * relative to buf); after size-1 steps chunk `rank` of buf on rank `rank` holds the reduction
 * over all ranks (other chunks hold partial sums). `scratch` must hold the largest chunk.
 */
export function* ringReduceScatter(
  rank: number,
  size: number,
  buf: Region,
  chunks: readonly Chunk[],
  scratch: Region,
): Schedule {
  invariant(chunks.length === size, () => `ringReduceScatter: ${chunks.length} chunks for ${size} ranks`);
  const { next, prev } = ring(rank, size);
  for (let k = 0; k < size - 1; k++) {
    // Send the chunk reduced in the previous step (at k = 0: this rank's own contribution);
    // the chunk received at the last step is chunk `rank`, complete.
    const s = chunks[mod(rank - k - 1, size)]!;
    const r = mod(rank - k - 2, size);
    const c = chunks[r]!;
    invariant(c.count <= scratch.count, () => `ringReduceScatter: chunk ${r} larger than scratch`);
    const tmp = sub(scratch, 0, c.count);
    yield step(
      `recvReduceSend chunk ${r}`,
      [send(next, sub(buf, s.offset, s.count)), recv(prev, tmp)],
      [reduce(sub(buf, c.offset, c.count), tmp)],
    );
  }
}

export const reducescatterRing: Algorithm = {
  collective: "reducescatter",
  name: "ring",
  summary: "Ring reduce-scatter: n-1 recvReduceSend steps round the ring.",
  limits: "any size; bandwidth-optimal; latency grows as n-1; scratch (n+1)·count",
  cost: {
    stepsFormula: "n-1",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (count === 0 ? 0 : n - 1),
    sentElements: (n, count) => (n - 1) * count,
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : (ctx.size + 1) * ctx.count),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (size === 1) {
      if (!ctx.inPlace) yield step("copy input", [], [copy(out, region("input", 0, count))]);
      return;
    }
    const acc = region("scratch", 0, size * count);
    yield step("copy input", [], [copy(acc, region("input", 0, size * count))]);
    yield* ringReduceScatter(rank, size, acc, allGatherChunks(size, count), region("scratch", size * count, count));
    yield step("copy result", [], [copy(out, sub(acc, rank * count, count))]);
  },
};
