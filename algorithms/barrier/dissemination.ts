/**
 * barrier/dissemination: Dissemination barrier: in round k each rank signals the rank 2^k ahead of
 * it.
 *
 * Limits: any size (no power-of-two requirement); ⌈log2 n⌉ rounds of n messages each.
 * Cost:   ⌈log2 n⌉ steps; ⌈log2 n⌉ elements sent per rank.
 * Source: Hensgen, Finkel and Manber 1988; MPICH MPIR_Barrier_intra_dissemination; Open MPI
 *         barrier_intra_bruck.
 *
 * Step table: `cclab explain barrier --algorithm dissemination -n 4`
 * (kept current in test/golden/explain/barrier/dissemination.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { copy, defineAlgorithm, f, recv, send, step } from "../../src/schedule/dsl.js";
import { ceilLog2 } from "../topology/binomial.js";

export const dissemination = defineAlgorithm({
  collective: "barrier",
  name: "dissemination",
  summary: "Dissemination barrier: in round k each rank signals the rank 2^k ahead of it.",
  limits: "any size (no power-of-two requirement); ⌈log2 n⌉ rounds of n messages each",
  source: "Hensgen, Finkel and Manber 1988; MPICH MPIR_Barrier_intra_dissemination; Open MPI barrier_intra_bruck",
  cost: { steps: f("⌈log2 n⌉", (n) => ceilLog2(n)), sent: f("⌈log2 n⌉", (n) => ceilLog2(n)) },
  *schedule({ rank, size }, mem) {
    // Round k sends `heard`, which the token of every earlier round was copied into, so each
    // signal waits for everything this rank has heard: after round k a rank has heard, directly
    // or through others, from the 2^(k+1) ranks before it, after ⌈log2 n⌉ rounds from all n.
    const heard = mem.scratch(1);
    const token = mem.scratch(1);
    for (let dist = 1, k = 0; dist < size; dist <<= 1, k++) {
      const to = (rank + dist) % size;
      const from = (rank - dist + size) % size;
      yield step(
        `round ${k}: signal ${to}, wait for ${from}`,
        [send(to, heard), recv(from, token)],
        [copy(heard, token)],
      );
    }
  },
});
