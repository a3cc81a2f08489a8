/**
 * allgather/gather_broadcast: Binomial gather to rank 0, then binomial broadcast of the whole
 * output.
 *
 * Limits: any size; log latency; rank 0 sends the whole output ⌈log2 n⌉ times (a baseline, not a
 *         contender).
 * Cost:   2⌈log2 n⌉ steps; ⌈log2 n⌉·n·count elements sent per rank.
 * Source: the naive composition MPI libraries fall back to.
 *
 * Step table: `cclab explain allgather --algorithm gather_broadcast -n 4`
 * (kept current in test/golden/explain/allgather/gather_broadcast.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { binomialBroadcast, binomialGatherBlocks } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

const ROOT = 0;

export const gatherBroadcast = defineAlgorithm({
  collective: "allgather",
  name: "gather_broadcast",
  summary: "Binomial gather to rank 0, then binomial broadcast of the whole output.",
  limits: "any size; log latency; rank 0 sends the whole output ⌈log2 n⌉ times (a baseline, not a contender)",
  source: "the naive composition MPI libraries fall back to",
  cost: {
    steps: f("2⌈log2 n⌉", (n) => 2 * ceilLog2(n)),
    sent: f("⌈log2 n⌉·n·count", (n, count) => ceilLog2(n) * n * count),
  },
  *schedule({ rank, size, count }, mem) {
    const counts = Array.from({ length: size }, () => count);
    yield* binomialGatherBlocks({
      rank,
      size,
      root: ROOT,
      counts,
      own: mem.input,
      all: mem.output,
      scratch: mem.scratch,
    });
    yield* binomialBroadcast(rank, size, ROOT, mem.output);
  },
});
