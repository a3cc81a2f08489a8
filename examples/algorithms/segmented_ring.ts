/**
 * allreduce/segmented_ring: ring all-reduce that moves its chunks in segments of ctx.segment
 * elements (the shape of NCCL's ring loop, which cuts the message into slices its fixed-size
 * buffers can hold). A user algorithm: docs/writing-an-algorithm.md builds it step by step from
 * algorithms/allreduce/ring.ts, and `cclab verify --algorithm-file` proves it.
 *
 * The output is partitioned into n uneven chunks exactly as in ring all-reduce; slice k is the
 * k-th segment of every chunk (elements [k·segment, (k+1)·segment) of each, clipped, possibly
 * empty). For k = 0 .. S-1 the slice goes through the whole ring: a ring reduce-scatter
 * (n-1 recvReduceSend steps) and a ring all-gather (n-1 recvCopySend steps), the shared
 * building blocks ringReduceScatter and ringAllGather applied to the slice instead of the chunks.
 *
 * Limits: any size; bandwidth-optimal like ring, but latency 2(n-1)·S·alpha, S times ring's:
 * every ring link is already busy at every ring step, so segments buy no overlap in the
 * alpha-beta model; they bound scratch and message size to one segment (ring: one chunk).
 * Slices of the short chunks (count % n != 0) may be empty: zero-length messages.
 * Cost: 2(n-1)·S steps (S = ⌈count / (n·segment)⌉); 2(n-1)/n · count · s bytes sent per rank,
 * the same elements as ring in S times as many, smaller, messages.
 *
 * At count = n and segment 1 (explain's defaults) every chunk is one segment, so the table is
 * ring's with each label prefixed by its segment; `--count 8` shows two slices.
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm-file examples/algorithms/segmented_ring.ts -n 4`:
 * allreduce/segmented_ring: n = 4, count = 4, root 0, out of place, segment 1
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
 *   rank 0  segment 0: recvReduceSend chunk 2: out[3]->1 tmp[0]<-3 out[2]+=tmp[0]
 *   rank 1  segment 0: recvReduceSend chunk 3: out[0]->2 tmp[0]<-0 out[3]+=tmp[0]
 *   rank 2  segment 0: recvReduceSend chunk 0: out[1]->3 tmp[0]<-1 out[0]+=tmp[0]
 *   rank 3  segment 0: recvReduceSend chunk 1: out[2]->0 tmp[0]<-2 out[1]+=tmp[0]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [1]     [1+2]   [3]
 *   out[1]  [0]     [1]     [2]     [2+3]
 *   out[2]  [0+3]   [1]     [2]     [3]
 *   out[3]  [0]     [0+1]   [2]     [3]
 *   tmp[0]  [3]     [0]     [1]     [2]
 *
 * step 2
 *   rank 0  segment 0: recvReduceSend chunk 1: out[2]->1 tmp[0]<-3 out[1]+=tmp[0]
 *   rank 1  segment 0: recvReduceSend chunk 2: out[3]->2 tmp[0]<-0 out[2]+=tmp[0]
 *   rank 2  segment 0: recvReduceSend chunk 3: out[0]->3 tmp[0]<-1 out[3]+=tmp[0]
 *   rank 3  segment 0: recvReduceSend chunk 0: out[1]->0 tmp[0]<-2 out[0]+=tmp[0]
 *           rank 0   rank 1   rank 2   rank 3
 *   out[0]  [0]      [1]      [1+2]    [1+2+3]
 *   out[1]  [0+2+3]  [1]      [2]      [2+3]
 *   out[2]  [0+3]    [0+1+3]  [2]      [3]
 *   out[3]  [0]      [0+1]    [0+1+2]  [3]
 *   tmp[0]  [2+3]    [0+3]    [0+1]    [1+2]
 *
 * step 3
 *   rank 0  segment 0: recvReduceSend chunk 0: out[1]->1 tmp[0]<-3 out[0]+=tmp[0]
 *   rank 1  segment 0: recvReduceSend chunk 1: out[2]->2 tmp[0]<-0 out[1]+=tmp[0]
 *   rank 2  segment 0: recvReduceSend chunk 2: out[3]->3 tmp[0]<-1 out[2]+=tmp[0]
 *   rank 3  segment 0: recvReduceSend chunk 3: out[0]->0 tmp[0]<-2 out[3]+=tmp[0]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [1]        [1+2]      [1+2+3]
 *   out[1]  [0+2+3]    [0+1+2+3]  [2]        [2+3]
 *   out[2]  [0+3]      [0+1+3]    [0+1+2+3]  [3]
 *   out[3]  [0]        [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * step 4
 *   rank 0  segment 0: recvCopySend chunk 3: out[0]->1 out[3]<-3
 *   rank 1  segment 0: recvCopySend chunk 0: out[1]->2 out[0]<-0
 *   rank 2  segment 0: recvCopySend chunk 1: out[2]->3 out[1]<-1
 *   rank 3  segment 0: recvCopySend chunk 2: out[3]->0 out[2]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [1+2]      [1+2+3]
 *   out[1]  [0+2+3]    [0+1+2+3]  [0+1+2+3]  [2+3]
 *   out[2]  [0+3]      [0+1+3]    [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1]      [0+1+2]    [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * step 5
 *   rank 0  segment 0: recvCopySend chunk 2: out[3]->1 out[2]<-3
 *   rank 1  segment 0: recvCopySend chunk 3: out[0]->2 out[3]<-0
 *   rank 2  segment 0: recvCopySend chunk 0: out[1]->3 out[0]<-1
 *   rank 3  segment 0: recvCopySend chunk 1: out[2]->0 out[1]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [1+2+3]
 *   out[1]  [0+2+3]    [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+3]    [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2]    [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * step 6
 *   rank 0  segment 0: recvCopySend chunk 1: out[2]->1 out[1]<-3
 *   rank 1  segment 0: recvCopySend chunk 2: out[3]->2 out[2]<-0
 *   rank 2  segment 0: recvCopySend chunk 3: out[0]->3 out[3]<-1
 *   rank 3  segment 0: recvCopySend chunk 0: out[1]->0 out[0]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [1+2+3]    [0+2+3]    [0+1+3]    [0+1+2]
 *
 * cost: 2(n-1)·S (S = ⌈count / (n·segment)⌉) steps, 2(n-1)/n · count · s bytes sent per rank; here 6 steps, at most 6 elements sent by a rank
 */
