/**
 * allreduce/segmented_ring_broken: THE TEACHING BUG. Do not use; this file exists to fail.
 *
 * A copy of segmented_ring.ts (same cost, scratch and building blocks) with one line changed:
 * it counts the slices from the last chunk instead of the first. partition() gives the
 * count % n extra elements to the first chunks, so the last chunk is the shortest; whenever the
 * first chunk needs one segment more than the last (n = 2, count = 7, segment 3: chunks of 4
 * and 3 elements, 2 segments against 1), the tail of the long chunks never goes round the ring.
 * The static checker names the element that misses contributions; the property tests shrink to
 * a small failing call and print the seed that replays it. docs/writing-an-algorithm.md walks
 * through both outputs; test/user-algorithm.test.ts checks that `cclab verify` rejects this file.
 */
import { ringAllGather } from "../../algorithms/allgather/ring.js";
import { ringReduceScatter } from "../../algorithms/reducescatter/ring.js";
import { copy, partition, region, remap, segments, step } from "../../src/schedule/build.js";
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { segmentedRing, sliceOf } from "./segmented_ring.js";

export const segmentedRingBroken: Algorithm = {
  ...segmentedRing,
  name: "segmented_ring_broken",
  summary: "segmented_ring with a deliberate off-by-one in the number of segments (a teaching bug).",
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (!ctx.inPlace) yield step("copy input", [], [copy(out, region("input", 0, count))]);
    if (size === 1) return;
    const seg = Math.max(1, ctx.segment);
    const chunks = partition(count, size);
    // BUG (deliberate): the last chunk is the shortest, so this is one slice short whenever
    // count % n != 0 and the first chunk spills into another segment. segmented_ring.ts uses chunks[0].
    const slices = segments(chunks[size - 1]!.count, seg).length;
    const tmp = region("scratch", 0, Math.min(seg, chunks[0]!.count));
    for (let k = 0; k < slices; k++) {
      const slice = sliceOf(chunks, k, seg);
      yield* remap(ringReduceScatter(rank, size, out, slice, tmp), {}, `segment ${k}: `);
      yield* remap(ringAllGather(rank, size, out, slice), {}, `segment ${k}: `);
    }
  },
};
