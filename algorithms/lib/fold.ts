/**
 * Recursive doubling and halving, and the folding that lets them run on any size (MPICH's
 * rem/newrank): the building blocks of allgather/recursive_doubling,
 * reducescatter/recursive_halving and the recursive-doubling and Rabenseifner all-reduces.
 */
import { invariant } from "../../src/core/assert.js";
import {
  type Chunk,
  type Region,
  recv,
  recvCopySend,
  recvReduceSend,
  reduce,
  type Schedule,
  send,
  step,
  sub,
} from "../../src/schedule/dsl.js";

/**
 * How a non-power-of-two size folds onto pof2 = 2^⌊log2 size⌋ ranks: the first 2·rem ranks pair
 * up, the even one of each pair sits out (newrank -1) and the odd one stands for both; the rest
 * shift down by rem.
 */
export interface Fold {
  readonly pof2: number;
  readonly rem: number;
  /** This rank's rank among the pof2 participants, or -1 for an even rank of a folded pair. */
  readonly newrank: number;
  /** The real rank of participant v. */
  toRank(v: number): number;
  /** The first real rank participant v stands for: v stands for [first(v), first(v+1)). */
  first(v: number): number;
}

export const largestPowerOfTwo = (n: number): number => (n < 1 ? 0 : 2 ** Math.floor(Math.log2(n)));
export const isPowerOfTwo = (n: number): boolean => n > 0 && (n & (n - 1)) === 0;

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

/** Steps of a folded recursive doubling or halving: log2 of the power of two, plus fold in and out. */
export const foldedSteps = (n: number): number => Math.log2(largestPowerOfTwo(n)) + (isPowerOfTwo(n) ? 0 : 2);

/** The participants' chunks when each real rank has `count` elements: participant v covers ranks first(v)..first(v+1)-1. */
export function foldedChunks(fold: Fold, count: number): Chunk[] {
  return Array.from({ length: fold.pof2 }, (_, v) => ({
    offset: fold.first(v) * count,
    count: (fold.first(v + 1) - fold.first(v)) * count,
  }));
}

/**
 * Frozen chunk lists (such as partition's, which every rank's plan shares) checked once: whether
 * each chunk starts where the one before ends. Summing every span's counts instead made a call's
 * plans quadratic in n. A list that could still change is checked span by span.
 */
const endToEnd = new WeakMap<readonly Chunk[], boolean>();

/** Whether `chunks` is frozen, its chunks too, and each chunk starts where the one before ends (remembered per list). */
export function liesEndToEnd(chunks: readonly Chunk[]): boolean {
  let known = endToEnd.get(chunks);
  if (known === undefined) {
    if (!Object.isFrozen(chunks)) return false;
    known = chunks.every(
      (c, i) =>
        Object.isFrozen(c) &&
        (i === 0 || c.offset === (chunks[i - 1] as Chunk).offset + (chunks[i - 1] as Chunk).count),
    );
    endToEnd.set(chunks, known);
  }
  return known;
}

/** Chunks lo..hi-1 of buf as one region; they must be contiguous and in order. */
export function chunkSpan(buf: Region, chunks: readonly Chunk[], lo: number, hi: number): Region {
  const a = chunks[lo] as Chunk;
  const b = chunks[hi - 1] as Chunk;
  if (!liesEndToEnd(chunks)) {
    let total = 0;
    for (let i = lo; i < hi; i++) total += (chunks[i] as Chunk).count;
    invariant(total === b.offset + b.count - a.offset, () => `chunkSpan: chunks ${lo}..${hi - 1} are not contiguous`);
  }
  return sub(buf, a.offset, b.offset + b.count - a.offset);
}

/** 'chunk 3' or 'chunks 4..7', for step labels. */
export const chunksText = (lo: number, hi: number, noun = "chunk"): string =>
  hi - lo === 1 ? `${noun} ${lo}` : `${noun}s ${lo}..${hi - 1}`;

/**
 * In place over buf among `size` ranks (a power of two): on entry rank i holds chunk i; at the
 * step with distance d each rank sends the d chunks it holds to rank xor d and receives that
 * rank's d chunks (recvCopySend); after log2(size) steps every rank holds every chunk. `peerAt(d)`
 * names the rank met at distance d, rank xor d unless told (Bine's butterfly meets a rank whose
 * number agrees with this one's above bit d and differs in it, lib/bine.ts).
 */
