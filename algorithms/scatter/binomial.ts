/**
 * scatter/binomial: Scatter down a binomial tree; each child gets its whole subtree's blocks in one
 * message.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency; the root still sends (n-1)·count.
 * Cost:   ⌈log2 n⌉ steps; (n-1)·count elements sent per rank.
 * Source: Open MPI ompi_coll_base_scatter_intra_binomial; MPICH MPIR_Scatter_intra_binomial.
 *
 * Step table: `cclab explain scatter --algorithm binomial -n 4`
 * (kept current in test/golden/explain/scatter/binomial.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { binomialScatterBlocks } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const binomial = defineAlgorithm({
  collective: "scatter",
  name: "binomial",
  summary: "Scatter down a binomial tree; each child gets its whole subtree's blocks in one message.",
  limits: "any size and root; ⌈log2 n⌉ latency; the root still sends (n-1)·count",
  source: "Open MPI ompi_coll_base_scatter_intra_binomial; MPICH MPIR_Scatter_intra_binomial",
  cost: { steps: f("⌈log2 n⌉", (n) => ceilLog2(n)), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  schedule: ({ rank, size, root, count }, mem) =>
    binomialScatterBlocks({
      rank,
      size,
      root,
      counts: Array.from({ length: size }, () => count),
      all: mem.input,
      own: mem.output,
      scratch: mem.scratch,
    }),
});
