/**
 * allreduce/sliced_ring_broken: THE TEACHING BUG. Do not use; this file exists to fail.
 *
 * A copy of sliced_ring.ts with one line changed: it counts the slices from the last chunk
 * instead of the first. partition() gives the count % n extra elements to the first chunks, so
 * the last chunk is the shortest; whenever the first chunk needs one segment more than the last
 * (n = 2, count = 7, segment 3: chunks of 4 and 3 elements, 2 segments against 1), the tail of
 * the long chunks never goes round the ring. The static checker names the element that misses
 * contributions; the property tests shrink to a small failing call and print the seed that
 * replays it. docs/writing-an-algorithm.md walks through both outputs; test/user-algorithm.test.ts
 * checks that `cclab verify` rejects this file.
 */
import { ringAllGather, ringReduceScatter } from "../../algorithms/lib/ring.js";
import { chunkOf, defineAlgorithm, labelled, partition, segments } from "../../src/schedule/dsl.js";
import { slicedRing, sliceOf } from "./sliced_ring.js";

export const slicedRingBroken = defineAlgorithm({
  ...slicedRing,
  name: "sliced_ring_broken",
  summary: "sliced_ring with a deliberate off-by-one in the number of slices (a teaching bug).",
  *schedule({ rank, size, count, segment }, { input, output, scratch }) {
    const chunks = partition(count, size);
    const tmp = scratch(Math.min(segment, chunks[0]!.count));
    // BUG (deliberate): the last chunk is the shortest, so this is one slice short whenever
    // count % n != 0 and the first chunk spills into another segment. sliced_ring.ts uses chunks[0].
    const n = segments(chunks[size - 1]!.count, segment).length;
    for (let k = 0; k < n; k++) {
      const slice = sliceOf(chunks, k, segment);
      const acc = (_step: number, j: number) => chunkOf(output, slice[j]!);
      yield* labelled(`slice ${k}: `, ringReduceScatter(rank, size, { chunks: slice, input, acc, tmp: () => tmp }));
      yield* labelled(`slice ${k}: `, ringAllGather(rank, size, output, slice));
    }
  },
});
