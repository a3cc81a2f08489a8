/**
 * Bytes per class of link: a result's per-link bytes summed by the links' kind ('global' and
 * 'local' on a dragonfly, 'nvlink' and 'nic' on a rail system, 'x+' ... on a torus, 'inject' and
 * 'eject' on every family), so a schedule's traffic on the expensive links shows at a glance.
 */
import type { Topology } from "./types.js";

export interface ClassBytes {
  /** The links' kind (Links.kind). */
  readonly kind: string;
  /** Links of that kind, and how many carried a byte. */
  readonly links: number;
  readonly used: number;
  readonly bytes: number;
  /** bytes / the bytes every link carried together. */
  readonly share: number;
}

/** Bytes carried per link kind, in the order the kinds first appear in the topology's links. */
export function bytesByClass(t: Topology, linkBytes: Float64Array): ClassBytes[] {
  const rows = new Map<string, { links: number; used: number; bytes: number }>();
  let total = 0;
  for (let l = 0; l < t.links.count; l++) {
    const kind = t.links.kind[l] as string;
    let row = rows.get(kind);
    if (!row) rows.set(kind, (row = { links: 0, used: 0, bytes: 0 }));
    const b = linkBytes[l] as number;
    row.links++;
    if (b > 0) row.used++;
    row.bytes += b;
    total += b;
  }
  return [...rows].map(([kind, r]) => ({ kind, ...r, share: total > 0 ? r.bytes / total : 0 }));
}
