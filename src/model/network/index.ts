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

export type { LinkUse } from "./flows.js";
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
 * AUTO_EXACT_MAX_OPERATIONS of them (rank 0's plan times n): the log-step algorithms at 1,024
 * ranks take about a second there, and the shortcut's error on ECMP fat-trees (5 - 23%,
 * docs/network-validation.md) is not worth the saving.
 */
export const AUTO_EXACT_LARGE_MAX_RANKS = 1024;
export const AUTO_EXACT_MAX_OPERATIONS = 100_000;

/** Which engine 'auto' picks for a call: exact for small groups, and up to 1,024 ranks where the call is short; phases above. */
export function autoEngine(alg: Algorithm, call: CollectiveCall): "exact" | "phases" {
  if (call.size <= AUTO_EXACT_MAX_RANKS) return "exact";
  if (call.size > AUTO_EXACT_LARGE_MAX_RANKS) return "phases";
  const ops = compile(alg, rankCall(call, 0)).ops.length * call.size;
  return ops <= AUTO_EXACT_MAX_OPERATIONS ? "exact" : "phases";
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
  if (engine === "exact" || (engine === "auto" && autoEngine(alg, call) === "exact")) {
    return networkTimeExact(alg, call, params);
  }
  return networkTimePhases(alg, call, params);
}
