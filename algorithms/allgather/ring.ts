/**
 * allgather/ring: Ring all-gather: n-1 steps, each rank forwards the chunk it received last.
 *
 * Limits: any size; bandwidth-optimal; latency grows as n-1.
 * Cost:   n-1 steps; (n-1)·count elements sent per rank.
 * Source: MPICH allgather_intra_ring; NCCL's ring all-gather.
 *
 * Step table: `cclab explain allgather --algorithm ring -n 4`
 * (kept current in test/golden/explain/allgather/ring.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { blocks, ringAllGather } from "../lib/ring.js";

export const ring = defineAlgorithm({
  collective: "allgather",
  name: "ring",
  summary: "Ring all-gather: n-1 steps, each rank forwards the chunk it received last.",
  limits: "any size; bandwidth-optimal; latency grows as n-1",
  source: "MPICH allgather_intra_ring; NCCL's ring all-gather",
  form: "in-place",
  cost: { steps: f("n-1", (n) => n - 1), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  schedule: ({ rank, size, count }, { output }) => ringAllGather(rank, size, output, blocks(size, count)),
});
