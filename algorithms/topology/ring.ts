/**
 * topology/ring: the ring every ring algorithm walks, as pure functions of rank and size.
 * Rank r sends to next = r+1 and receives from prev = r-1 (mod size), as NCCL's ring over
 * ranks in order. Rotated by a root, the ring starts at the root: position (vrank) 0 is the
 * root and the last position's next wraps back to it, which chain algorithms use to stop.
 */
import { checkRank } from "./rank.js";

export interface RingNeighbors {
  /** Position in the ring counted from the root: (rank - root + size) % size. */
  readonly vrank: number;
  /** Rank this rank sends to. */
  readonly next: number;
  /** Rank this rank receives from. */
  readonly prev: number;
}

/** Non-negative remainder, for chunk and rank arithmetic that steps backwards round the ring. */
export const mod = (a: number, n: number): number => ((a % n) + n) % n;

export const ringNext = (rank: number, size: number): number => (rank + 1) % size;
export const ringPrev = (rank: number, size: number): number => (rank - 1 + size) % size;

/** next/prev of `rank` in the ring of `size` ranks; `root` only sets where the ring starts (vrank 0). */
export function ring(rank: number, size: number, root = 0): RingNeighbors {
  checkRank("ring", rank, size);
  checkRank("ring (root)", root, size);
  return { vrank: mod(rank - root, size), next: ringNext(rank, size), prev: ringPrev(rank, size) };
}