import { ringAllGather } from "../../algorithms/allgather/ring.js";
import { ringReduceScatter } from "../../algorithms/reducescatter/ring.js";
import { type Chunk, copy, partition, region, remap, segments, step } from "../../src/schedule/build.js";
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";

/** Slice k of `chunks`: the k-th segment of each chunk, clipped to the chunk (empty past its end). */
export function sliceOf(chunks: readonly Chunk[], k: number, segment: number): Chunk[] {
  return chunks.map((c) => {
    const start = Math.min(c.count, k * segment);
    return { offset: c.offset + start, count: Math.min(segment, c.count - start) };
  });
}

export const segmentedRing: Algorithm = {
  collective: "allreduce",
  name: "segmented_ring",
  summary: "Ring all-reduce one segment of every chunk at a time: S rounds of ring reduce-scatter + all-gather.",
  limits: "any size; bandwidth-optimal; latency 2(n-1)·S; scratch and messages one segment",
  cost: {
    stepsFormula: "2(n-1)·S (S = ⌈count / (n·segment)⌉)",
    bytesFormula: "2(n-1)/n · count · s",
    steps: (n, count, segment) => (count === 0 ? 0 : 2 * (n - 1) * Math.ceil(count / (n * Math.max(1, segment)))),
    sentElements: (n, count) => {
      if (count === 0 || n === 1) return 0;
      // As ring: over all slices rank r sends every chunk but r (reduce-scatter) and but r+1 (all-gather).
      const c = partition(count, n).map((ch) => ch.count);
      let max = 0;
      for (let r = 0; r < n; r++) max = Math.max(max, 2 * count - c[r]! - c[(r + 1) % n]!);
      return max;
    },
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : Math.min(Math.max(1, ctx.segment), Math.ceil(ctx.count / ctx.size))),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (!ctx.inPlace) yield step("copy input", [], [copy(out, region("input", 0, count))]);
    if (size === 1) return;
    const seg = Math.max(1, ctx.segment);
    const chunks = partition(count, size);
    // Chunk 0 is the largest (partition gives the count % n extra elements to the first chunks).
    const slices = segments(chunks[0]!.count, seg).length;
    const tmp = region("scratch", 0, Math.min(seg, chunks[0]!.count));
    for (let k = 0; k < slices; k++) {
      const slice = sliceOf(chunks, k, seg);
      yield* remap(ringReduceScatter(rank, size, out, slice, tmp), {}, `segment ${k}: `);
      yield* remap(ringAllGather(rank, size, out, slice), {}, `segment ${k}: `);
    }
  },
};
