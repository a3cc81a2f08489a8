/**
 * allreduce/bine_latency: Bine all-reduce, latency-optimal: log2 n whole-buffer exchanges, at step
 * s with rank r ± ρ(s), nearest first (Swing's latency-optimal schedule, which Bine's butterfly
 * contains); non-powers of two fold onto neighbours.
 *
 * Limits: any size, commutative ops; short messages; floats: ranks may end with different last bits
 *         (not NCCL's every-rank-identical result); every step sends the whole buffer; n not a
 *         power of two: each even rank of the first 2(n - 2^⌊log2 n⌋) hands its buffer to the odd
 *         rank after it, its nearest neighbour, and gets the result back (two extra steps;
 *         swing_latency folds onto ranks n - p below instead).
 * Cost:   ⌊log2 n⌋ (+2 when n is not a power of two) steps; (⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0))·count
 *         elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its Bine butterfly with whole buffers, as the authors'
 *         allreduce_bine_lat does it, fold included (HLC-Lab/pico, libbine/libbine_allreduce.c).
 *
 * Step table: `cclab explain allreduce --algorithm bine_latency -n 4`
 * (kept current in test/golden/explain/allreduce/bine_latency.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import {
  defineAlgorithm,
  f,
  mapPeers,
  type Region,
  recv,
  recvReduceSend,
  reduce,
  type Schedule,
  send,
} from "../../src/schedule/dsl.js";
import { foldedAllReduce, foldedSteps, foldToPowerOfTwo, isPowerOfTwo, largestPowerOfTwo } from "../lib/fold.js";
import { swingPeer } from "../lib/swing.js";

/** log2 p whole-buffer exchanges among p = 2^k participants, at step s with π(q, s): the nearest first. */
function* exchanges(q: number, p: number, out: Region, own: Region, tmp: Region): Schedule {
  for (let s = 0; 2 ** s < p; s++) {
    const peer = swingPeer(q, s, p);
    // The first exchange sends this rank's contribution where it lies and sums into out.
    const mine = s === 0 ? own : out;
    yield recvReduceSend(`with participant ${peer}`, [send(peer, mine), recv(peer, tmp)], [reduce(out, tmp, mine)]);
  }
}

export const bineLatency = defineAlgorithm({
  collective: "allreduce",
  name: "bine_latency",
  summary:
    "Bine all-reduce, latency-optimal: log2 n whole-buffer exchanges, at step s with rank r ± ρ(s), nearest first (Swing's latency-optimal schedule, which Bine's butterfly contains); non-powers of two fold onto neighbours.",
  limits:
    "any size, commutative ops; short messages; floats: ranks may end with different last bits (not NCCL's every-rank-identical result); every step sends the whole buffer; n not a power of two: each even rank of the first 2(n - 2^⌊log2 n⌋) hands its buffer to the odd rank after it, its nearest neighbour, and gets the result back (two extra steps; swing_latency folds onto ranks n - p below instead)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its Bine butterfly with whole buffers, as the authors' allreduce_bine_lat does it, fold included (HLC-Lab/pico, libbine/libbine_allreduce.c)",
  ranksDiffer:
    "each rank sums the n contributions grouped by its own Bine peers (rank 0 of 8: ((x0+x1)+(x7+x6))+..., rank 1: ((x1+x0)+(x2+x3))+...), so floating-point sums differ between ranks in the last bits; integer and min/max results agree",
  cost: {
    steps: f("⌊log2 n⌋ (+2 when n is not a power of two)", foldedSteps),
    sent: f(
      "(⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0))·count",
      (n, count) => (Math.log2(largestPowerOfTwo(n)) + (isPowerOfTwo(n) ? 0 : 1)) * count,
    ),
  },
  // Out of place the first exchange (or the fold) reads the input where it lies: no copy.
  *schedule({ rank, size, count }, { input, output, scratch }) {
    const fold = foldToPowerOfTwo(rank, size);
    let tmp: Region | undefined;
    const t = () => (tmp ??= scratch(count));
    yield* foldedAllReduce(
      rank,
      fold,
      output,
      t,
      (own) => mapPeers(exchanges(fold.newrank, fold.pof2, output, own, t()), fold.toRank),
      input,
    );
  },
});
