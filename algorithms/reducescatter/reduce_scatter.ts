/**
 * reducescatter/reduce_scatter: Binomial reduce of the whole input to rank 0, then binomial scatter
 * of the chunks.
 *
 * Limits: any size, commutative ops; log latency; every step carries n·count (a baseline, not a
 *         contender).
 * Cost:   2⌈log2 n⌉ steps; (n + m - 1)·count, m = the largest subtree below rank 0 elements sent
 *         per rank.
 * Source: the naive composition MPI libraries fall back to.
 *
 * Step table: `cclab explain reducescatter --algorithm reduce_scatter -n 4`
 * (kept current in test/golden/explain/reducescatter/reduce_scatter.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { binomialReduce, binomialScatterBlocks, largestSubtree } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

const ROOT = 0;

export const reduceScatter = defineAlgorithm({
  collective: "reducescatter",
  name: "reduce_scatter",
  summary: "Binomial reduce of the whole input to rank 0, then binomial scatter of the chunks.",
  limits: "any size, commutative ops; log latency; every step carries n·count (a baseline, not a contender)",
  source: "the naive composition MPI libraries fall back to",
  cost: {
    steps: f("2⌈log2 n⌉", (n) => 2 * ceilLog2(n)),
    sent: f(
      "(n + m - 1)·count, m = the largest subtree below rank 0",
      (n, count) => (n + largestSubtree(n) - 1) * count,
    ),
  },
  *schedule({ rank, size, count }, mem) {
    // The reduce accumulates in scratch (the input is never written) and leaves the whole
    // reduction at rank 0, which scatters every rank its chunk.
    const result = mem.scratch(rank === ROOT ? size * count : 0);
    yield* binomialReduce(rank, size, ROOT, { input: mem.input, output: result, scratch: mem.scratch });
    const counts = Array.from({ length: size }, () => count);
    yield* binomialScatterBlocks({
      rank,
      size,
      root: ROOT,
      counts,
      all: result,
      own: mem.output,
      scratch: mem.scratch,
    });
  },
});
