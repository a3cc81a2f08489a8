/**
 * Per-byte costs that depend on the size of the call: a host moves, reduces and copies a buffer
 * that stays in its caches faster than one that streams from memory (this machine's MPI_Sendrecv
 * runs ~8 GB/s at 64 KiB – 2 MiB and ~5 GB/s at 32 MiB). `cclab calibrate` measures beta, gamma
 * and the copy cost at several buffer sizes; the alpha-beta model (model.ts) takes them at the
 * call's own buffer size (count × element size), interpolated linearly in log2(bytes) between
 * the two measured sizes around it and held at the nearest end outside them. The working set is
 * the key, not each message's size: a pipelined ring's 128 KiB segments of a 32 MiB buffer still
 * stream from memory.
 */

/** Costs measured with buffers of `bytes`; a field left out falls back to the scalar parameter. */
export interface SizePoint {
  /** Buffer size the costs were measured at, bytes. */
  readonly bytes: number;
  /** µs per byte sent. */
  readonly beta?: number;
  /** µs per byte reduced. */
  readonly gamma?: number;
  /** µs per byte copied locally. */
  readonly copy?: number;
}

/** One cost at `bytes` from the points that give it (sorted by bytes), or `fallback` if none does. */
export function costAt(
  points: readonly SizePoint[] | undefined,
  key: "beta" | "gamma" | "copy",
  bytes: number,
  fallback: number,
): number {
  const given = (points ?? []).filter((p) => p[key] !== undefined) as (SizePoint & Record<typeof key, number>)[];
  const first = given[0];
  const last = given[given.length - 1];
  if (first === undefined || last === undefined) return fallback;
  if (bytes <= first.bytes) return first[key];
  if (bytes >= last.bytes) return last[key];
  const i = given.findIndex((p) => p.bytes >= bytes);
  const hi = given[i] as SizePoint & Record<typeof key, number>;
  const lo = given[i - 1] as SizePoint & Record<typeof key, number>;
  const t = (Math.log2(bytes) - Math.log2(lo.bytes)) / (Math.log2(hi.bytes) - Math.log2(lo.bytes));
  return lo[key] + t * (hi[key] - lo[key]);
}
