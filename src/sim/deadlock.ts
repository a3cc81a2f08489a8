/**
 * Explains a deadlock from the wait-for graph: each blocked rank waits on the peers its blocked
 * operations need (a send needs its receiver to post the receive, a receive needs its sender,
 * a split needs the members that have not called it). A cycle in that graph is the deadlock;
 * a wait on a rank that has finished is the other way to get stuck. The message names both,
 * plus one hint for the semantics in force, so a learner sees why and what to change.
 */
import type { BlockedOp } from "../core/errors.js";
import { minOf } from "../core/extent.js";
import type { CommInfo, Semantics } from "./ops.js";

export type Wait =
  | {
      readonly rank: number;
      readonly kind: "send" | "recv";
      /** The one peer (world rank). */
      readonly peers: readonly number[];
      readonly count: number;
      readonly dtype: string;
      readonly label: string | undefined;
      readonly comm: CommInfo;
    }
  | {
      readonly rank: number;
      readonly kind: "split";
      /** Members (world ranks) that have not called this split yet. */
      readonly peers: readonly number[];
      /** The list passed to split (ranks of `comm`). */
      readonly ranks: readonly number[];
      readonly comm: CommInfo;
    };

export interface DeadlockContext {
  readonly semantics: Semantics;
  readonly eagerLimitBytes: number;
  readonly round: number;
  readonly isFinished: (worldRank: number) => boolean;
}

/** Other (non-cycle) blocked operations listed in full; the rest are counted. */
const MAX_LINES = 12;
/** Hops of a long cycle shown at each end. */
const CYCLE_ENDS = 6;

export function describeWait(w: Wait): string {
  const on = w.comm.id === 0 ? "" : ` on ${w.comm.name}`;
  if (w.kind === "split") return `split([${w.ranks.join(", ")}])${on}`;
  const dir = w.kind === "send" ? "to" : "from";
  const label = w.label !== undefined ? `, '${w.label}'` : "";
  return `${w.kind}(${dir} ${w.peers[0]}, ${w.count} x ${w.dtype}${label})${on}`;
}

export function hintFor(semantics: Semantics, eagerLimitBytes: number, cycle = true): string {
  if (!cycle) {
    return (
      "hint: every send needs a matching recv on its peer, and every recv a matching send, in the same order: " +
      "check the peers and the number of messages each rank posts"
    );
  }
  switch (semantics) {
    case "nccl":
      return (
        "hint: under 'nccl' a send completes only when its receive is posted: receive first on one side, " +
        "or post the send and the receive in one group (or isend/irecv, then wait)"
      );
    case "mpi-eager":
      return (
        `hint: under 'mpi-eager' only sends of at most ${eagerLimitBytes} B complete before their receive is posted, ` +
        "so code that works for small messages hangs for large ones: receive first on one side, " +
        "or post both in one group (or isend/irecv, then wait)"
      );
    case "buffered":
      return (
        "hint: under 'buffered' sends never block, so these ranks wait for calls no rank will make: " +
        "check the peers, the number of messages and the order of calls"
      );
  }
}

/** Finds one cycle in the wait-for graph (lowest ranks first, for a stable answer), rotated to start at its lowest rank. */
export function findCycle(adj: ReadonlyMap<number, readonly number[]>): number[] {
  const color = new Map<number, 1 | 2>(); // 1: on the current path, 2: done
  const starts = [...adj.keys()].sort((a, b) => a - b);
  for (const s of starts) {
    if (color.has(s)) continue;
    const path: number[] = [s];
    const next: number[] = [0];
    color.set(s, 1);
    while (path.length > 0) {
      const u = path[path.length - 1]!;
      const out = adj.get(u) ?? [];
      const i = next[next.length - 1]!;
      if (i >= out.length) {
        color.set(u, 2);
        path.pop();
        next.pop();
        continue;
      }
      next[next.length - 1] = i + 1;
      const v = out[i]!;
      const c = color.get(v);
      if (c === 1) {
        const cycle = path.slice(path.indexOf(v));
        const m = cycle.indexOf(minOf(cycle));
        return [...cycle.slice(m), ...cycle.slice(0, m)];
      }
      if (c === undefined && adj.has(v)) {
        color.set(v, 1);
        path.push(v);
        next.push(0);
      }
    }
  }
  return [];
}

export function explainDeadlock(
  waits: readonly Wait[],
  ctx: DeadlockContext,
): { message: string; blocked: BlockedOp[]; cycle: number[] } {
  const sorted = [...waits].sort((a, b) => a.rank - b.rank);
  const adj = new Map<number, number[]>();
  for (const w of sorted) if (!adj.has(w.rank)) adj.set(w.rank, []);
  for (const w of sorted) {
    const out = adj.get(w.rank)!;
    for (const p of w.peers) if (adj.has(p) && !out.includes(p)) out.push(p);
  }
  for (const out of adj.values()) out.sort((a, b) => a - b);
  const cycle = findCycle(adj);

  const lines: string[] = [];
  const used = new Set<Wait>();
  if (cycle.length > 0) {
    const parts = cycle.map((r, i) => {
      const to = cycle[(i + 1) % cycle.length]!;
      const w = sorted.find((x) => x.rank === r && x.peers.includes(to))!;
      used.add(w);
      return `rank ${r} waits in ${describeWait(w)}`;
    });
    // A thousand-rank cycle stays readable: its ends, and how many hops are elided.
    const shown =
      parts.length > 2 * CYCLE_ENDS
        ? [
            ...parts.slice(0, CYCLE_ENDS),
            `... (${parts.length - 2 * CYCLE_ENDS} more ranks)`,
            ...parts.slice(-CYCLE_ENDS),
          ]
        : parts;
    lines.push(`${shown.join(" -> ")} -> rank ${cycle[0]}`);
  }
  const rest = sorted.filter((w) => !used.has(w));
  for (const w of rest.slice(0, MAX_LINES)) {
    const gone = w.peers.filter((p) => ctx.isFinished(p));
    let why = "";
    if (gone.length > 0 && w.kind !== "split") {
      why = `, but rank ${gone[0]} has finished without posting the matching ${w.kind === "send" ? "recv" : "send"}`;
    } else if (gone.length > 0) {
      why = `, but ${gone.length === 1 ? "rank" : "ranks"} ${gone.join(", ")} finished without calling it`;
    }
    lines.push(`rank ${w.rank} waits in ${describeWait(w)}${why}`);
  }
  if (rest.length > MAX_LINES) lines.push(`... and ${rest.length - MAX_LINES} more blocked operations`);

  const subgroup = sorted.some((w) => w.comm.id !== 0) ? "; ranks are world ranks" : "";
  const head =
    `deadlock: every unfinished rank is blocked and no operation can complete ` +
    `(semantics '${ctx.semantics}', logical time ${ctx.round}${subgroup})`;
  const message = [
    head,
    ...lines.map((l) => `  ${l}`),
    `  ${hintFor(ctx.semantics, ctx.eagerLimitBytes, cycle.length > 0)}`,
  ].join("\n");

  const blocked: BlockedOp[] = [];
  for (const w of sorted) {
    if (w.kind === "split") continue;
    blocked.push({
      rank: w.rank,
      kind: w.kind,
      peer: w.peers[0]!,
      count: w.count,
      dtype: w.dtype,
      ...(w.label !== undefined ? { label: w.label } : {}),
    });
  }
  return { message, blocked, cycle };
}
