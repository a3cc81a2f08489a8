/**
 * allgather/recursive_doubling: Recursive-doubling all-gather: log2 n exchanges of doubling size;
 * extra ranks folded in and out.
 *
 * Limits: any size; best for powers of two; otherwise two extra steps and n·count more bytes on
 *         folded ranks.
 * Cost:   ⌊log2 n⌋ (+2 when n is not a power of two) steps; (n-1)·count (n = 2^k); (2n-1)·count on
 *         a folded odd rank elements sent per rank.
 * Source: MPICH allgather_intra_recursive_doubling; folding as in Rabenseifner's algorithms.
 *
 * Step table: `cclab explain allgather --algorithm recursive_doubling -n 4`
 * (kept current in test/golden/explain/allgather/recursive_doubling.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, mapPeers, recv, send, step, sub } from "../../src/schedule/dsl.js";
import { doublingSent, foldedChunks, foldedSteps, foldToPowerOfTwo, recursiveDoublingAllGather } from "../lib/fold.js";

/** (n-1)·count, and on a folded odd rank n·count more: it sends the whole output back to its partner. */
function mostSent(n: number, count: number): number {
  const fold = foldToPowerOfTwo(0, n);
  const counts = foldedChunks(fold, count).map((c) => c.count);
  let most = count; // an even rank of a folded pair sends only its own chunk
  for (let v = 0; v < fold.pof2; v++) most = Math.max(most, doublingSent(v, counts) + (v < fold.rem ? n * count : 0));
  return most;
}

export const recursiveDoubling = defineAlgorithm({
  collective: "allgather",
  name: "recursive_doubling",
  summary: "Recursive-doubling all-gather: log2 n exchanges of doubling size; extra ranks folded in and out.",
  limits: "any size; best for powers of two; otherwise two extra steps and n·count more bytes on folded ranks",
  source: "MPICH allgather_intra_recursive_doubling; folding as in Rabenseifner's algorithms",
  form: "in-place",
  cost: {
    steps: f("⌊log2 n⌋ (+2 when n is not a power of two)", foldedSteps),
    sent: f("(n-1)·count (n = 2^k); (2n-1)·count on a folded odd rank", mostSent),
  },
  *schedule({ rank, size, count }, { output }) {
    // With n not a power of two the first 2·rem ranks pair up: each even rank hands its chunk to
    // the odd rank after it and gets everything back at the end.
    const fold = foldToPowerOfTwo(rank, size);
    const mine = sub(output, rank * count, count);
    if (fold.newrank < 0) {
      yield step("send chunk to partner", [send(rank + 1, mine)]);
      yield step("recv all chunks from partner", [recv(rank + 1, output)]);
      return;
    }
    const folded = rank < 2 * fold.rem;
    if (folded) yield step("recv partner's chunk", [recv(rank - 1, sub(output, (rank - 1) * count, count))]);
    yield* mapPeers(
      recursiveDoublingAllGather(fold.newrank, fold.pof2, output, foldedChunks(fold, count)),
      fold.toRank,
    );
    if (folded) yield step("send all chunks to partner", [send(rank - 1, output)]);
  },
});
