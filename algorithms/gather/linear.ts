/**
 * gather/linear: Every rank sends its block straight to the root.
 *
 * Limits: any size and root; one step, but all n-1 messages converge on the root.
 * Cost:   1 steps; count elements sent per rank.
 * Source: Open MPI ompi_coll_base_gather_intra_basic_linear; MPICH MPIR_Gather_intra_linear.
 *
 * Step table: `cclab explain gather --algorithm linear -n 4`
 * (kept current in test/golden/explain/gather/linear.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, recv, send, step, sub } from "../../src/schedule/dsl.js";

export const linear = defineAlgorithm({
  collective: "gather",
  name: "linear",
  summary: "Every rank sends its block straight to the root.",
  limits: "any size and root; one step, but all n-1 messages converge on the root",
  source: "Open MPI ompi_coll_base_gather_intra_basic_linear; MPICH MPIR_Gather_intra_linear",
  form: "in-place",
  cost: { steps: f("1", () => 1), sent: f("count", (_n, count) => count) },
  *schedule({ rank, size, root, count }, { input, output }) {
    if (rank !== root) {
      yield step("send own block", [send(root, input)]);
      return;
    }
    // The root posts all n-1 receives as one group, each into its sender's place.
    const peers = Array.from({ length: size }, (_, p) => p).filter((p) => p !== root);
    yield step(
      "recv all blocks",
      peers.map((p) => recv(p, sub(output, p * count, count))),
    );
  },
});
