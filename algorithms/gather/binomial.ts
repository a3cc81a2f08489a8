/**
 * gather/binomial: Gather up a binomial tree; inner ranks forward their whole subtree in one
 * message.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency; inner ranks forward up to half the data.
 * Cost:   ⌈log2 n⌉ steps; max(n - 2^(⌈log2 n⌉-1), 2^(⌈log2 n⌉-2))·count elements sent per rank.
 * Source: Open MPI ompi_coll_base_gather_intra_binomial; MPICH MPIR_Gather_intra_binomial.
 *
 * Step table: `cclab explain gather --algorithm binomial -n 4`
 * (kept current in test/golden/explain/gather/binomial.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { binomialGatherBlocks, largestSubtree } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const binomial = defineAlgorithm({
  collective: "gather",
  name: "binomial",
  summary: "Gather up a binomial tree; inner ranks forward their whole subtree in one message.",
  limits: "any size and root; ⌈log2 n⌉ latency; inner ranks forward up to half the data",
  source: "Open MPI ompi_coll_base_gather_intra_binomial; MPICH MPIR_Gather_intra_binomial",
  form: "in-place",
  cost: {
    steps: f("⌈log2 n⌉", (n) => ceilLog2(n)),
    sent: f("max(n - 2^(⌈log2 n⌉-1), 2^(⌈log2 n⌉-2))·count", (n, count) => largestSubtree(n) * count),
  },
  schedule: ({ rank, size, root, count }, mem) =>
    binomialGatherBlocks({
      rank,
      size,
      root,
      counts: Array.from({ length: size }, () => count),
      own: mem.input,
      all: mem.output,
      scratch: mem.scratch,
    }),
});
