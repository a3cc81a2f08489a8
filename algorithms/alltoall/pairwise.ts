/**
 * alltoall/pairwise: n-1 rounds; in round k send to rank r+k and receive from rank r-k.
 *
 * Limits: any size; n-1 latency terms (bruck needs ⌈log2 n⌉); one message per link at a time.
 * Cost:   n-1 steps; (n-1)·count elements sent per rank.
 * Source: MPICH alltoall_intra_pairwise; Open MPI ompi_coll_base_alltoall_intra_pairwise.
 *
 * Step table: `cclab explain alltoall --algorithm pairwise -n 4`
 * (kept current in test/golden/explain/alltoall/pairwise.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { alltoallBlocks, pairwiseExchange } from "../lib/exchange.js";

export const pairwise = defineAlgorithm({
  collective: "alltoall",
  name: "pairwise",
  summary: "n-1 rounds; in round k send to rank r+k and receive from rank r-k.",
  limits: "any size; n-1 latency terms (bruck needs ⌈log2 n⌉); one message per link at a time",
  source: "MPICH alltoall_intra_pairwise; Open MPI ompi_coll_base_alltoall_intra_pairwise",
  cost: { steps: f("n-1", (n) => n - 1), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  *schedule(c, mem) {
    const { sendBlocks, recvBlocks } = yield* alltoallBlocks(c, mem);
    yield* pairwiseExchange(c.rank, c.size, sendBlocks, recvBlocks);
  },
});
