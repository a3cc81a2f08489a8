/**
 * alltoall/grouped: One group of all sends and receives (torch's all_to_all over NCCL).
 *
 * Limits: any size; one latency term; all n-1 messages in flight at once share the links.
 * Cost:   1 steps; (n-1)·count elements sent per rank.
 * Source: torch.distributed all_to_all on NCCL: ncclGroupStart; ncclSend/ncclRecv to every peer;
 *         ncclGroupEnd.
 *
 * Step table: `cclab explain alltoall --algorithm grouped -n 4`
 * (kept current in test/golden/explain/alltoall/grouped.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { alltoallBlocks, groupedExchange } from "../lib/exchange.js";

export const grouped = defineAlgorithm({
  collective: "alltoall",
  name: "grouped",
  summary: "One group of all sends and receives (torch's all_to_all over NCCL).",
  limits: "any size; one latency term; all n-1 messages in flight at once share the links",
  source: "torch.distributed all_to_all on NCCL: ncclGroupStart; ncclSend/ncclRecv to every peer; ncclGroupEnd",
  cost: { steps: f("1", () => 1), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  *schedule(c, mem) {
    const { sendBlocks, recvBlocks } = yield* alltoallBlocks(c, mem);
    yield* groupedExchange(c.rank, c.size, sendBlocks, recvBlocks);
  },
});
