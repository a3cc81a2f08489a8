/**
 * Ring routines, in NCCL's primitive verbs: the reduce-scatter (recvReduceSend round the ring)
 * and the all-gather (recvCopySend) that ring all-reduce composes, and that reduce-scatter,
 * Rabenseifner's reduce and van de Geijn's broadcast reuse. Ranks are positions in the ring:
 * a caller running in vrank space maps peers with mapPeers.
 */
import { invariant } from "../../src/core/assert.js";
import {
  type Chunk,
  chunkOf,
  type Region,
  recv,
  reduce,
  type Schedule,
  send,
  step,
  sub,
} from "../../src/schedule/dsl.js";
import { mod, ring } from "../topology/ring.js";

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
  /** Where step k receives (at least the largest chunk). */
  readonly tmp: (k: number) => Region;
}

/**
 * n-1 steps: at step k send to next the chunk reduced at step k-1 (at k = 0: this rank's own
 * contribution to chunk rank-1), receive from prev chunk rank-k-2 and reduce it with this rank's
 * contribution into acc (recvReduceSend). Reading the contribution straight from the input means
 * no rank copies its input first.
 */
export function* ringReduceScatter(rank: number, size: number, a: RingReduceScatter): Schedule {
  invariant(a.chunks.length === size, () => `ringReduceScatter: ${a.chunks.length} chunks for ${size} ranks`);
  const { next, prev } = ring(rank, size);
  const own = (j: number) => chunkOf(a.input, a.chunks[j] as Chunk);
  for (let k = 0; k < size - 1; k++) {
    const s = mod(rank - k - 1, size);
    const r = mod(rank - k - 2, size);
    const c = a.chunks[r] as Chunk;
    const tmp = sub(a.tmp(k), 0, c.count);
    yield step(
      `recvReduceSend chunk ${r}`,
      [send(next, k === 0 ? own(s) : a.acc(k - 1, s)), recv(prev, tmp)],
      [reduce(a.acc(k, r), tmp, own(r))],
    );
  }
}

/**
 * In place over buf: on entry rank i's chunk i holds its data; for n-1 steps each rank forwards
 * to next the chunk it received last from prev (recvCopySend), so after n-1 steps every rank
 * holds every chunk. Empty chunks travel as zero-length messages, so every rank takes n-1 steps.
 */
export function* ringAllGather(rank: number, size: number, buf: Region, chunks: readonly Chunk[]): Schedule {
  invariant(chunks.length === size, () => `ringAllGather: ${chunks.length} chunks for ${size} ranks`);
  const { next, prev } = ring(rank, size);
  for (let k = 0; k < size - 1; k++) {
    const s = mod(rank - k, size);
    const r = mod(rank - k - 1, size);
    yield step(`recvCopySend chunk ${r}`, [
      send(next, chunkOf(buf, chunks[s] as Chunk)),
      recv(prev, chunkOf(buf, chunks[r] as Chunk)),
    ]);
  }
}

/** Chunk i of a per-rank layout: count elements at i·count. */
export const blocks = (size: number, count: number): Chunk[] =>
  Array.from({ length: size }, (_, i) => ({ offset: i * count, count }));
