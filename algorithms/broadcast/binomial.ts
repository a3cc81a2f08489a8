/**
 * broadcast/binomial: Broadcast down a binomial tree: the ranks holding the message double every
 * round.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency; every round carries the whole message.
 * Cost:   ⌈log2 n⌉ steps; ⌈log2 n⌉·count elements sent per rank.
 * Source: MPICH MPIR_Bcast_intra_binomial; Open MPI ompi_coll_base_bcast_intra_binomial
 *         (unsegmented).
 *
 * Step table: `cclab explain broadcast --algorithm binomial -n 4`
 * (kept current in test/golden/explain/broadcast/binomial.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { binomialBroadcast } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const binomial = defineAlgorithm({
  collective: "broadcast",
  name: "binomial",
  summary: "Broadcast down a binomial tree: the ranks holding the message double every round.",
  limits: "any size and root; ⌈log2 n⌉ latency; every round carries the whole message",
  source: "MPICH MPIR_Bcast_intra_binomial; Open MPI ompi_coll_base_bcast_intra_binomial (unsegmented)",
  form: "in-place",
  cost: {
    steps: f("⌈log2 n⌉", (n) => ceilLog2(n)),
    sent: f("⌈log2 n⌉·count", (n, count) => ceilLog2(n) * count),
  },
  // In vrank space a rank receives the message from its parent, then sends it to each child,
  // largest subtree first.
  schedule: ({ rank, size, root }, { output }) => binomialBroadcast(rank, size, root, output),
});