export function* recursiveDoublingAllGather(
  rank: number,
  size: number,
  buf: Region,
  chunks: readonly Chunk[],
  peerAt: (d: number) => number = (d) => rank ^ d,
): Schedule {
  invariant(
    isPowerOfTwo(size) && chunks.length === size,
    () => `recursiveDoublingAllGather: ${chunks.length} chunks, size ${size}`,
  );
  for (let d = 1; d < size; d <<= 1) {
    const peer = peerAt(d);
    const mine = rank & ~(d - 1);
    const theirs = (rank ^ d) & ~(d - 1);
    yield recvCopySend(chunksText(theirs, theirs + d), [
      send(peer, chunkSpan(buf, chunks, mine, mine + d)),
      recv(peer, chunkSpan(buf, chunks, theirs, theirs + d)),
    ]);
  }
}

/**
 * In place over buf among `size` ranks (a power of two): on entry every rank's buf holds its
 * contribution to every chunk; at the step with distance d (size/2 down to 1) a rank keeps the
 * half of its window on its side of rank xor d, sends the other half there and reduces what it
 * receives into the half it keeps (recvReduceSend); after log2(size) steps chunk `rank` holds the
 * reduction over all ranks. `scratch` receives; it is sized by the first (largest) half. `peerAt(d)`
 * names the rank met at distance d, as in recursiveDoublingAllGather.
 */
export function* recursiveHalvingReduceScatter(
  rank: number,
  size: number,
  buf: Region,
  chunks: readonly Chunk[],
  scratch: (count: number) => Region,
  peerAt: (d: number) => number = (d) => rank ^ d,
): Schedule {
  invariant(
    isPowerOfTwo(size) && chunks.length === size,
    () => `recursiveHalvingReduceScatter: ${chunks.length} chunks, size ${size}`,
  );
  let lo = 0;
  let tmp: Region | undefined;
  for (let d = size >> 1; d > 0; d >>= 1) {
    const upper = (rank & d) !== 0;
    const keepLo = upper ? lo + d : lo;
    const giveLo = upper ? lo : lo + d;
    const keep = chunkSpan(buf, chunks, keepLo, keepLo + d);
    tmp ??= scratch(keep.count);
    yield recvReduceSend(
      chunksText(keepLo, keepLo + d),
      [send(peerAt(d), chunkSpan(buf, chunks, giveLo, giveLo + d)), recv(peerAt(d), sub(tmp, 0, keep.count))],
      [reduce(keep, sub(tmp, 0, keep.count))],
    );
    lo = keepLo;
  }
}

/** Elements participant v sends in recursiveDoublingAllGather (its window at every distance). */
export function doublingSent(v: number, counts: readonly number[]): number {
  let sent = 0;
  for (let d = 1; d < counts.length; d <<= 1) {
    const lo = v & ~(d - 1);
    for (let i = lo; i < lo + d; i++) sent += counts[i] as number;
  }
  return sent;
}

/**
 * An all-reduce over `out` on any size: each even rank of the first 2·rem hands its buffer to
 * its odd partner and later receives the result; the partner reduces both (via tmp), the pof2
 * participants run `core`, and the partner sends the result back. `own` is where this rank's
 * contribution lies (default `out`, in place); out of place it is the input, which the fold
 * sends or reduces from (out <- own (op) received) instead of a copy into `out` first, and `core`
 * is told where the contribution lies when it starts: `out` once the fold has reduced into it.
 */
export function* foldedAllReduce(
  rank: number,
  fold: Fold,
  out: Region,
  tmp: () => Region,
  core: (own: Region) => Schedule,
  own: Region = out,
): Schedule {
  if (fold.newrank < 0) {
    yield step("send to partner", [send(rank + 1, own)]);
    yield step("recv result from partner", [recv(rank + 1, out)]);
    return;
  }
  const folded = rank < 2 * fold.rem;
  if (folded) {
    const t = tmp();
    yield step("recvReduce partner's buffer", [recv(rank - 1, t)], [reduce(out, t, own)]);
  }
  yield* core(folded ? out : own);
  if (folded) yield step("send result to partner", [send(rank - 1, out)]);
}
