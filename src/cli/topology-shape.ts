/**
 * `--topology` (and `--placement`) for the commands that build a schedule (verify, explain, trace,
 * export, model; bench on sim binds in src/bench/sim.ts; run, and verify's and bench's MPI and
 * NCCL ranks, hand the flags to the ranks: src/tools/topology-shape.ts's Machine): the model's
 * topology read as the shape an algorithm sees (src/tools/topology-shape.ts), each rank on the
 * host `--placement` puts it, and the algorithms bound to it (src/schedule/shape.ts: an algorithm
 * that reads that shape gets it, every other one the flat rank line).
 */
import { resolve } from "node:path";
import { InvalidArgumentError } from "../core/errors.js";
import { parseTopology } from "../model/network/index.js";
import type { Algorithm } from "../schedule/dsl.js";
import { withShape } from "../schedule/shape.js";
import type { Shape } from "../specs/types.js";
import { shapeOfSpec, shapeOfTopology } from "../tools/topology-shape.js";

export { shapeOfTopology };

/** `--placement` as a process rank in another directory reads it: a file's path made absolute. */
export function absolutePlacement(how: string): string {
  return how.startsWith("file:") ? `file:${resolve(how.slice(5))}` : how;
}

/** The hosts of `--topology spec` (a family sized from the ranks, ring or full, counts one): the rank count a command defaults to. */
export function topologyHosts(spec: string, op = "topology"): number {
  try {
    return parseTopology(spec, 1).hosts;
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw new InvalidArgumentError({ op, arg: "--topology" }, e.message);
    throw e;
  }
}

/** The shape `--topology spec` and `--placement how` give n ranks; `op` names the command in errors. */
export function shapeOfFlags(spec: string, n: number, how: string | undefined, op: string): Shape {
  return shapeOfSpec(spec, n, how, { op });
}

/**
 * The algorithms bound to `--topology` for n ranks (unchanged without one); a `--placement`
 * without `--topology` is an error naming both.
 */
export function bindTopology<A extends Algorithm>(
  algs: readonly A[],
  flags: { readonly topology?: string; readonly placement?: string },
  n: number,
  op: string,
): Algorithm[] {
  if (flags.topology === undefined) {
    if (flags.placement !== undefined)
      throw new InvalidArgumentError(
        { op, arg: "--placement" },
        "places ranks on a topology's hosts: give --topology too (e.g. --topology torus:4x4)",
      );
    return [...algs];
  }
  const shape = shapeOfFlags(flags.topology, n, flags.placement, op);
  return algs.map((a) => withShape(a, shape, { op, arg: "--topology" }));
}
