/**
 * The network model's topology as the shape an algorithm sees (src/specs/types.ts Shape): a torus
 * or mesh's dimensions, a ring, a rail system's nodes and GPUs per node, else flat; each rank on
 * the host the placement names. Used by the commands' --topology (src/cli/topology-shape.ts) and
 * by bench on sim.
 */
import type { Placement, Topology } from "../model/network/index.js";
import type { Shape } from "../specs/types.js";

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
