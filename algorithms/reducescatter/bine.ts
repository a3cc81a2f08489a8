/**
 * reducescatter/bine: Bine-butterfly reduce-scatter: log2 n exchanges of halving size with peers r
 * ± ρ(s), nearest first, so the biggest halves stay among neighbours.
 *
 * Limits: any size, commutative ops; the input is copied into scratch in ν order (each step one
 *         message each way), one op per block (n per rank, so the model reaches its operation limit
 *         at fewer ranks than recursive halving): scratch ~1.5·n·count; n not a power of two: each
 *         even rank of the first 2(n - 2^⌊log2 n⌋) hands its whole input to the odd rank after it
 *         and gets its block back (two extra steps).
 * Cost:   ⌊log2 n⌋ (+2 when n is not a power of two) steps; (n-1)·count (n = 2^k); n·count
 *         otherwise, on a folded even rank elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its distance-doubling Bine butterfly, with blocks permuted into ν order
 *         first as the authors' reduce_scatter_bine_permute_remap does (HLC-Lab/pico,
 *         libbine/libbine_reduce_scatter.c); the fold as in MPICH's recursive halving.
 *
 * Step table: `cclab explain reducescatter --algorithm bine -n 4`
 * (kept current in test/golden/explain/reducescatter/bine.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import {
  type Chunk,
  chunkOf,
  copy,
  defineAlgorithm,
  f,
  mapPeers,
  recv,
  reduce,
  send,
  step,
  sub,
} from "../../src/schedule/dsl.js";
import { bineRemap, butterflyPeer, nuChunks } from "../lib/bine.js";
import { foldedSteps, foldToPowerOfTwo, isPowerOfTwo, recursiveHalvingReduceScatter } from "../lib/fold.js";

/**
 * (n-1)·count for n = 2^k: everything but the chunk kept. Otherwise a folded even rank's whole
 * input, n·count, is the most: a folded odd rank gives away all but its pair's two blocks and
 * sends one back, (n-1)·count.
 */
const mostSent = (n: number, count: number): number => (isPowerOfTwo(n) ? n - 1 : n) * count;

export const bine = defineAlgorithm({
  collective: "reducescatter",
  name: "bine",
  summary:
    "Bine-butterfly reduce-scatter: log2 n exchanges of halving size with peers r ± ρ(s), nearest first, so the biggest halves stay among neighbours.",
  limits:
    "any size, commutative ops; the input is copied into scratch in ν order (each step one message each way), one op per block (n per rank, so the model reaches its operation limit at fewer ranks than recursive halving): scratch ~1.5·n·count; n not a power of two: each even rank of the first 2(n - 2^⌊log2 n⌋) hands its whole input to the odd rank after it and gets its block back (two extra steps)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its distance-doubling Bine butterfly, with blocks permuted into ν order first as the authors' reduce_scatter_bine_permute_remap does (HLC-Lab/pico, libbine/libbine_reduce_scatter.c); the fold as in MPICH's recursive halving",
  cost: {
    steps: f("⌊log2 n⌋ (+2 when n is not a power of two)", foldedSteps),
    sent: f("(n-1)·count (n = 2^k); n·count otherwise, on a folded even rank", mostSent),
  },
  *schedule({ rank, size, count }, { input, output, scratch }) {
    const fold = foldToPowerOfTwo(rank, size);
    if (fold.newrank < 0) {
      yield step("send input to partner", [send(rank + 1, input)]);
      yield step("recv block from partner", [recv(rank + 1, output)]);
      return;
    }
    const p = fold.pof2;
    const { nu } = bineRemap(p);
    const chunks = nuChunks(fold, count);
    const acc = scratch(size * count);
    const folded = rank < 2 * fold.rem;
    // Participant q's blocks (ranks fold.first(q)..) go to chunk ν(q) of the accumulator.
    const at = (q: number) => {
      const dst = chunkOf(acc, chunks[nu[q] as number] as Chunk);
      return { dst, from: fold.first(q) * count };
    };
    const parts = Array.from({ length: p }, (_, q) => at(q));
    if (folded) {
      const other = scratch(size * count);
      yield step(
        "recvReduce partner's input in ν order",
        [recv(rank - 1, other)],
        parts.map(({ dst, from }) => reduce(dst, sub(input, from, dst.count), sub(other, from, dst.count))),
      );
    } else {
      yield step(
        "copy input in ν order",
        [],
        parts.map(({ dst, from }) => copy(dst, sub(input, from, dst.count))),
      );
    }
    const j = nu[fold.newrank] as number;
    yield* mapPeers(
      recursiveHalvingReduceScatter(j, p, acc, chunks, scratch, butterflyPeer(fold.newrank, p)),
      fold.toRank,
    );
    const own = (parts[fold.newrank] as (typeof parts)[number]).dst;
    const result = copy(output, sub(own, own.count - count, count));
    if (folded) yield step("send partner's block", [send(rank - 1, sub(own, 0, count))], [result]);
    else yield step("copy result", [], [result]);
  },
});
