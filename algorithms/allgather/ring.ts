/**
 * allgather/ring: ring all-gather (MPICH allgather_intra_ring, NCCL's ring all-gather).
 *
 * Each rank copies its input into its own chunk of the output, then for n-1 steps forwards to
 * next the chunk it received last from prev (recvCopySend), so after n-1 steps every chunk has
 * gone round the ring once. `ringAllGather` is the building block over explicit chunks that
 * ring all-reduce and van de Geijn broadcast reuse.
 *
 * Limits: any size; bandwidth-optimal, latency (n-1)·alpha.
 * Cost: n-1 steps; (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain allgather --algorithm ring -n 4`:
 * allgather/ring: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: out[0]=in[0]
 *   rank 1  copy input: out[1]=in[0]
 *   rank 2  copy input: out[2]=in[0]
 *   rank 3  copy input: out[3]=in[0]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     .       .       .
 *   out[1]  .       [1]     .       .
 *   out[2]  .       .       [2]     .
 *   out[3]  .       .       .       [3]
 *
 * step 1
 *   rank 0  recvCopySend chunk 3: out[0]->1 out[3]<-3
 *   rank 1  recvCopySend chunk 0: out[1]->2 out[0]<-0
 *   rank 2  recvCopySend chunk 1: out[2]->3 out[1]<-1
 *   rank 3  recvCopySend chunk 2: out[3]->0 out[2]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     .       .
 *   out[1]  .       [1]     [1]     .
 *   out[2]  .       .       [2]     [2]
 *   out[3]  [3]     .       .       [3]
 *
 * step 2
 *   rank 0  recvCopySend chunk 2: out[3]->1 out[2]<-3
 *   rank 1  recvCopySend chunk 3: out[0]->2 out[3]<-0
 *   rank 2  recvCopySend chunk 0: out[1]->3 out[0]<-1
 *   rank 3  recvCopySend chunk 1: out[2]->0 out[1]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     .
 *   out[1]  .       [1]     [1]     [1]
 *   out[2]  [2]     .       [2]     [2]
 *   out[3]  [3]     [3]     .       [3]
 *
 * step 3
 *   rank 0  recvCopySend chunk 1: out[2]->1 out[1]<-3
 *   rank 1  recvCopySend chunk 2: out[3]->2 out[2]<-0
 *   rank 2  recvCopySend chunk 3: out[0]->3 out[3]<-1
 *   rank 3  recvCopySend chunk 0: out[1]->0 out[0]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *
 * cost: n-1 steps, (n-1) · count · s bytes sent per rank; here 3 steps, at most 3 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { type Chunk, copy, recv, region, send, step, sub } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { mod, ring } from "../topology/ring.js";

/**
 * In place over `buf`: on entry rank i's chunk i (offsets relative to buf) holds its data; after
 * size-1 steps every rank holds every chunk. Chunks may be uneven or empty; empty chunks still
 * travel as zero-length messages so every rank takes the same n-1 steps.
 */
export function* ringAllGather(rank: number, size: number, buf: Region, chunks: readonly Chunk[]): Schedule {
  invariant(chunks.length === size, () => `ringAllGather: ${chunks.length} chunks for ${size} ranks`);
  const { next, prev } = ring(rank, size);
  for (let k = 0; k < size - 1; k++) {
    const s = chunks[mod(rank - k, size)]!;
    const r = mod(rank - k - 1, size);
    const c = chunks[r]!;
    yield step(`recvCopySend chunk ${r}`, [
      send(next, sub(buf, s.offset, s.count)),
      recv(prev, sub(buf, c.offset, c.count)),
    ]);
  }
}

/** Chunk i of the all-gather output: count elements at i·count. */
export const allGatherChunks = (size: number, count: number): Chunk[] =>
  Array.from({ length: size }, (_, i) => ({ offset: i * count, count }));

export const allgatherRing: Algorithm = {
  collective: "allgather",
  name: "ring",
  summary: "Ring all-gather: n-1 steps, each rank forwards the chunk it received last.",
  limits: "any size; bandwidth-optimal; latency grows as n-1",
  cost: {
    stepsFormula: "n-1",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (count === 0 ? 0 : n - 1),
    sentElements: (n, count) => (n - 1) * count,
  },
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    if (!ctx.inPlace) {
      yield step("copy input", [], [copy(region("output", rank * count, count), region("input", 0, count))]);
    }
    yield* ringAllGather(rank, size, region("output", 0, size * count), allGatherChunks(size, count));
  },
};
