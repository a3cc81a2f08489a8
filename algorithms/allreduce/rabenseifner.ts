/**
 * allreduce/rabenseifner: Rabenseifner all-reduce: recursive-halving reduce-scatter then
 * recursive-doubling all-gather.
 *
 * Limits: any size, commutative ops; long messages at log latency; non-powers of two fold (two
 *         extra steps).
 * Cost:   2⌊log2 n⌋ (+2 when n is not a power of two) steps; 2(p-1)/p·count (p = 2^⌊log2 n⌋), +
 *         count on a folded odd rank elements sent per rank.
 * Source: MPICH allreduce_intra_reduce_scatter_allgather.
 *
 * Step table: `cclab explain allreduce --algorithm rabenseifner -n 4`
 * (kept current in test/golden/explain/allreduce/rabenseifner.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, mapPeers, partition, type Region, sub } from "../../src/schedule/dsl.js";
import {
  doublingSent,
  foldedAllReduce,
  foldToPowerOfTwo,
  isPowerOfTwo,
  largestPowerOfTwo,
  recursiveDoublingAllGather,
  recursiveHalvingReduceScatter,
} from "../lib/fold.js";

/** Recursive halving gives away what recursive doubling later sends back: twice the doubling's sends, + count when folded. */
function mostSent(n: number, count: number): number {
  const fold = foldToPowerOfTwo(0, n);
  const c = partition(count, fold.pof2).map((x) => x.count);
  // A participant that took in a folded partner sends what it halves and doubles plus the result
  // back (count); that is always more than the partner's one buffer, so only participants count.
  let most = 0;
  for (let v = 0; v < fold.pof2; v++) {
    const halving = c.reduce((a, x) => a + x, 0) - (c[v] as number);
    most = Math.max(most, halving + doublingSent(v, c) + (v < fold.rem ? count : 0));
  }
  return most;
}

export const rabenseifner = defineAlgorithm({
  collective: "allreduce",
  name: "rabenseifner",
  summary: "Rabenseifner all-reduce: recursive-halving reduce-scatter then recursive-doubling all-gather.",
  limits: "any size, commutative ops; long messages at log latency; non-powers of two fold (two extra steps)",
  source: "MPICH allreduce_intra_reduce_scatter_allgather",
  form: "in-place",
  cost: {
    steps: f(
      "2⌊log2 n⌋ (+2 when n is not a power of two)",
      (n) => 2 * Math.log2(largestPowerOfTwo(n)) + (isPowerOfTwo(n) ? 0 : 2),
    ),
    sent: f("2(p-1)/p·count (p = 2^⌊log2 n⌋), + count on a folded odd rank", mostSent),
  },
  *schedule({ rank, size, count }, { output, scratch }) {
    // The pof2 participants halve over 2^k uneven chunks of the output (after which each holds
    // one chunk reduced) and double back; folded ranks hand over and take back as in recursive doubling.
    const fold = foldToPowerOfTwo(rank, size);
    const chunks = partition(count, fold.pof2);
    // One temporary serves the fold (count) and every halving step (at most half as much).
    let tmp: Region | undefined;
    const shared = (n: number) => sub((tmp ??= scratch(count)), 0, n);
    const core = function* () {
      yield* mapPeers(recursiveHalvingReduceScatter(fold.newrank, fold.pof2, output, chunks, shared), fold.toRank);
      yield* mapPeers(recursiveDoublingAllGather(fold.newrank, fold.pof2, output, chunks), fold.toRank);
    };
    yield* foldedAllReduce(rank, fold, output, () => shared(count), core);
  },
});
