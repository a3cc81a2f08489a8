/**
 * broadcast/linear: The root sends the whole message to every other rank.
 *
 * Limits: any size and root; one step, but the root sends (n-1)·count.
 * Cost:   1 steps; (n-1)·count elements sent per rank.
 * Source: Open MPI ompi_coll_base_bcast_intra_basic_linear (isend to each, then waitall).
 *
 * Step table: `cclab explain broadcast --algorithm linear -n 4`
 * (kept current in test/golden/explain/broadcast/linear.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, recv, send, step } from "../../src/schedule/dsl.js";

export const linear = defineAlgorithm({
  collective: "broadcast",
  name: "linear",
  summary: "The root sends the whole message to every other rank.",
  limits: "any size and root; one step, but the root sends (n-1)·count",
  source: "Open MPI ompi_coll_base_bcast_intra_basic_linear (isend to each, then waitall)",
  form: "in-place",
  cost: { steps: f("1", () => 1), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  *schedule({ rank, size, root }, { output }) {
    if (rank !== root) {
      yield step("recv", [recv(root, output)]);
      return;
    }
    // The root posts its n-1 sends as one group.
    const peers = Array.from({ length: size }, (_, p) => p).filter((p) => p !== root);
    yield step(
      "send to every rank",
      peers.map((p) => send(p, output)),
    );
  },
});
