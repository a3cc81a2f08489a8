/**
 * The network model: a schedule's messages as flows on a topology (types.ts, topology.ts), timed
 * by the exact flow engine (simulate.ts) or, for large groups, by phases of logical rounds each
 * solved once (phases.ts). networkTime picks between them (policy.ts) and says which it used.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import type { CollectiveCall } from "../../specs/types.js";
import { SolveBudget, SolveWorkExceeded } from "./flows.js";
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
  const chosen = chooseEngine(alg, call, params.topology, engine);
  // One meter for the call: every solve of either engine (the phases engine may solve its rounds
  // more than once) is charged to it.
  const budget = params.budget ?? new SolveBudget(params.solveWork ?? THRESHOLDS.SOLVE_WORK.value);
  const withBudget = { ...params, budget };
  try {
    return chosen === "exact" ? networkTimeExact(alg, call, withBudget) : networkTimePhases(alg, call, withBudget);
  } catch (e) {
    if (e instanceof SolveWorkExceeded) throw solveWorkError(alg, call, chosen, e);
    throw e;
  }
}

/**
 * The refusal of a call whose rate solves passed their budget (SOLVE_WORK, or --solve-budget),
 * saying how far it got and what would fit: fewer ranks, the alpha-beta formula, or a larger
 * budget.
 */
function solveWorkError(
  alg: Algorithm,
  call: CollectiveCall,
  engine: "exact" | "phases",
  e: SolveWorkExceeded,
): InvalidArgumentError {
  const n = call.size;
  const fmt = (x: number) => x.toLocaleString("en");
  const elements = `${fmt(call.count)} element${call.count === 1 ? "" : "s"}`;
  const d = e.done;
  const far = d ? ` (they stopped with ${fmt(d.count)} of ${fmt(d.of)} ${d.what})` : "";
  const ways = [
    alg.collective.startsWith("alltoall")
      ? "fewer ranks (every rank sends to every other at once: half the ranks is about an eighth of the work)"
      : "fewer ranks",
    ...(engine === "exact" ? ["--engine phases (each distinct round solved once)"] : []),
    "the alpha-beta formula (no --topology: no links shared)",
    `or a larger --solve-budget (the default, ${fmt(THRESHOLDS.SOLVE_WORK.value)}, is about 15 s of solving on 2 cores)`,
  ];
  return new InvalidArgumentError(
    { op: "model", arg: "--solve-budget" },
    `${engine}: ${alg.collective}/${alg.name} at n = ${fmt(n)}, ${elements}: its rate solves would scan more than the ${fmt(e.limit)} link crossings one call may${far}; use ${ways.join(", ")}`,
  );
}
