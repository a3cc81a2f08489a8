/**
 * The network model: a schedule's messages as flows on a topology (types.ts, topology.ts), timed
 * by the exact flow engine (simulate.ts) or, for large groups, by phases of logical rounds each
 * solved once (phases.ts). networkTime picks between them (policy.ts) and says which it used.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import type { CollectiveCall } from "../../specs/types.js";
import { networkTimePhases } from "./phases.js";
import { chooseEngine, ENGINES, type Engine, THRESHOLDS } from "./policy.js";
import { type NetworkParams, type NetworkResult, networkTimeExact } from "./simulate.js";
import type { Topology } from "./types.js";

export { bytesByClass, type ClassBytes } from "./link-classes.js";
export { chooseWalk, networkTimePhases, type PhasesWalk } from "./phases.js";
export {
  chooseEngine,
  ENGINES,
  type Engine,
  estimateOperations,
  estimateWork,
  exactHeapBudget,
  exactMemory,
  THRESHOLDS,
  thresholdsMarkdown,
} from "./policy.js";
export {
  hottestLinks,
  type LinkLoad,
  type NetworkParams,
  type NetworkResult,
  networkTimeExact,
} from "./simulate.js";
export { MAX_PERIOD, type Symmetry, symmetryHolds } from "./symmetry.js";
export * from "./topology.js";
export type { Links, NodeKind, Placement, Topology, TopologyLayout } from "./types.js";
export { formatBandwidth, formatTime, parseBandwidth, parseTime } from "./units.js";

/** The thresholds by their old names (policy.ts holds them all). */
export const AUTO_EXACT_MAX_RANKS = THRESHOLDS.AUTO_EXACT_MAX_RANKS.value;
export const AUTO_EXACT_LARGE_MAX_RANKS = THRESHOLDS.AUTO_EXACT_LARGE_MAX_RANKS.value;
export const AUTO_EXACT_MAX_OPERATIONS = THRESHOLDS.AUTO_EXACT_MAX_OPERATIONS.value;
export const AUTO_EXACT_HASHED_MAX_OPERATIONS = THRESHOLDS.AUTO_EXACT_HASHED_MAX_OPERATIONS.value;

/** Which engine 'auto' picks for a call (chooseEngine's answer for 'auto'). */
export function autoEngine(alg: Algorithm, call: CollectiveCall, topology?: Topology): "exact" | "phases" {
  return chooseEngine(alg, call, topology, "auto");
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
  if (chooseEngine(alg, call, params.topology, engine) === "exact") return networkTimeExact(alg, call, params);
  return networkTimePhases(alg, call, params);
}
