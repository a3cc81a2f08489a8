/**
 * allreduce/sliced_ring: ring all-reduce one slice at a time: slice k is the k-th segment of every
 * chunk, and each slice goes once round the whole ring (reduce-scatter, then all-gather).
 *
 * A user algorithm: docs/writing-an-algorithm.md builds it from algorithms/allreduce/ring.ts, and
 * `cclab verify --algorithm-file examples/algorithms/sliced_ring.ts` proves it. It reuses the
 * ring routines of algorithms/lib/ring.ts on each slice instead of the whole chunks; scratch and
 * messages are one segment (ring: one chunk). Slices of the short chunks (count % n != 0) may be
 * empty: zero-length messages.
 *
 * Step table: `cclab explain allreduce --algorithm-file examples/algorithms/sliced_ring.ts -n 4 --count 8`.
 */
import { ringAllGather, ringReduceScatter } from "../../algorithms/lib/ring.js";
import { type Chunk, chunkOf, defineAlgorithm, f, labelled, partition, segments } from "../../src/schedule/dsl.js";

/** Slice k of `chunks`: the k-th segment of each chunk, clipped to the chunk (empty past its end). */
export function sliceOf(chunks: readonly Chunk[], k: number, segment: number): Chunk[] {
  return chunks.map((c) => {
    const start = Math.min(c.count, k * segment);
    return { offset: c.offset + start, count: Math.min(segment, c.count - start) };
  });
}

/** Slices: as many segments as the first (largest) chunk has. */
export const slices = (n: number, count: number, segment: number): number =>
  segments(partition(count, n)[0]?.count ?? 0, segment).length;

export const slicedRing = defineAlgorithm({
  collective: "allreduce",
  name: "sliced_ring",
  summary: "Ring all-reduce one slice at a time: S passes of ring reduce-scatter + ring all-gather.",
  limits: "any size; bandwidth-optimal like ring, latency 2(n-1)·S; scratch and messages one segment",
  source: "the shape of NCCL's ring loop, which cuts the message into slices its buffers hold",
  cost: {
    steps: f("2(n-1)·S, S = ⌈count / (n·segment)⌉", (n, count, seg) => 2 * (n - 1) * slices(n, count, seg)),
    sent: f("2(n-1)·⌈count/n⌉", (n, count) => 2 * (n - 1) * Math.ceil(count / n)),
    exact: (n, count) => count % n === 0,
  },
  *schedule({ rank, size, count, segment }, { input, output, scratch }) {
    const chunks = partition(count, size);
    const tmp = scratch(Math.min(segment, chunks[0]!.count));
    for (let k = 0; k < slices(size, count, segment); k++) {
      const slice = sliceOf(chunks, k, segment);
      const acc = (_step: number, j: number) => chunkOf(output, slice[j]!);
      yield* labelled(`slice ${k}: `, ringReduceScatter(rank, size, { chunks: slice, input, acc, tmp: () => tmp }));
      yield* labelled(`slice ${k}: `, ringAllGather(rank, size, output, slice));
    }
  },
});
