/**
 * allgather/recursive_doubling: recursive-doubling all-gather (MPICH allgather_intra_recursive_doubling),
 * with the extra ranks of a non-power-of-two size folded in and out as Rabenseifner does.
 *
 * With n = 2^k ranks, at step i (distance 2^i) rank r exchanges the 2^i chunks it holds with
 * rank r xor 2^i, doubling what it holds. When n is not a power of two, the first 2·rem ranks
 * (rem = n - 2^k) pair up: each even rank first sends its chunk to the odd rank after it, the
 * 2^k remaining ranks run recursive doubling over chunks of one or two ranks' data, and each
 * odd rank finally sends the whole output back to its even partner.
 * `recursiveDoublingAllGather` (power of two, uneven chunks) and `foldToPowerOfTwo` are the
 * building blocks Rabenseifner all-reduce and the non-power-of-two cases reuse.
 *
 * Limits: any size; log-latency for powers of two, two extra steps and n·count more bytes on the
 * odd ranks of a folded pair otherwise.
 * Cost: ⌊log2 n⌋ steps, +2 when n is not a power of two; (n-1) · count · s bytes sent per rank,
 * n·count·s more (plus what the pair holds) on a folded odd rank.
 *
 * Step table (n = 4), from `cclab explain allgather --algorithm recursive_doubling -n 4`:
 * allgather/recursive_doubling: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: out[0]=in[0]
 *   rank 1  copy input: out[1]=in[0]
 *   rank 2  copy input: out[2]=in[0]
 *   rank 3  copy input: out[3]=in[0]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     .       .       .
 *   out[1]  .       [1]     .       .
 *   out[2]  .       .       [2]     .
 *   out[3]  .       .       .       [3]
 *
 * step 1
 *   rank 0  recvCopySend chunk 1: out[0]->1 out[1]<-1
 *   rank 1  recvCopySend chunk 0: out[1]->0 out[0]<-0
 *   rank 2  recvCopySend chunk 3: out[2]->3 out[3]<-3
 *   rank 3  recvCopySend chunk 2: out[3]->2 out[2]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     .       .
 *   out[1]  [1]     [1]     .       .
 *   out[2]  .       .       [2]     [2]
 *   out[3]  .       .       [3]     [3]
 *
 * step 2
 *   rank 0  recvCopySend chunks 2..3: out[0:2]->2 out[2:4]<-2
 *   rank 1  recvCopySend chunks 2..3: out[0:2]->3 out[2:4]<-3
 *   rank 2  recvCopySend chunks 0..1: out[2:4]->0 out[0:2]<-0
 *   rank 3  recvCopySend chunks 0..1: out[2:4]->1 out[0:2]<-1
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *
 * cost: ⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0) steps, (n-1) · count · s; (n-1+n) · count · s on a folded odd rank bytes sent per rank; here 2 steps, at most 3 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { type Chunk, copy, mapPeers, recv, region, send, step, sub } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";

/**
 * How a non-power-of-two size folds onto pof2 = 2^⌊log2 size⌋ ranks (MPICH's rem/newrank):
 * the first 2·rem ranks pair up, the even one of each pair sits out (newrank -1) and the odd one
 * stands for both; the rest shift down by rem.
 */
export interface Fold {
  readonly pof2: number;
  readonly rem: number;
  /** This rank's rank among the pof2 participants, or -1 for an even rank of a folded pair. */
  readonly newrank: number;
  /** The real rank of participant v. */
  toRank(v: number): number;
  /** The first real rank participant v stands for (v = pof2 gives size): v stands for [first(v), first(v+1)). */
  first(v: number): number;
}

export const largestPowerOfTwo = (n: number): number => (n < 1 ? 0 : 2 ** Math.floor(Math.log2(n)));

export function foldToPowerOfTwo(rank: number, size: number): Fold {
  const pof2 = largestPowerOfTwo(size);
  const rem = size - pof2;
  const newrank = rank < 2 * rem ? (rank % 2 === 0 ? -1 : rank >> 1) : rank - rem;
  return {
    pof2,
    rem,
    newrank,
    toRank: (v) => (v < rem ? 2 * v + 1 : v + rem),
    first: (v) => (v < rem ? 2 * v : v + rem),
  };
}

/** Chunks lo..hi-1 of buf as one region; the chunks must be contiguous and in order. */
export function chunkSpan(buf: Region, chunks: readonly Chunk[], lo: number, hi: number): Region {
  const a = chunks[lo]!;
  const b = chunks[hi - 1]!;
  invariant(b.offset + b.count - a.offset >= 0, () => `chunkSpan: chunks ${lo}..${hi - 1} out of order`);
  let total = 0;
  for (let i = lo; i < hi; i++) total += chunks[i]!.count;
  invariant(total === b.offset + b.count - a.offset, () => `chunkSpan: chunks ${lo}..${hi - 1} are not contiguous`);
  return sub(buf, a.offset, total);
}

