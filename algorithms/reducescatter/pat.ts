/**
 * reducescatter/pat: NCCL's PAT reduce-scatter: partial sums climb Bruck's binomial trees, near
 * dimensions first, reduced in NCCL's bounded buffers in NCCL's own op order.
 *
 * Limits: any size, commutative ops (avg and premulsum too: the plan scales, where NCCL turns PAT
 *         off); ⌈log2 n⌉ messages when small blocks pack (n a power of two), n-1 per chunk
 *         otherwise; chunks of c = max(segment, 128) elements; scratch 2·8·⌈log2 n⌉ slots of a
 *         message at most (NCCL_STEPS per dimension each way), whatever the count; NCCL's channels
 *         and thread-level parallelism are not modelled.
 * Cost:   as allgather/pat where n is a power of two or P = 1; ≤ (n-1)·⌈count/c⌉ elsewhere steps;
 *         (n-1)·count elements sent per rank.
 * Source: NCCL 2.23+ PatRSAlgorithm (src/include/collectives.h; device/reduce_scatter.h,
 *         prims_simple.h patReduce); S. Jeaugey, PAT, arXiv 2506.20252.
 *
 * Step table: `cclab explain reducescatter --algorithm pat -n 4`
 * (kept current in test/golden/explain/reducescatter/pat.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { isPowerOfTwo } from "../lib/fold.js";
import { patChunk, patMessages, patReduceScatter, patShape } from "../lib/pat.js";

/** NCCL's message count is the all-gather's where n is a power of two or nothing is packed. */
const exact = (n: number, count: number, segment: number) =>
  isPowerOfTwo(n) || patShape(n, count, patChunk(segment)).pack === 1;

export const pat = defineAlgorithm({
  collective: "reducescatter",
  name: "pat",
  summary:
    "NCCL's PAT reduce-scatter: partial sums climb Bruck's binomial trees, near dimensions first, reduced in NCCL's bounded buffers in NCCL's own op order.",
  limits:
    "any size, commutative ops (avg and premulsum too: the plan scales, where NCCL turns PAT off); ⌈log2 n⌉ messages when small blocks pack (n a power of two), n-1 per chunk otherwise; chunks of c = max(segment, 128) elements; scratch 2·8·⌈log2 n⌉ slots of a message at most (NCCL_STEPS per dimension each way), whatever the count; NCCL's channels and thread-level parallelism are not modelled",
  source:
    "NCCL 2.23+ PatRSAlgorithm (src/include/collectives.h; device/reduce_scatter.h, prims_simple.h patReduce); S. Jeaugey, PAT, arXiv 2506.20252",
  cost: {
    steps: f("as allgather/pat where n is a power of two or P = 1; ≤ (n-1)·⌈count/c⌉ elsewhere", (n, count, segment) =>
      exact(n, count, segment)
        ? patMessages(n, count, patChunk(segment))
        : (n - 1) * Math.ceil(count / patChunk(segment)),
    ),
    // Each partial sum leaves a rank once: one chunk per other block.
    sent: f("(n-1)·count", (n, count) => (n - 1) * count),
    exact,
  },
  schedule: patReduceScatter,
});
