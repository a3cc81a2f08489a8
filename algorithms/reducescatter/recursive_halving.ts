/**
 * reducescatter/recursive_halving: recursive-halving reduce-scatter (MPICH
 * reduce_scatter_intra_recursive_halving, for commutative ops).
 *
 * With n = 2^k ranks, at the step with distance d (n/2 down to 1) rank r keeps the half of its
 * current window of chunks on its side of r xor d, sends the other half to r xor d and reduces
 * what it receives into the half it keeps; after log2 n steps it holds its own chunk, reduced.
 * When n is not a power of two the first 2·rem ranks (rem = n - 2^k) fold first: each even rank
 * sends its whole input to the odd rank after it, the 2^k remaining ranks halve over chunks of
 * one or two ranks, and each odd rank finally sends its even partner that rank's chunk. The work
 * happens in a scratch accumulator so the caller's input is never written.
 * `recursiveHalvingReduceScatter` (power of two, uneven chunks) is the building block
 * Rabenseifner all-reduce reuses.
 *
 * Limits: any size, commutative ops; best for powers of two, otherwise two extra steps and a
 * whole-input send on folded ranks; scratch n·count plus half of it.
 * Cost: ⌊log2 n⌋ steps, +2 when n is not a power of two; (n-1) · count · s bytes sent per rank
 * for a power of two, n · count · s on a folded even rank.
 *
 * Step table (n = 4), from `cclab explain reducescatter --algorithm recursive_halving -n 4`:
 * reducescatter/recursive_halving: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: tmp[0:4]=in[0:4]
 *   rank 1  copy input: tmp[0:4]=in[0:4]
 *   rank 2  copy input: tmp[0:4]=in[0:4]
 *   rank 3  copy input: tmp[0:4]=in[0:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  [0]     [1]     [2]     [3]
 *   tmp[2]  [0]     [1]     [2]     [3]
 *   tmp[3]  [0]     [1]     [2]     [3]
 *   tmp[4]  .       .       .       .
 *   tmp[5]  .       .       .       .
 *
 * step 1
 *   rank 0  recvReduceSend chunks 0..1: tmp[2:4]->2 tmp[4:6]<-2 tmp[0:2]+=tmp[4:6]
 *   rank 1  recvReduceSend chunks 0..1: tmp[2:4]->3 tmp[4:6]<-3 tmp[0:2]+=tmp[4:6]
 *   rank 2  recvReduceSend chunks 2..3: tmp[0:2]->0 tmp[4:6]<-0 tmp[2:4]+=tmp[4:6]
 *   rank 3  recvReduceSend chunks 2..3: tmp[0:2]->1 tmp[4:6]<-1 tmp[2:4]+=tmp[4:6]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   tmp[0]  [0+2]   [1+3]   [2]     [3]
 *   tmp[1]  [0+2]   [1+3]   [2]     [3]
 *   tmp[2]  [0]     [1]     [0+2]   [1+3]
 *   tmp[3]  [0]     [1]     [0+2]   [1+3]
 *   tmp[4]  [2]     [3]     [0]     [1]
 *   tmp[5]  [2]     [3]     [0]     [1]
 *
 * step 2
 *   rank 0  recvReduceSend chunk 0: tmp[1]->1 tmp[4]<-1 tmp[0]+=tmp[4]; copy result: out[0]=tmp[0]
 *   rank 1  recvReduceSend chunk 1: tmp[0]->0 tmp[4]<-0 tmp[1]+=tmp[4]; copy result: out[0]=tmp[1]
 *   rank 2  recvReduceSend chunk 2: tmp[3]->3 tmp[4]<-3 tmp[2]+=tmp[4]; copy result: out[0]=tmp[2]
 *   rank 3  recvReduceSend chunk 3: tmp[2]->2 tmp[4]<-2 tmp[3]+=tmp[4]; copy result: out[0]=tmp[3]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [0+1+2+3]  [1+3]      [2]        [3]
 *   tmp[1]  [0+2]      [0+1+2+3]  [2]        [3]
 *   tmp[2]  [0]        [1]        [0+1+2+3]  [1+3]
 *   tmp[3]  [0]        [1]        [0+2]      [0+1+2+3]
 *   tmp[4]  [1+3]      [0+2]      [1+3]      [0+2]
 *   tmp[5]  [2]        [3]        [0]        [1]
 *
 * cost: ⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0) steps, (n-1) · count · s; n · count · s on a folded even rank bytes sent per rank; here 2 steps, at most 3 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { type Chunk, copy, mapPeers, recv, reduce, region, send, step, sub } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { chunkSpan, chunksText, foldedChunks, foldedSteps, foldToPowerOfTwo } from "../allgather/recursive_doubling.js";

/**
 * In place over `buf` among `size` ranks (a power of two): on entry every rank's buf holds its
 * contribution to every chunk; after log2(size) steps chunk `rank` of buf holds the reduction
 * over all ranks. Chunks may be uneven. `scratch` must hold recursiveHalvingScratch(chunks).
 */
