/**
 * allgather/pat: NCCL's PAT all-gather: Bruck's binomial trees with the far dimensions first, at
 * most NCCL's aggregation of offsets in flight, in NCCL's own op order.
 *
 * Limits: any size; ⌈log2 n⌉ messages when NCCL packs a whole loop into one (small blocks, n a
 *         power of two), n-1 per chunk when a chunk no longer fits twice in a buffer step; chunks
 *         of c = max(segment, 128) elements (NCCL's 512-byte grain); no buffer: chunks land in the
 *         output and are forwarded from there; NCCL's channels and thread-level parallelism are not
 *         modelled.
 * Cost:   NCCL's messages: Σ over its loops of ⌈sends/P⌉ (P chunks per message when 2·count ≤ c), ×
 *         ⌈count/c⌉; (n-1)·⌈count/c⌉ unpacked, ⌈log2 n⌉ fully packed on a power of two steps;
 *         (n-1)·count elements sent per rank.
 * Source: NCCL 2.23+ PatAGAlgorithm (src/include/collectives.h; device/all_gather.h, prims_simple.h
 *         patCopy); S. Jeaugey, PAT, arXiv 2506.20252.
 *
 * Step table: `cclab explain allgather --algorithm pat -n 4`
 * (kept current in test/golden/explain/allgather/pat.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { patAllGather, patChunk, patMessages } from "../lib/pat.js";

export const pat = defineAlgorithm({
  collective: "allgather",
  name: "pat",
  summary:
    "NCCL's PAT all-gather: Bruck's binomial trees with the far dimensions first, at most NCCL's aggregation of offsets in flight, in NCCL's own op order.",
  limits:
    "any size; ⌈log2 n⌉ messages when NCCL packs a whole loop into one (small blocks, n a power of two), n-1 per chunk when a chunk no longer fits twice in a buffer step; chunks of c = max(segment, 128) elements (NCCL's 512-byte grain); no buffer: chunks land in the output and are forwarded from there; NCCL's channels and thread-level parallelism are not modelled",
  source:
    "NCCL 2.23+ PatAGAlgorithm (src/include/collectives.h; device/all_gather.h, prims_simple.h patCopy); S. Jeaugey, PAT, arXiv 2506.20252",
  cost: {
    steps: f(
      "NCCL's messages: Σ over its loops of ⌈sends/P⌉ (P chunks per message when 2·count ≤ c), × ⌈count/c⌉; (n-1)·⌈count/c⌉ unpacked, ⌈log2 n⌉ fully packed on a power of two",
      (n, count, segment) => patMessages(n, count, patChunk(segment)),
    ),
    // Every rank receives each other rank's block once and, by symmetry, sends as many chunks.
    sent: f("(n-1)·count", (n, count) => (n - 1) * count),
  },
  schedule: patAllGather,
});
