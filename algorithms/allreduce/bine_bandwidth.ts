/**
 * allreduce/bine_bandwidth: Bine all-reduce, bandwidth-optimal: a Bine-butterfly reduce-scatter
 * (peers r ± ρ(s), nearest first, so the biggest halves stay local) then the all-gather back,
 * farthest first.
 *
 * Limits: any size, commutative ops; long messages at log latency; each step one message each way:
 *         chunks lie in the buffer in ν order (the authors' remap), so the halves a rank sends lie
 *         together; n not a power of two: each even rank of the first 2(n - 2^⌊log2 n⌋) folds into
 *         the odd rank after it (two extra steps, whole buffer; swing_bandwidth instead runs any
 *         even n).
 * Cost:   2⌊log2 n⌋ (+2 when n is not a power of two) steps; 2(p-1)/p·count (p = 2^⌊log2 n⌋), +
 *         count on a folded odd rank elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its Bine butterflies (distance-doubling reduce-scatter,
 *         distance-halving all-gather), laid out as the authors' allreduce_bine_bdw_remap does
 *         (HLC-Lab/pico, libbine/libbine_allreduce.c: remap_rank); the fold as in MPICH's
 *         Rabenseifner.
 *
 * Step table: `cclab explain allreduce --algorithm bine_bandwidth -n 4`
 * (kept current in test/golden/explain/allreduce/bine_bandwidth.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, mapPeers, partition, type Region, sub } from "../../src/schedule/dsl.js";
import { bineRemap, butterflyPeer } from "../lib/bine.js";
import {
  doublingSent,
  foldedAllReduce,
  foldToPowerOfTwo,
  isPowerOfTwo,
  largestPowerOfTwo,
  recursiveDoublingAllGather,
  recursiveHalvingReduceScatter,
} from "../lib/fold.js";

/** What the reduce-scatter gives away and the all-gather sends back, + count on a folded odd rank. */
function mostSent(n: number, count: number): number {
  const fold = foldToPowerOfTwo(0, n);
  const c = partition(count, fold.pof2).map((x) => x.count);
  const { rank } = bineRemap(fold.pof2);
  let most = 0;
  // Position j of the buffer is the chunk of participant rank[j].
  for (let j = 0; j < fold.pof2; j++) {
    const halving = count - (c[j] as number);
    most = Math.max(most, halving + doublingSent(j, c) + ((rank[j] as number) < fold.rem ? count : 0));
  }
  return most;
}

export const bineBandwidth = defineAlgorithm({
  collective: "allreduce",
  name: "bine_bandwidth",
  summary:
    "Bine all-reduce, bandwidth-optimal: a Bine-butterfly reduce-scatter (peers r ± ρ(s), nearest first, so the biggest halves stay local) then the all-gather back, farthest first.",
  limits:
    "any size, commutative ops; long messages at log latency; each step one message each way: chunks lie in the buffer in ν order (the authors' remap), so the halves a rank sends lie together; n not a power of two: each even rank of the first 2(n - 2^⌊log2 n⌋) folds into the odd rank after it (two extra steps, whole buffer; swing_bandwidth instead runs any even n)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its Bine butterflies (distance-doubling reduce-scatter, distance-halving all-gather), laid out as the authors' allreduce_bine_bdw_remap does (HLC-Lab/pico, libbine/libbine_allreduce.c: remap_rank); the fold as in MPICH's Rabenseifner",
  form: "in-place",
  cost: {
    steps: f(
      "2⌊log2 n⌋ (+2 when n is not a power of two)",
      (n) => 2 * Math.log2(largestPowerOfTwo(n)) + (isPowerOfTwo(n) ? 0 : 2),
    ),
    sent: f("2(p-1)/p·count (p = 2^⌊log2 n⌋), + count on a folded odd rank", mostSent),
  },
  *schedule({ rank, size, count }, { output, scratch }) {
    // The p participants halve on ν (position ν(q) of the buffer is participant q's chunk), each
    // meeting π(q, s) at step s, then double back; folded ranks hand over and take back.
    const fold = foldToPowerOfTwo(rank, size);
    const p = fold.pof2;
    const chunks = partition(count, p);
    let tmp: Region | undefined;
    const shared = (n: number) => sub((tmp ??= scratch(count)), 0, n);
    const core = function* () {
      const j = bineRemap(p).nu[fold.newrank] as number;
      const peer = butterflyPeer(fold.newrank, p);
      yield* mapPeers(recursiveHalvingReduceScatter(j, p, output, chunks, shared, peer), fold.toRank);
      yield* mapPeers(recursiveDoublingAllGather(j, p, output, chunks, peer), fold.toRank);
    };
    yield* foldedAllReduce(rank, fold, output, () => shared(count), core);
  },
});
