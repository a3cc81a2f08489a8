/**
 * reduce/binomial: Reduce up a binomial tree: each rank folds in its children's partial results.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency; every round carries the whole message.
 * Cost:   ⌈log2 n⌉ steps; count elements sent per rank.
 * Source: MPICH MPIR_Reduce_intra_binomial; Open MPI ompi_coll_base_reduce_intra_binomial
 *         (unsegmented).
 *
 * Step table: `cclab explain reduce --algorithm binomial -n 4`
 * (kept current in test/golden/explain/reduce/binomial.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { binomialReduce } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const binomial = defineAlgorithm({
  collective: "reduce",
  name: "binomial",
  summary: "Reduce up a binomial tree: each rank folds in its children's partial results.",
  limits: "any size and root; ⌈log2 n⌉ latency; every round carries the whole message",
  source: "MPICH MPIR_Reduce_intra_binomial; Open MPI ompi_coll_base_reduce_intra_binomial (unsegmented)",
  cost: { steps: f("⌈log2 n⌉", (n) => ceilLog2(n)), sent: f("count", (_n, count) => count) },
  // In vrank space each rank receives its children's partial results, smallest subtree first,
  // folds each into an accumulator (the output at the root, scratch elsewhere: no input is
  // written) and sends it to its parent; leaves send their input as it is.
  schedule: ({ rank, size, root }, mem) => binomialReduce(rank, size, root, mem),
});
