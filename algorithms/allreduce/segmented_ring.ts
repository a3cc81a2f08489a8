/**
 * allreduce/segmented_ring: Ring all-reduce moving each chunk in segments (received where their
 * sums go, or in place through two receive buffers), so the reduction of one segment overlaps the
 * transfer of the next.
 *
 * Limits: any size; bandwidth-optimal; 2(n-1)·S messages per rank, so worth it only when a chunk is
 *         several segments; segments of 1 MiB unless the call names one (Open MPI's); scratch: two
 *         segments in place, none out of place.
 * Cost:   2(n-1)·S (S = ⌈⌈count/n⌉/segment⌉, at least 1) steps; 2(n-1)·⌈count/n⌉ elements sent per
 *         rank.
 * Source: Open MPI ompi_coll_base_allreduce_intra_ring_segmented (double-buffered inbuf[2]); NCCL's
 *         ring, which moves a chunk in slices through NCCL_STEPS buffers.
 *
 * Step table: `cclab explain allreduce --algorithm segmented_ring -n 4`
 * (kept current in test/golden/explain/allreduce/segmented_ring.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { chunkOf, defineAlgorithm, f, partition } from "../../src/schedule/dsl.js";
import { ringAllGather, ringReduceScatter } from "../lib/ring.js";

/** Segments per chunk: at least one, as empty chunks still travel (zero-length) in the ring. */
const perChunk = (n: number, count: number, segment: number) => Math.max(1, Math.ceil(Math.ceil(count / n) / segment));

export const segmentedRing = defineAlgorithm({
  collective: "allreduce",
  name: "segmented_ring",
  summary:
    "Ring all-reduce moving each chunk in segments (received where their sums go, or in place through two receive buffers), so the reduction of one segment overlaps the transfer of the next.",
  limits:
    "any size; bandwidth-optimal; 2(n-1)·S messages per rank, so worth it only when a chunk is several segments; segments of 1 MiB unless the call names one (Open MPI's); scratch: two segments in place, none out of place",
  source:
    "Open MPI ompi_coll_base_allreduce_intra_ring_segmented (double-buffered inbuf[2]); NCCL's ring, which moves a chunk in slices through NCCL_STEPS buffers",
  // Open MPI's tuned decision runs ring_segmented with 1 MB segments; measured here (MPI, n = 4,
  // 32 MiB) 1 MiB segments beat the plain ring by ~30% where 128 KiB ones only tie (docs/performance.md).
  segmentBytes: 1 << 20,
  cost: {
    steps: f(
      "2(n-1)·S (S = ⌈⌈count/n⌉/segment⌉, at least 1)",
      (n, count, seg) => 2 * (n - 1) * perChunk(n, count, seg),
    ),
    sent: f("2(n-1)·⌈count/n⌉", (n, count) => 2 * (n - 1) * Math.ceil(count / n)),
    exact: (n, count) => count % n === 0,
  },
  *schedule({ rank, size, count, segment, inPlace }, { input, output, scratch }) {
    // As allreduce/ring, segment by segment: a segment is sent on as soon as it is reduced (or,
    // in the all-gather, received). Out of place a segment arrives where its sum goes; in place
    // it arrives in one of two receive buffers, and the receive of segment i+2 waits only for
    // the reduction that read its buffer, segment i's.
    const chunks = partition(count, size);
    const slot = Math.min(segment, chunks[0]!.count);
    const tmp = inPlace ? [scratch(slot), scratch(slot)] : undefined;
    yield* ringReduceScatter(rank, size, {
      chunks,
      input,
      acc: (_k, j) => chunkOf(output, chunks[j]!),
      tmp: tmp ? (k, i) => tmp[(k * perChunk(size, count, segment) + i) % 2]! : "acc",
      segment,
    });
    yield* ringAllGather(rank, size, output, chunks, segment);
  },
});
