/**
 * scatter/linear: The root sends every rank its block directly.
 *
 * Limits: any size and root; one step, but the root sends all (n-1)·count elements.
 * Cost:   1 steps; (n-1)·count elements sent per rank.
 * Source: Open MPI ompi_coll_base_scatter_intra_basic_linear; MPICH MPIR_Scatter_intra_linear.
 *
 * Step table: `cclab explain scatter --algorithm linear -n 4`
 * (kept current in test/golden/explain/scatter/linear.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { copy, defineAlgorithm, f, recv, sameRegion, send, step, sub } from "../../src/schedule/dsl.js";

export const linear = defineAlgorithm({
  collective: "scatter",
  name: "linear",
  summary: "The root sends every rank its block directly.",
  limits: "any size and root; one step, but the root sends all (n-1)·count elements",
  source: "Open MPI ompi_coll_base_scatter_intra_basic_linear; MPICH MPIR_Scatter_intra_linear",
  cost: { steps: f("1", () => 1), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  *schedule({ rank, size, root, count }, { input, output }) {
    if (rank !== root) {
      yield step("recv own block", [recv(root, output)]);
      return;
    }
    // One group of n-1 sends; the root's own block is a local copy unless it is already in place.
    const mine = sub(input, root * count, count);
    const peers = Array.from({ length: size }, (_, p) => p).filter((p) => p !== root);
    const own = sameRegion(mine, output) ? [] : [copy(output, mine)];
    yield step(
      "send every block",
      peers.map((p) => send(p, sub(input, p * count, count))),
      own,
    );
  },
});
