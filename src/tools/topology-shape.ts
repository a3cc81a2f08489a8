/**
 * The network model's topology as the shape an algorithm sees (src/specs/types.ts Shape): a torus
 * or mesh's dimensions, a ring, a rail system's nodes and GPUs per node, else flat; each rank on
 * the host the placement names. Used by the commands' --topology (src/cli/topology-shape.ts), by
 * bench on sim, and by a process rank of `cclab run --topology` (CCLAB_TOPOLOGY, src/runtime/init.ts).
 */
import { type ErrorSite, InvalidArgumentError } from "../core/errors.js";
import { type Placement, parseTopology, placeRanks, type Topology } from "../model/network/index.js";
import type { Shape } from "../specs/types.js";

/**
 * The shape the topology `spec` (the model's syntax: torus:4x4, mesh:2x4x2, ring:8, rail:2x4, ...)
 * gives n ranks laid out by `placement` (block, round-robin or file:PATH). A spec it cannot read is
 * an error naming `where` (the command, and the rank where there is one) and `names.topology`, a
 * placement one naming `names.placement` (the flags, or the variables that carry them).
 */
export function shapeOfSpec(
  spec: string,
  n: number,
  placement: string | undefined,
  where: Omit<ErrorSite, "arg">,
  names = { topology: "--topology", placement: "--placement" },
): Shape {
  const rethrow = (arg: string, e: unknown): never => {
    if (e instanceof InvalidArgumentError) throw new InvalidArgumentError({ ...where, arg }, e.message);
    throw e;
  };
  let t: Topology;
  try {
    t = parseTopology(spec, n);
  } catch (e) {
    return rethrow(names.topology, e);
  }
  try {
    return shapeOfTopology(t, placeRanks(t, n, placement));
  } catch (e) {
    return rethrow(placement === undefined ? names.topology : names.placement, e);
  }
}

/** The shape of topology t with ranks on the hosts `placement` names. */
export function shapeOfTopology(t: Topology, placement: Placement): Shape {
  const base = { name: t.name, hosts: t.hosts, hostOf: Array.from(placement) };
  if ((t.family === "torus" || t.family === "mesh") && t.layout?.kind === "grid")
    return { ...base, family: t.family, dims: [...t.layout.dims] };
  if (t.family === "ring") return { ...base, family: "ring", dims: [t.hosts] };
  if (t.family === "rail") {
    const gpus = t.hosts / t.groups;
    return { ...base, family: "rail", nodes: t.groups, gpusPerNode: gpus, rails: gpus };
  }
  return { ...base, family: "flat" };
}

/** `--topology` and `--placement` as given, for a command that hands them to process ranks. */
export interface Machine {
  readonly topology: string;
  readonly placement?: string;
}

/** The variables that carry a Machine to process ranks (cclab run's, verify's and bench's). */
export const TOPOLOGY_ENV = { topology: "CCLAB_TOPOLOGY", placement: "CCLAB_PLACEMENT" } as const;

/** The variables a process rank reads the machine from: none without one. */
export function topologyEnv(m: Machine | undefined): Record<string, string> {
  if (!m) return {};
  return {
    [TOPOLOGY_ENV.topology]: m.topology,
    ...(m.placement !== undefined ? { [TOPOLOGY_ENV.placement]: m.placement } : {}),
  };
}

/**
 * The shape CCLAB_TOPOLOGY and CCLAB_PLACEMENT give this job's n ranks (undefined where no
 * topology is set); a value it cannot read is an error naming `where` and the variable.
 */
export function shapeFromEnv(env: NodeJS.ProcessEnv, n: number, where: Omit<ErrorSite, "arg">): Shape | undefined {
  const topology = env[TOPOLOGY_ENV.topology];
  if (!topology) return undefined;
  return shapeOfSpec(topology, n, env[TOPOLOGY_ENV.placement] || undefined, where, TOPOLOGY_ENV);
}
