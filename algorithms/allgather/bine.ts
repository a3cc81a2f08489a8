/**
 * allgather/bine: Bine-butterfly all-gather: log2 n exchanges of doubling size with peers r ± ρ(s),
 * farthest first, so the biggest messages travel the shortest hops.
 *
 * Limits: any size; the blocks gather in scratch in ν order (each step one message each way) and
 *         are copied out at the end: n·count more memory and a local copy of one op per block (n
 *         per rank, so the model reaches its operation limit at fewer ranks than recursive
 *         doubling); n not a power of two: each even rank of the first 2(n - 2^⌊log2 n⌋) hands its
 *         block to the odd rank after it and gets everything back (two extra steps, n·count more
 *         bytes on that rank).
 * Cost:   ⌊log2 n⌋ (+2 when n is not a power of two) steps; (n-1)·count (n = 2^k); + n·count on a
 *         folded odd rank elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its distance-halving Bine butterfly, with blocks in ν order and
 *         permuted at the end as the authors' allgather_bine_permute_remap does (HLC-Lab/pico,
 *         libbine/libbine_allgather.c); the fold as in MPICH's recursive doubling.
 *
 * Step table: `cclab explain allgather --algorithm bine -n 4`
 * (kept current in test/golden/explain/allgather/bine.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import {
  type Chunk,
  chunkOf,
  copy,
  defineAlgorithm,
  f,
  type LocalOp,
  mapPeers,
  recv,
  send,
  step,
  sub,
} from "../../src/schedule/dsl.js";
import { bineRemap, butterflyPeer, nuChunks } from "../lib/bine.js";
import { doublingSent, foldedSteps, foldToPowerOfTwo, recursiveDoublingAllGather } from "../lib/fold.js";

/** (n-1)·count for n = 2^k; on a folded odd rank what it doubles plus the whole output back to its partner. */
function mostSent(n: number, count: number): number {
  const fold = foldToPowerOfTwo(0, n);
  const counts = nuChunks(fold, count).map((c) => c.count);
  const { rank } = bineRemap(fold.pof2);
  let most = count; // an even rank of a folded pair sends only its own block
  for (let j = 0; j < fold.pof2; j++) {
    most = Math.max(most, doublingSent(j, counts) + ((rank[j] as number) < fold.rem ? n * count : 0));
  }
  return most;
}

export const bine = defineAlgorithm({
  collective: "allgather",
  name: "bine",
  summary:
    "Bine-butterfly all-gather: log2 n exchanges of doubling size with peers r ± ρ(s), farthest first, so the biggest messages travel the shortest hops.",
  limits:
    "any size; the blocks gather in scratch in ν order (each step one message each way) and are copied out at the end: n·count more memory and a local copy of one op per block (n per rank, so the model reaches its operation limit at fewer ranks than recursive doubling); n not a power of two: each even rank of the first 2(n - 2^⌊log2 n⌋) hands its block to the odd rank after it and gets everything back (two extra steps, n·count more bytes on that rank)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its distance-halving Bine butterfly, with blocks in ν order and permuted at the end as the authors' allgather_bine_permute_remap does (HLC-Lab/pico, libbine/libbine_allgather.c); the fold as in MPICH's recursive doubling",
  form: "in-place",
  cost: {
    steps: f("⌊log2 n⌋ (+2 when n is not a power of two)", foldedSteps),
    sent: f("(n-1)·count (n = 2^k); + n·count on a folded odd rank", mostSent),
  },
  *schedule({ rank, size, count }, { output, scratch }) {
    const fold = foldToPowerOfTwo(rank, size);
    const mine = sub(output, rank * count, count);
    if (fold.newrank < 0) {
      yield step("send block to partner", [send(rank + 1, mine)]);
      yield step("recv all blocks from partner", [recv(rank + 1, output)]);
      return;
    }
    const p = fold.pof2;
    const { nu, rank: holder } = bineRemap(p);
    const chunks = nuChunks(fold, count);
    const j = nu[fold.newrank] as number;
    const stage = scratch(size * count);
    const own = chunkOf(stage, chunks[j] as Chunk);
    const folded = rank < 2 * fold.rem;
    // A folded pair's chunk is the partner's block, then this rank's.
    const place = copy(sub(own, own.count - count, count), mine);
    if (folded) yield step("recv partner's block", [recv(rank - 1, sub(own, 0, count))], [place]);
    else yield step("stage own block", [], [place]);
    yield* mapPeers(recursiveDoublingAllGather(j, p, stage, chunks, butterflyPeer(fold.newrank, p)), fold.toRank);
    // Every other participant's chunk to its ranks' place in the output (this one's own block is there).
    const unstage: LocalOp[] = [];
    for (let i = 0; i < p; i++) {
      const q = holder[i] as number;
      const from = chunkOf(stage, chunks[i] as Chunk);
      const blocks = q === fold.newrank ? from.count - count : from.count;
      if (blocks > 0) unstage.push(copy(sub(output, fold.first(q) * count, blocks), sub(from, 0, blocks)));
    }
    yield step("copy blocks out of ν order", [], unstage);
    if (folded) yield step("send all blocks to partner", [send(rank - 1, output)]);
  },
});