export function* recursiveHalvingReduceScatter(
  rank: number,
  size: number,
  buf: Region,
  chunks: readonly Chunk[],
  scratch: Region,
): Schedule {
  invariant((size & (size - 1)) === 0, () => `recursiveHalvingReduceScatter: size ${size} is not a power of two`);
  invariant(chunks.length === size, () => `recursiveHalvingReduceScatter: ${chunks.length} chunks for ${size} ranks`);
  let lo = 0;
  for (let d = size >> 1; d > 0; d >>= 1) {
    // The window [lo, lo + 2d) is this rank's; keep the half that contains it.
    const upper = (rank & d) !== 0;
    const keepLo = upper ? lo + d : lo;
    const giveLo = upper ? lo : lo + d;
    const keep = chunkSpan(buf, chunks, keepLo, keepLo + d);
    invariant(keep.count <= scratch.count, () => `recursiveHalvingReduceScatter: scratch smaller than ${keep.count}`);
    const tmp = sub(scratch, 0, keep.count);
    yield step(
      `recvReduceSend ${chunksText(keepLo, keepLo + d)}`,
      [send(rank ^ d, chunkSpan(buf, chunks, giveLo, giveLo + d)), recv(rank ^ d, tmp)],
      [reduce(keep, tmp)],
    );
    lo = keepLo;
  }
}

/** Scratch recursiveHalvingReduceScatter needs: the larger half at the first step (later halves are inside it). */
export function recursiveHalvingScratch(chunks: readonly Chunk[]): number {
  const half = chunks.length >> 1;
  let a = 0;
  let b = 0;
  chunks.forEach((c, i) => {
    if (i < half) a += c.count;
    else b += c.count;
  });
  return half === 0 ? 0 : Math.max(a, b);
}

/** Elements participant v sends in recursiveHalvingReduceScatter: the half it gives away at every step. */
export function recursiveHalvingSent(v: number, chunkCounts: readonly number[]): number {
  let sent = 0;
  let lo = 0;
  for (let d = chunkCounts.length >> 1; d > 0; d >>= 1) {
    const upper = (v & d) !== 0;
    const giveLo = upper ? lo : lo + d;
    for (let i = giveLo; i < giveLo + d; i++) sent += chunkCounts[i]!;
    lo = upper ? lo + d : lo;
  }
  return sent;
}

export const reducescatterRecursiveHalving: Algorithm = {
  collective: "reducescatter",
  name: "recursive_halving",
  summary: "Recursive-halving reduce-scatter: log2 n exchanges of halving size; extra ranks folded in and out.",
  limits: "any size, commutative ops; best for powers of two; scratch ~1.5·n·count",
  cost: {
    stepsFormula: "⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0)",
    bytesFormula: "(n-1) · count · s; n · count · s on a folded even rank",
    steps: foldedSteps,
    sentElements: (n, count) => {
      if (count === 0 || n === 1) return 0;
      const f = foldToPowerOfTwo(0, n);
      const counts = foldedChunks(f, count).map((c) => c.count);
      let max = f.rem > 0 ? n * count : 0; // an even rank of a folded pair sends its whole input
      for (let v = 0; v < f.pof2; v++) {
        max = Math.max(max, recursiveHalvingSent(v, counts) + (v < f.rem ? count : 0));
      }
      return max;
    },
  },
  scratch: (ctx) => {
    if (ctx.size === 1 || foldToPowerOfTwo(ctx.rank, ctx.size).newrank < 0) return 0;
    const f = foldToPowerOfTwo(ctx.rank, ctx.size);
    return ctx.size * ctx.count + recursiveHalvingScratch(foldedChunks(f, ctx.count));
  },
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    const input = region("input", 0, size * count);
    if (size === 1) {
      if (!ctx.inPlace) yield step("copy input", [], [copy(out, input)]);
      return;
    }
    const f = foldToPowerOfTwo(rank, size);
    if (f.newrank < 0) {
      // Even rank of a folded pair: its partner reduces for both and sends back this rank's chunk.
      yield step("send input to partner", [send(rank + 1, input)]);
      yield step("recv chunk from partner", [recv(rank + 1, out)]);
      return;
    }
    const acc = region("scratch", 0, size * count);
    const chunks = foldedChunks(f, count);
    const tmp = region("scratch", size * count, recursiveHalvingScratch(chunks));
    const folded = rank < 2 * f.rem;
    if (folded) {
      yield step("recvReduce partner's input", [recv(rank - 1, acc)], [reduce(acc, input)]);
    } else {
      yield step("copy input", [], [copy(acc, input)]);
    }
    yield* mapPeers(recursiveHalvingReduceScatter(f.newrank, f.pof2, acc, chunks, tmp), f.toRank);
    const result = copy(out, sub(acc, rank * count, count));
    if (folded) {
      yield step("send partner's chunk", [send(rank - 1, sub(acc, (rank - 1) * count, count))], [result]);
    } else {
      yield step("copy result", [], [result]);
    }
  },
};
