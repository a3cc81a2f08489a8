/**
 * Where ranks sit: `block` (rank r on host r: fills a node, a leaf, a row first), `round-robin`
 * (ranks dealt across the topology's groups one at a time: rank 0 on the first host of group 0,
 * rank 1 on the first host of group 1, ..., then the second host of each group), or `file:PATH`
 * (a JSON array of host indices, or one host index per line, in rank order). With no `how`, a
 * topology that carries its own placement (a JSON topology's `ranks`) uses it, any other block.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import { suggest } from "../../core/suggest.js";
import { escapeControl } from "../../core/text.js";
import { readInputFile } from "../../tools/input-file.js";
import type { Placement, Topology } from "./types.js";

export const PLACEMENTS = ["block", "round-robin", "file:PATH"] as const;

/** Placement files larger than this are refused while they are read. */
const MAX_PLACEMENT_FILE = 64 * 2 ** 20;

/** Text from the file is shown with control characters escaped. */
function placementError(detail: string): InvalidArgumentError {
  return new InvalidArgumentError({ op: "--placement" }, escapeControl(detail));
}

/** Rank r on host r. */
function block(ranks: number): Placement {
  const p = new Int32Array(ranks);
  for (let r = 0; r < ranks; r++) p[r] = r;
  return p;
}

/** Ranks dealt across groups in turn; a group with no free host left is skipped. */
function roundRobin(t: Topology, ranks: number): Placement {
  const G = t.groups;
  const size = new Int32Array(G + 1);
  for (let h = 0; h < t.hosts; h++) size[t.group(h) + 1]!++;
  for (let g = 0; g < G; g++) size[g + 1]! += size[g]!;
  const start = size.slice(0, G);
  const hostsOf = new Int32Array(t.hosts);
  const fill = start.slice();
  for (let h = 0; h < t.hosts; h++) hostsOf[fill[t.group(h)]!++] = h;
  const p = new Int32Array(ranks);
  let r = 0;
  for (let k = 0; r < ranks; k++) {
    for (let g = 0; g < G && r < ranks; g++) {
      if (start[g]! + k < size[g + 1]!) p[r++] = hostsOf[start[g]! + k]!;
    }
  }
  return p;
}

function fromFile(t: Topology, ranks: number, path: string): Placement {
  const text = readInputFile(path, {
    what: "placement file (one host index per rank)",
    maxBytes: MAX_PLACEMENT_FILE,
    fail: placementError,
  });
  let entries: unknown[];
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    try {
      entries = JSON.parse(trimmed) as unknown[];
    } catch (e) {
      throw placementError(`${path}: not valid JSON: ${(e as Error).message}`);
    }
    if (!Array.isArray(entries)) throw placementError(`${path}: expected a JSON array of host indices`);
  } else {
    entries = trimmed === "" ? [] : trimmed.split(/\r?\n/).map((l) => l.trim());
  }
  if (entries.length !== ranks)
    throw placementError(`${path}: has ${entries.length} entries, one per rank is needed: ${ranks}`);
  const p = new Int32Array(ranks);
  const owner = new Map<number, number>();
  for (let r = 0; r < ranks; r++) {
    const e = entries[r];
    const v = typeof e === "number" ? e : typeof e === "string" && /^[0-9]+$/.test(e) ? Number(e) : Number.NaN;
    if (typeof e === "number" && !Number.isFinite(e))
      throw placementError(
        `${path}: rank ${r}: a number out of range (past 1.8e308, JSON reads it as ${e}); expected a host index in 0..${t.hosts - 1} (${t.name})`,
      );
    if (!Number.isInteger(v) || v < 0 || v >= t.hosts)
      throw placementError(
        `${path}: rank ${r}: expected a host index in 0..${t.hosts - 1} (${t.name}), got ${JSON.stringify(e)}`,
      );
    const prior = owner.get(v);
    if (prior !== undefined) throw placementError(`${path}: ranks ${prior} and ${r} are both on host ${v}`);
    owner.set(v, r);
    p[r] = v;
  }
  return p;
}

/**
 * Which host each of `ranks` ranks sits on. `how`: 'block', 'round-robin' or 'file:PATH'; left
 * out, the topology's own placement (a JSON topology's `ranks`) or else block.
 */
export function placeRanks(t: Topology, ranks: number, how?: string): Placement {
  if (!Number.isSafeInteger(ranks) || ranks < 1)
    throw new InvalidArgumentError({ op: "placeRanks", arg: "ranks" }, `expected a whole number >= 1, got ${ranks}`);
  if (ranks > t.hosts)
    throw new InvalidArgumentError(
      { op: "--topology" },
      `'${t.name}' has ${t.hosts} hosts, fewer than the ${ranks} ranks to place`,
    );
  if (how === undefined || how === "") {
    if (!t.placement) return block(ranks);
    if (t.placement.length < ranks)
      throw placementError(`'${t.name}' places ${t.placement.length} ranks, fewer than the ${ranks} asked for`);
    return t.placement.slice(0, ranks);
  }
  if (how === "block") return block(ranks);
  if (how === "round-robin") return roundRobin(t, ranks);
  if (how.startsWith("file:")) {
    const path = how.slice("file:".length);
    if (path === "") throw placementError("'file:' needs a path, e.g. file:ranks.json");
    return fromFile(t, ranks, path);
  }
  const hint = suggest(how, ["block", "round-robin", "file:"]);
  throw placementError(
    `unknown placement '${how}'${hint ? ` (did you mean '${hint}'?)` : ""}; expected ${PLACEMENTS.join(", ")}`,
  );
}
