/**
 * Small builders for writing schedules that read like the algorithms' textbook descriptions,
 * plus the partition and composition helpers algorithms share.
 */
import type { BufferName, LocalOp, Region, Schedule, Step, Transfer } from "./types.js";

export const region = (buf: BufferName, offset: number, count: number): Region => ({ buf, offset, count });
export const send = (peer: number, r: Region): Transfer => ({ kind: "send", peer, region: r });
export const recv = (peer: number, r: Region): Transfer => ({ kind: "recv", peer, region: r });
export const copy = (dst: Region, src: Region): LocalOp => ({ kind: "copy", dst, src });
export const reduce = (dst: Region, src: Region): LocalOp => ({ kind: "reduce", dst, src });
export const step = (label: string, transfers: readonly Transfer[], local: readonly LocalOp[] = []): Step => ({
  label,
  transfers,
  local,
});

/** The sub-region [offset, offset+count) of r. */
export const sub = (r: Region, offset: number, count: number): Region => ({
  buf: r.buf,
  offset: r.offset + offset,
  count,
});

export const sameRegion = (a: Region, b: Region): boolean =>
  a.buf === b.buf && a.offset === b.offset && a.count === b.count;

export interface Chunk {
  readonly offset: number;
  readonly count: number;
}

/**
 * Splits `count` elements into `parts` chunks, the first count % parts one element longer
 * (MPICH's convention), so any count works, 0 and count < parts included.
 */
export function partition(count: number, parts: number): Chunk[] {
  const base = Math.floor(count / parts);
  const extra = count % parts;
  const chunks: Chunk[] = [];
  let offset = 0;
  for (let i = 0; i < parts; i++) {
    const c = base + (i < extra ? 1 : 0);
    chunks.push({ offset, count: c });
    offset += c;
  }
  return chunks;
}

/** Splits `count` elements into segments of at most `segment` elements (at least one segment). */
export function segments(count: number, segment: number): Chunk[] {
  const out: Chunk[] = [];
  const s = Math.max(1, segment);
  for (let offset = 0; offset < count; offset += s) out.push({ offset, count: Math.min(s, count - offset) });
  if (out.length === 0) out.push({ offset: 0, count: 0 });
  return out;
}

/** Where a composed sub-schedule's buffer names land in the parent's buffers. */
export type RegionMap = Partial<Record<BufferName, { readonly buf: BufferName; readonly offset: number }>>;

/**
 * Runs a sub-schedule written for its own input/output/scratch inside a parent schedule,
 * e.g. ring all-reduce = ring reduce-scatter then ring all-gather over the same output buffer.
 */
export function* remap(schedule: Schedule, map: RegionMap, labelPrefix = ""): Schedule {
  const mapRegion = (r: Region): Region => {
    const target = map[r.buf];
    return target ? { buf: target.buf, offset: target.offset + r.offset, count: r.count } : r;
  };
  for (const s of schedule) {
    yield {
      label: labelPrefix + s.label,
      transfers: s.transfers.map((t) => ({ ...t, region: mapRegion(t.region) })),
      local: s.local.map((l) => ({ ...l, dst: mapRegion(l.dst), src: mapRegion(l.src) })),
    };
  }
}

/** Sub-schedule ranks and peers in a subset of ranks: maps a virtual rank (0..k-1) to a real peer. */
export function* mapPeers(schedule: Schedule, toRank: (vrank: number) => number): Schedule {
  for (const s of schedule) {
    yield { ...s, transfers: s.transfers.map((t) => ({ ...t, peer: toRank(t.peer) })) };
  }
}

/** vrank = (rank - root + size) % size: rotates ranks so the root is 0. */
export const vrankOf = (rank: number, root: number, size: number): number => (rank - root + size) % size;
export const rankOf = (vrank: number, root: number, size: number): number => (vrank + root) % size;
