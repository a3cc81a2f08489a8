/**
 * The network model: a schedule's messages as flows on a topology (types.ts, topology.ts), timed
 * by the exact flow engine (simulate.ts) or, for large groups, by phases of logical rounds each
 * solved once (phases.ts). networkTime picks between them ('auto') and says which it used.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
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

/** Times one call on the network with the engine asked for ('auto': exact for small groups, phases above). */
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
  if (engine === "exact" || (engine === "auto" && call.size <= AUTO_EXACT_MAX_RANKS)) {
    return networkTimeExact(alg, call, params);
  }
  return networkTimePhases(alg, call, params);
}
