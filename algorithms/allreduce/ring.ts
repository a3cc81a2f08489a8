/**
 * allreduce/ring: Ring all-reduce: ring reduce-scatter then ring all-gather over n chunks.
 *
 * Limits: any size; bandwidth-optimal; latency grows as 2(n-1); count < n leaves some chunks empty.
 * Cost:   2(n-1) steps; 2(n-1)·⌈count/n⌉ elements sent per rank.
 * Source: MPICH allreduce_intra_ring; NCCL's ring algorithm.
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm ring -n 4`:
 * allreduce/ring: n = 4, count = 4, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recvReduceSend chunk 2: in[3]->1 out[2]<-3 out[2]=in[2]+out[2]
 *   rank 1  recvReduceSend chunk 3: in[0]->2 out[3]<-0 out[3]=in[3]+out[3]
 *   rank 2  recvReduceSend chunk 0: in[1]->3 out[0]<-1 out[0]=in[0]+out[0]
 *   rank 3  recvReduceSend chunk 1: in[2]->0 out[1]<-2 out[1]=in[1]+out[1]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       [1+2]   .
 *   out[1]  .       .       .       [2+3]
 *   out[2]  [0+3]   .       .       .
 *   out[3]  .       [0+1]   .       .
 *
 * step 2
 *   rank 0  recvReduceSend chunk 1: out[2]->1 out[1]<-3 out[1]=in[1]+out[1]
 *   rank 1  recvReduceSend chunk 2: out[3]->2 out[2]<-0 out[2]=in[2]+out[2]
 *   rank 2  recvReduceSend chunk 3: out[0]->3 out[3]<-1 out[3]=in[3]+out[3]
 *   rank 3  recvReduceSend chunk 0: out[1]->0 out[0]<-2 out[0]=in[0]+out[0]
 *           rank 0   rank 1   rank 2   rank 3
 *   out[0]  .        .        [1+2]    [1+2+3]
 *   out[1]  [0+2+3]  .        .        [2+3]
 *   out[2]  [0+3]    [0+1+3]  .        .
 *   out[3]  .        [0+1]    [0+1+2]  .
 *
 * step 3
 *   rank 0  recvReduceSend chunk 0: out[1]->1 out[0]<-3 out[0]=in[0]+out[0]
 *   rank 1  recvReduceSend chunk 1: out[2]->2 out[1]<-0 out[1]=in[1]+out[1]
 *   rank 2  recvReduceSend chunk 2: out[3]->3 out[2]<-1 out[2]=in[2]+out[2]
 *   rank 3  recvReduceSend chunk 3: out[0]->0 out[3]<-2 out[3]=in[3]+out[3]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  .          [1+2]      [1+2+3]
 *   out[1]  [0+2+3]    [0+1+2+3]  .          [2+3]
 *   out[2]  [0+3]      [0+1+3]    [0+1+2+3]  .
 *   out[3]  .          [0+1]      [0+1+2]    [0+1+2+3]
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
 *
 * cost: 2(n-1) steps, 2(n-1)·⌈count/n⌉ elements sent per rank; here 6 steps, at most 6 elements sent by a rank
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { chunkOf, defineAlgorithm, f, partition } from "../../src/schedule/dsl.js";
import { ringAllGather, ringReduceScatter } from "../lib/ring.js";

export const ring = defineAlgorithm({
  collective: "allreduce",
  name: "ring",
  summary: "Ring all-reduce: ring reduce-scatter then ring all-gather over n chunks.",
  limits: "any size; bandwidth-optimal; latency grows as 2(n-1); count < n leaves some chunks empty",
  source: "MPICH allreduce_intra_ring; NCCL's ring algorithm",
  cost: {
    steps: f("2(n-1)", (n) => 2 * (n - 1)),
    // Rank r sends every chunk but r in the reduce-scatter and every chunk but r+1 in the all-gather.
    sent: f("2(n-1)·⌈count/n⌉", (n, count) => 2 * (n - 1) * Math.ceil(count / n)),
    exact: (n, count) => count % n === 0,
  },
  *schedule({ rank, size, count, inPlace }, { input, output, scratch }) {
    // The output, in n uneven chunks, goes through a ring reduce-scatter (after which rank r holds
    // chunk r reduced) and a ring all-gather of those chunks. The first step reads the input
    // directly, so out of place nothing is copied, and a chunk arrives where its sum goes (no
    // scratch, a smaller working set: docs/performance.md, "Receiving where the sum goes");
    // in place it arrives in a scratch chunk, as the output holds this rank's contribution.
    const chunks = partition(count, size);
    const tmp = inPlace ? scratch(chunks[0]!.count) : undefined;
    yield* ringReduceScatter(rank, size, {
      chunks,
      input,
      acc: (_k, j) => chunkOf(output, chunks[j]!),
      tmp: tmp ? () => tmp : "acc",
    });
    yield* ringAllGather(rank, size, output, chunks);
  },
});
