/**
 * allreduce/recursive_doubling: Recursive-doubling all-reduce: log2 n whole-buffer exchanges; extra
 * ranks folded in and out.
 *
 * Limits: any size, commutative ops; short messages; every step sends the whole buffer.
 * Cost:   ⌊log2 n⌋ (+2 when n is not a power of two) steps; (⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0))·count
 *         elements sent per rank.
 * Source: MPICH allreduce_intra_recursive_doubling.
 *
 * Step table: `cclab explain allreduce --algorithm recursive_doubling -n 4`
 * (kept current in test/golden/explain/allreduce/recursive_doubling.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import {
  defineAlgorithm,
  f,
  type Region,
  recv,
  recvReduceSend,
  reduce,
  type Schedule,
  send,
} from "../../src/schedule/dsl.js";
import { type Fold, foldedAllReduce, foldedSteps, foldToPowerOfTwo, isPowerOfTwo } from "../lib/fold.js";

/** The exchanges, the first reading the contribution where it lies (`own`) and reducing it into `out`. */
function* doubling(fold: Fold, own: Region, out: Region, tmp: () => Region): Schedule {
  let mine = own;
  for (let d = 1; d < fold.pof2; d <<= 1) {
    const peer = fold.toRank(fold.newrank ^ d);
    yield recvReduceSend(`with rank ${peer}`, [send(peer, mine), recv(peer, tmp())], [reduce(out, tmp(), mine)]);
    mine = out;
  }
}

export const recursiveDoubling = defineAlgorithm({
  collective: "allreduce",
  name: "recursive_doubling",
  summary: "Recursive-doubling all-reduce: log2 n whole-buffer exchanges; extra ranks folded in and out.",
  limits: "any size, commutative ops; short messages; every step sends the whole buffer",
  source: "MPICH allreduce_intra_recursive_doubling",
  cost: {
    steps: f("⌊log2 n⌋ (+2 when n is not a power of two)", foldedSteps),
    sent: f("(⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0))·count", (n, count) => (foldedSteps(n) - (isPowerOfTwo(n) ? 0 : 1)) * count),
  },
  *schedule({ rank, size, count }, { input, output, scratch }) {
    // At distance d (1, 2, 4, ...) a rank exchanges its whole buffer with rank xor d and reduces
    // what it receives; with n not a power of two the first 2·rem ranks fold in and out first.
    // Out of place the first exchange sends the input and reduces it with what arrives into the
    // output (NCCL's recvReduceCopy), so no step copies the input first (in place input is output).
    const fold = foldToPowerOfTwo(rank, size);
    let tmp: Region | undefined;
    const t = () => (tmp ??= scratch(count));
    yield* foldedAllReduce(rank, fold, output, t, (own) => doubling(fold, own, output, t), input);
  },
});
