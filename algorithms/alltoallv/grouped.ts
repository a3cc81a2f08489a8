/**
 * alltoallv/grouped: One group of all sends and receives with per-peer sizes (all_to_all_single
 * over NCCL).
 *
 * Limits: any size and splits; no in-place form; one latency term, all messages in flight at once.
 * Cost:   1 steps; Σ_{p≠r} splits[r][p] elements sent per rank.
 * Source: torch.distributed all_to_all_single with split sizes on NCCL.
 *
 * Step table: `cclab explain alltoallv --algorithm grouped -n 4`
 * (kept current in test/golden/explain/alltoallv/grouped.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { alltoallvBlocks, groupedExchange } from "../lib/exchange.js";

export const grouped = defineAlgorithm({
  collective: "alltoallv",
  name: "grouped",
  summary: "One group of all sends and receives with per-peer sizes (all_to_all_single over NCCL).",
  limits: "any size and splits; no in-place form; one latency term, all messages in flight at once",
  source: "torch.distributed all_to_all_single with split sizes on NCCL",
  inPlace: false,
  cost: { steps: f("1", () => 1), sent: f("Σ_{p≠r} splits[r][p]", () => Number.NaN) },
  schedule(c, mem) {
    const { sendBlocks, recvBlocks } = alltoallvBlocks(c, mem);
    return groupedExchange(c.rank, c.size, sendBlocks, recvBlocks);
  },
});
