/**
 * reducescatter/recursive_halving: Recursive-halving reduce-scatter: log2 n exchanges of halving
 * size; extra ranks folded in and out.
 *
 * Limits: any size, commutative ops; best for powers of two; scratch ~1.5·n·count.
 * Cost:   ⌊log2 n⌋ (+2 when n is not a power of two) steps; (n-1)·count (n = 2^k); n·count on a
 *         folded even rank elements sent per rank.
 * Source: MPICH reduce_scatter_intra_recursive_halving.
 *
 * Step table: `cclab explain reducescatter --algorithm recursive_halving -n 4`
 * (kept current in test/golden/explain/reducescatter/recursive_halving.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { copy, defineAlgorithm, f, mapPeers, recv, reduce, send, step, sub } from "../../src/schedule/dsl.js";
import { foldedChunks, foldedSteps, foldToPowerOfTwo, recursiveHalvingReduceScatter } from "../lib/fold.js";

/** Elements participant v gives away: the half it sends at every step. */
function halvingSent(v: number, counts: readonly number[]): number {
  let sent = 0;
  let lo = 0;
  for (let d = counts.length >> 1; d > 0; d >>= 1) {
    const upper = (v & d) !== 0;
    for (let i = upper ? lo : lo + d; i < (upper ? lo : lo + d) + d; i++) sent += counts[i] as number;
    if (upper) lo += d;
  }
  return sent;
}

function mostSent(n: number, count: number): number {
  const fold = foldToPowerOfTwo(0, n);
  const counts = foldedChunks(fold, count).map((c) => c.count);
  let most = fold.rem > 0 ? n * count : 0; // an even rank of a folded pair sends its whole input
  for (let v = 0; v < fold.pof2; v++) most = Math.max(most, halvingSent(v, counts) + (v < fold.rem ? count : 0));
  return most;
}

export const recursiveHalving = defineAlgorithm({
  collective: "reducescatter",
  name: "recursive_halving",
  summary: "Recursive-halving reduce-scatter: log2 n exchanges of halving size; extra ranks folded in and out.",
  limits: "any size, commutative ops; best for powers of two; scratch ~1.5·n·count",
  source: "MPICH reduce_scatter_intra_recursive_halving",
  cost: {
    steps: f("⌊log2 n⌋ (+2 when n is not a power of two)", foldedSteps),
    sent: f("(n-1)·count (n = 2^k); n·count on a folded even rank", mostSent),
  },
  *schedule({ rank, size, count }, mem) {
    // With n not a power of two the first 2·rem ranks fold: each even rank sends its whole input
    // to the odd rank after it, which reduces for both and finally sends back its chunk. The
    // work happens in a scratch accumulator, so the caller's input is never written.
    const fold = foldToPowerOfTwo(rank, size);
    if (fold.newrank < 0) {
      yield step("send input to partner", [send(rank + 1, mem.input)]);
      yield step("recv chunk from partner", [recv(rank + 1, mem.output)]);
      return;
    }
    const acc = mem.scratch(size * count);
    const folded = rank < 2 * fold.rem;
    if (folded) {
      yield step("recvReduce partner's input", [recv(rank - 1, acc)], [reduce(acc, mem.input, acc)]);
    } else {
      yield step("copy input", [], [copy(acc, mem.input)]);
    }
    yield* mapPeers(
      recursiveHalvingReduceScatter(fold.newrank, fold.pof2, acc, foldedChunks(fold, count), mem.scratch),
      fold.toRank,
    );
    const result = copy(mem.output, sub(acc, rank * count, count));
    if (folded) yield step("send partner's chunk", [send(rank - 1, sub(acc, (rank - 1) * count, count))], [result]);
    else yield step("copy result", [], [result]);
  },
});
