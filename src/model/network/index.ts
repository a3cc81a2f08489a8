/**
 * The network model: a schedule's messages as flows on a topology (types.ts, topology.ts), timed
 * by the exact flow engine (simulate.ts) or, for large groups, by phases of logical rounds each
 * solved once (phases.ts). networkTime picks between them ('auto') and says which it used.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { compile } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { networkTimePhases } from "./phases.js";
import { type NetworkParams, type NetworkResult, networkTimeExact } from "./simulate.js";
import type { Topology } from "./types.js";

export type { LinkUse } from "./flows.js";
export { bytesByClass, type ClassBytes } from "./link-classes.js";
export {
  MAX_PERIOD,
  networkTimePhases,
  PHASES_MAX_OPERATIONS,
  type Symmetry,
  symmetryHolds,
} from "./phases.js";
export {
  EXACT_MAX_OPERATIONS,
  hottestLinks,
  type LinkLoad,
  type NetworkParams,
  type NetworkResult,
  networkTimeExact,
} from "./simulate.js";
export * from "./topology.js";
export type { Links, NodeKind, Placement, Topology, TopologyLayout } from "./types.js";
export { formatBandwidth, formatTime, parseBandwidth, parseTime } from "./units.js";

export const ENGINES = ["auto", "exact", "phases"] as const;
export type Engine = (typeof ENGINES)[number];

/** 'auto' walks every operation (exact) up to this many ranks, and uses phases above. */
export const AUTO_EXACT_MAX_RANKS = 64;
/**
 * Up to this many ranks 'auto' still walks every operation where the call has at most
 * AUTO_EXACT_MAX_OPERATIONS of them (the largest of ranks 0, 1 and n-1's plans times n): the
 * log-step algorithms at 1,024 ranks take about half a second there.
 */
export const AUTO_EXACT_LARGE_MAX_RANKS = 1024;
export const AUTO_EXACT_MAX_OPERATIONS = 100_000;
/**
 * On a network whose routes hash the pair (ECMP, Topology.hashed) 'auto' walks every operation
 * up to this many at any n: there the copies of a round meet different collisions and fall out
 * of step, which the shortcut's rounds do not see (its error on the log-step algorithms: 5 - 23%
 * at 1,024 ranks, 9 - 16% at 16,384; docs/network-validation.md). At 16,384 ranks on the fat-tree
 * the exact engine takes recursive doubling, Swing (both), Bruck and Rabenseifner (0.5 - 1.2
 * million operations) in 5 - 13 s.
 */
export const AUTO_EXACT_HASHED_MAX_OPERATIONS = 1_200_000;

/**
 * Which engine 'auto' picks for a call: exact for small groups, up to 1,024 ranks where the call
 * is short, and on a hashed network wherever the call is short enough; phases elsewhere.
 */
export function autoEngine(alg: Algorithm, call: CollectiveCall, topology?: Topology): "exact" | "phases" {
  const n = call.size;
  if (n <= AUTO_EXACT_MAX_RANKS) return "exact";
  const hashed = topology?.hashed === true;
  if (n > AUTO_EXACT_LARGE_MAX_RANKS && !hashed) return "phases";
  // Every rank's plan, estimated from the largest of ranks 0, 1 and n-1 (where n is not a power
  // of two rank 0 is folded out and has a few operations; rank 1 takes its partner's part).
  let most = 0;
  for (const r of new Set([0, 1, n - 1])) most = Math.max(most, compile(alg, rankCall(call, r)).ops.length);
  const ops = most * n;
  if (hashed && ops <= AUTO_EXACT_HASHED_MAX_OPERATIONS) return "exact";
  return n <= AUTO_EXACT_LARGE_MAX_RANKS && ops <= AUTO_EXACT_MAX_OPERATIONS ? "exact" : "phases";
}

/** Times one call on the network with the engine asked for ('auto': autoEngine's choice). */
export function networkTime(
  alg: Algorithm,
  call: CollectiveCall,
  params: NetworkParams & { readonly engine?: Engine },
): NetworkResult {
  const engine = params.engine ?? "auto";
  if (!ENGINES.includes(engine)) {
    throw new InvalidArgumentError(
      { op: "model", arg: "--engine" },
      `must be one of ${ENGINES.join(", ")}, got '${engine}'`,
    );
  }
  if (engine === "exact" || (engine === "auto" && autoEngine(alg, call, params.topology) === "exact")) {
    return networkTimeExact(alg, call, params);
  }
  return networkTimePhases(alg, call, params);
}
