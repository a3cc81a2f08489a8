/**
 * alltoallv/pairwise: All-to-all with per-peer sizes by n-1 rounds of pairwise exchange.
 *
 * Limits: any size and splits; no in-place form; n-1 latency terms whatever the sizes.
 * Cost:   n-1 steps; Σ_{p≠r} splits[r][p] elements sent per rank.
 * Source: Open MPI ompi_coll_base_alltoallv_intra_pairwise; torch's all_to_all_single with splits.
 *
 * Step table: `cclab explain alltoallv --algorithm pairwise -n 4`
 * (kept current in test/golden/explain/alltoallv/pairwise.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { alltoallvBlocks, pairwiseExchange } from "../lib/exchange.js";

export const pairwise = defineAlgorithm({
  collective: "alltoallv",
  name: "pairwise",
  summary: "All-to-all with per-peer sizes by n-1 rounds of pairwise exchange.",
  limits: "any size and splits; no in-place form; n-1 latency terms whatever the sizes",
  source: "Open MPI ompi_coll_base_alltoallv_intra_pairwise; torch's all_to_all_single with splits",
  inPlace: false,
  // The elements sent depend on the split matrix, not on (n, count): NaN says "varies".
  cost: { steps: f("n-1", (n) => n - 1), sent: f("Σ_{p≠r} splits[r][p]", () => Number.NaN) },
  schedule(c, mem) {
    const { sendBlocks, recvBlocks } = alltoallvBlocks(c, mem);
    return pairwiseExchange(c.rank, c.size, sendBlocks, recvBlocks);
  },
});
