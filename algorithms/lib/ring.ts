/**
 * Ring routines, in NCCL's primitive verbs (the DSL's recvReduceSend and recvCopySend): the
 * reduce-scatter (recvReduceSend round the ring) and the all-gather (recvCopySend) that ring
 * all-reduce composes, and that reduce-scatter,
 * Rabenseifner's reduce and van de Geijn's broadcast reuse. Ranks are positions in the ring:
 * a caller running in vrank space maps peers with mapPeers.
 *
 * And the ring itself, as pure functions of rank and size: rank r sends to next = r+1 and
 * receives from prev = r-1 (mod size), as NCCL's ring over ranks in order. Rotated by a root, the
 * ring starts at the root: position (vrank) 0 is the root and the last position's next wraps back
 * to it, which chain algorithms use to stop.
 */
import { invariant } from "../../src/core/assert.js";
import {
  type Chunk,
  checkRank,
  chunkOf,
  type Region,
  recv,
  recvCopySend,
  recvReduceSend,
  reduce,
  type Schedule,
  segments,
  send,
  sub,
} from "../../src/schedule/dsl.js";

export interface RingNeighbors {
  /** Position in the ring counted from the root: (rank - root + size) % size. */
  readonly vrank: number;
  /** Rank this rank sends to. */
  readonly next: number;
  /** Rank this rank receives from. */
  readonly prev: number;
}

/** Non-negative remainder, for chunk and rank arithmetic that steps backwards round the ring. */
export const mod = (a: number, n: number): number => {
  const m = a % n;
  return m < 0 ? m + n : m;
};

export const ringNext = (rank: number, size: number): number => (rank + 1) % size;
export const ringPrev = (rank: number, size: number): number => (rank - 1 + size) % size;

/** next/prev of `rank` in the ring of `size` ranks; `root` only sets where the ring starts (vrank 0). */
export function ring(rank: number, size: number, root = 0): RingNeighbors {
  checkRank("ring", rank, size);
  checkRank("ring (root)", root, size);
  return { vrank: mod(rank - root, size), next: ringNext(rank, size), prev: ringPrev(rank, size) };
}

export interface RingReduceScatter {
  /** The n chunks (relative to the regions), uneven or empty allowed. */
  readonly chunks: readonly Chunk[];
  /** This rank's contribution; chunk j is chunkOf(input, chunks[j]). */
  readonly input: Region;
  /**
   * Where the chunk reduced at step k (chunk j) is written; it is sent at step k+1. The last
   * step reduces chunk `rank`: after it, acc(n-2, rank) holds the reduction over all ranks.
   */
  readonly acc: (k: number, j: number) => Region;
  /**
   * Where step k receives its segment i (at least the segment's size); "acc": straight into
   * acc(k, r), then acc ⊕= input (no scratch; only where acc never overlaps the input, i.e. out
   * of place: the received partial sum lands where its result goes).
   */
  readonly tmp: ((k: number, i: number) => Region) | "acc";
  /** Pipelining unit: chunks move in segments of at most this many elements (default: whole chunks). */
  readonly segment?: number;
}

/**
 * Steps whose two chunks are both empty are left out (a 32 B ring on 4,096 ranks is otherwise
 * 2(n-1) steps of empty messages on every rank, and the model would walk them all).
 *
 * One ring step moves chunk `s` out and chunk `r` in, segment by segment: the pairs (segment i
 * out, segment i in), one step each. The two chunks may differ by one element, so by a segment.
 */
function* segmentPairs(s: Chunk, r: Chunk, segment: number): Iterable<[number, Chunk | undefined, Chunk | undefined]> {
  // Both chunks one segment (always, unsegmented): the one pair, without the lists (the proof at
  // 16,384 ranks generates every rank's 2(n-1) steps).
  if (s.count <= segment && r.count <= segment) {
    yield [0, { offset: 0, count: s.count }, { offset: 0, count: r.count }];
    return;
  }
  const out = segments(s.count, segment);
  const inn = segments(r.count, segment);
  for (let i = 0; i < Math.max(out.length, inn.length); i++) yield [i, out[i], inn[i]];
}

