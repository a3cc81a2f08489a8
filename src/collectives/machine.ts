/**
 * The machine a communicator's ranks run on, for the front API. A comm given a shape
 * (useTopology; `cclab run --topology` gives the world comm its shape, src/runtime) runs every
 * collective with its algorithm bound to that shape (src/schedule/shape.ts): one that reads the
 * shape (Swing on a torus) gets it, every other one the flat rank line, and one that requires a
 * shape refuses a comm without one, naming itself and --topology. A comm split from it has no
 * shape: its ranks are not the machine's. Wrappers (the runtime's guard, tracing) see their inner
 * comm's shape.
 */
import type { Comm } from "../comm.js";
import { InvalidArgumentError } from "../core/errors.js";
import { CommLayer } from "../layer.js";
import type { Algorithm } from "../schedule/dsl.js";
import { withShape } from "../schedule/shape.js";
import { checkShape, shapeHosts } from "../specs/shape.js";
import type { Shape } from "../specs/types.js";

const shapes = new WeakMap<Comm, Shape>();
/** Per shape, each algorithm bound once: its plans are then cached as any algorithm's are. */
const bound = new WeakMap<Shape, WeakMap<Algorithm, Algorithm>>();

/**
 * Gives `comm` the machine's shape (src/specs/types.ts Shape: one host per rank in `hostOf`), so
 * its collectives' algorithms see it. Checked here: a shape for another rank count, or with
 * hosts outside the machine, is an error naming the rank.
 */
export function useTopology(comm: Comm, shape: Shape): void {
  const site = { rank: comm.rank, op: "useTopology", arg: "shape" };
  checkShape(shape, comm.size, site);
  if (shapeHosts(shape) < comm.size)
    throw new InvalidArgumentError(site, `'${shape.name}' has ${shape.hosts} hosts, fewer than the ${comm.size} ranks`);
  shapes.set(comm, shape);
}

/** The shape `comm` (or the comm it wraps) was given, if any. */
export function topologyOf(comm: Comm): Shape | undefined {
  for (let c: Comm | undefined = comm; c !== undefined; c = c instanceof CommLayer ? c.inner : undefined) {
    const s = shapes.get(c);
    if (s) return s;
  }
  return undefined;
}

/** `alg` as it runs on `comm`: bound to the comm's shape where it has one, else itself. */
export function onMachine(alg: Algorithm, comm: Comm): Algorithm {
  const shape = topologyOf(comm);
  if (!shape) return alg;
  let mine = bound.get(shape);
  if (!mine) bound.set(shape, (mine = new WeakMap()));
  let b = mine.get(alg);
  if (!b) mine.set(alg, (b = withShape(alg, shape, { op: `${alg.collective}/${alg.name}`, arg: "--topology" })));
  return b;
}