/** 'chunk 3' or 'chunks 4..7', for step labels. */
export const chunksText = (lo: number, hi: number, noun = "chunk"): string =>
  hi - lo === 1 ? `${noun} ${lo}` : `${noun}s ${lo}..${hi - 1}`;

/**
 * In place over `buf` among `size` ranks (a power of two): on entry rank i holds chunk i; at the
 * step with distance d each rank sends the d chunks it holds to rank xor d and receives that
 * rank's d chunks; after log2(size) steps every rank holds every chunk. Chunks may be uneven.
 */
export function* recursiveDoublingAllGather(
  rank: number,
  size: number,
  buf: Region,
  chunks: readonly Chunk[],
): Schedule {
  invariant((size & (size - 1)) === 0, () => `recursiveDoublingAllGather: size ${size} is not a power of two`);
  invariant(chunks.length === size, () => `recursiveDoublingAllGather: ${chunks.length} chunks for ${size} ranks`);
  for (let d = 1; d < size; d <<= 1) {
    const peer = rank ^ d;
    const mine = rank & ~(d - 1);
    const theirs = peer & ~(d - 1);
    yield step(`recvCopySend ${chunksText(theirs, theirs + d)}`, [
      send(peer, chunkSpan(buf, chunks, mine, mine + d)),
      recv(peer, chunkSpan(buf, chunks, theirs, theirs + d)),
    ]);
  }
}

/** Elements participant v sends in recursiveDoublingAllGather: its window at every distance. */
export function recursiveDoublingSent(v: number, chunkCounts: readonly number[]): number {
  let sent = 0;
  for (let d = 1; d < chunkCounts.length; d <<= 1) {
    const lo = v & ~(d - 1);
    for (let i = lo; i < lo + d; i++) sent += chunkCounts[i]!;
  }
  return sent;
}

/**
 * The participants' chunks of a folded rank space with `count` elements per rank: participant v
 * stands for ranks first(v)..first(v+1)-1 (all-gather: the blocks it holds; reduce-scatter: the
 * blocks it reduces).
 */
export function foldedChunks(f: Fold, count: number): Chunk[] {
  return Array.from({ length: f.pof2 }, (_, v) => ({
    offset: f.first(v) * count,
    count: (f.first(v + 1) - f.first(v)) * count,
  }));
}

/** Steps of a folded recursive doubling/halving: log2 of the power of two, plus fold in and out. */
export function foldedSteps(n: number, count: number): number {
  if (count === 0 || n === 1) return 0;
  const f = foldToPowerOfTwo(0, n);
  return Math.log2(f.pof2) + (f.rem > 0 ? 2 : 0);
}

export const allgatherRecursiveDoubling: Algorithm = {
  collective: "allgather",
  name: "recursive_doubling",
  summary: "Recursive-doubling all-gather: log2 n exchanges of doubling size; extra ranks folded in and out.",
  limits: "any size; best for powers of two; otherwise two extra steps and n·count more bytes on folded ranks",
  cost: {
    stepsFormula: "⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0)",
    bytesFormula: "(n-1) · count · s; (n-1+n) · count · s on a folded odd rank",
    steps: foldedSteps,
    sentElements: (n, count) => {
      if (count === 0 || n === 1) return 0;
      const f = foldToPowerOfTwo(0, n);
      const counts = foldedChunks(f, count).map((c) => c.count);
      let max = count; // an even rank of a folded pair sends only its own chunk
      for (let v = 0; v < f.pof2; v++) {
        max = Math.max(max, recursiveDoublingSent(v, counts) + (v < f.rem ? n * count : 0));
      }
      return max;
    },
  },
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, size * count);
    const mine = sub(out, rank * count, count);
    const input = region("input", 0, count);
    const f = foldToPowerOfTwo(rank, size);
    if (f.newrank < 0) {
      // Even rank of a folded pair: hand the chunk to the odd rank, get everything back at the end.
      yield step("send chunk to partner", [send(rank + 1, input)]);
      yield step("recv all chunks from partner", [recv(rank + 1, out)]);
      return;
    }
    if (!ctx.inPlace) yield step("copy input", [], [copy(mine, input)]);
    if (size === 1) return;
    const folded = rank < 2 * f.rem;
    if (folded) yield step("recv partner's chunk", [recv(rank - 1, sub(out, (rank - 1) * count, count))]);
    yield* mapPeers(recursiveDoublingAllGather(f.newrank, f.pof2, out, foldedChunks(f, count)), f.toRank);
    if (folded) yield step("send all chunks to partner", [send(rank - 1, out)]);
  },
};