const segmentLabel = (i: number, segmented: boolean) => (segmented ? ` segment ${i}` : "");

/**
 * n-1 steps: at step k send to next the chunk reduced at step k-1 (at k = 0: this rank's own
 * contribution to chunk rank-1), receive from prev chunk rank-k-2 and reduce it with this rank's
 * contribution into acc (recvReduceSend). Reading the contribution straight from the input means
 * no rank copies its input first. Segmented, each step is one per segment, and the dataflow
 * order sends segment i on as soon as it is reduced, while later segments are still arriving.
 */
export function* ringReduceScatter(rank: number, size: number, a: RingReduceScatter): Schedule {
  invariant(a.chunks.length === size, () => `ringReduceScatter: ${a.chunks.length} chunks for ${size} ranks`);
  const { next, prev } = ring(rank, size);
  const segment = a.segment ?? Number.POSITIVE_INFINITY;
  const own = (j: number) => chunkOf(a.input, a.chunks[j] as Chunk);
  /** Segment `inn` of chunk r at step k: where it arrives (tmp, or where its sum goes) and is reduced with this rank's part. */
  const arriving = (k: number, i: number, r: number, inn: Chunk) => {
    const dst = chunkOf(a.acc(k, r), inn);
    return { dst, tmp: a.tmp === "acc" ? dst : sub(a.tmp(k, i), 0, inn.count), mine: chunkOf(own(r), inn) };
  };
  for (let k = 0; k < size - 1; k++) {
    const s = mod(rank - k - 1, size);
    const r = mod(rank - k - 2, size);
    // Both chunks empty (count < n): nothing moves or is reduced, so the step is left out.
    if ((a.chunks[s] as Chunk).count === 0 && (a.chunks[r] as Chunk).count === 0) continue;
    const from = k === 0 ? own(s) : a.acc(k - 1, s);
    for (const [i, out, inn] of segmentPairs(a.chunks[s] as Chunk, a.chunks[r] as Chunk, segment)) {
      const into = inn && arriving(k, i, r, inn);
      yield recvReduceSend(
        `chunk ${inn ? r : s}${segmentLabel(i, a.segment !== undefined)}`,
        [out && send(next, chunkOf(from, out)), into && recv(prev, into.tmp)],
        [into && reduce(into.dst, into.tmp, into.mine)],
      );
    }
  }
}

/**
 * In place over buf: on entry rank i's chunk i holds its data; for n-1 steps each rank forwards
 * to next the chunk it received last from prev (recvCopySend), so after n-1 steps every rank
 * holds every chunk. A step whose two chunks are empty (count < n) is left out; one empty chunk
 * of two travels as a zero-length message, which the compiled plan drops.
 * With `segment`, chunks move in segments, each forwarded as soon as it has arrived.
 */
export function* ringAllGather(
  rank: number,
  size: number,
  buf: Region,
  chunks: readonly Chunk[],
  segment?: number,
): Schedule {
  invariant(chunks.length === size, () => `ringAllGather: ${chunks.length} chunks for ${size} ranks`);
  const { next, prev } = ring(rank, size);
  for (let k = 0; k < size - 1; k++) {
    const s = mod(rank - k, size);
    const r = mod(rank - k - 1, size);
    if ((chunks[s] as Chunk).count === 0 && (chunks[r] as Chunk).count === 0) continue;
    const from = chunkOf(buf, chunks[s] as Chunk);
    const into = chunkOf(buf, chunks[r] as Chunk);
    const pairs = segmentPairs(chunks[s] as Chunk, chunks[r] as Chunk, segment ?? Number.POSITIVE_INFINITY);
    for (const [i, out, inn] of pairs) {
      yield recvCopySend(`chunk ${inn ? r : s}${segmentLabel(i, segment !== undefined)}`, [
        out && send(next, chunkOf(from, out)),
        inn && recv(prev, chunkOf(into, inn)),
      ]);
    }
  }
}

/** Chunk i of a per-rank layout: count elements at i·count. */
export const blocks = (size: number, count: number): Chunk[] =>
  Array.from({ length: size }, (_, i) => ({ offset: i * count, count }));
