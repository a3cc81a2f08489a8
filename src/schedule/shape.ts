/**
 * How the machine's shape reaches an algorithm. A call may carry one (CollectiveCall.shape, from
 * `--topology` and `--placement`); an algorithm that declares what it reads (Algorithm.topology)
 * gets it when its family is one of those, every other algorithm the flat rank line, and one that
 * requires a shape refuses a call without one, naming itself and the flag to pass.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { checkShape, shapeHosts } from "../specs/shape.js";
import type { RankCall, Shape } from "../specs/types.js";
import type { Algorithm } from "./dsl.js";

/** The call as `alg`'s schedule sees it: with the shape where it reads that family, else without one. */
export function callSeenBy(alg: Algorithm, c: RankCall): RankCall {
  const use = alg.topology;
  const reads = use !== undefined && c.shape !== undefined && use.families.includes(c.shape.family);
  if (!reads && use?.required) {
    const given = c.shape ? `got '${c.shape.name}' (${c.shape.family}), which it cannot use` : "got none";
    throw new InvalidArgumentError(
      { rank: c.rank, op: `${alg.collective}/${alg.name}`, arg: "--topology" },
      `needs the machine's shape (${use.families.join(" or ")}), ${given}: pass --topology ${example(use.families)}`,
    );
  }
  if (reads || c.shape === undefined) return c;
  const { shape: _flat, ...flat } = c;
  return flat;
}

function example(families: readonly string[]): string {
  if (families.includes("torus")) return "torus:AxB[xC...] (e.g. torus:4x4)";
  if (families.includes("mesh")) return "mesh:AxB[xC...] (e.g. mesh:4x4)";
  if (families.includes("rail")) return "rail:NODESxG (e.g. rail:2x8)";
  return "with the machine's topology";
}

/**
 * `alg` bound to one machine: its calls carry `shape` (every rank count but the shape's ranks is
 * outside its domain), so verify, explain, trace, run, bench and export, which call an algorithm
 * at the sizes its domain names, run it as it runs there. The shape is checked once, here.
 */
export function withShape(alg: Algorithm, shape: Shape, site = { op: "topology", arg: "--topology" }): Algorithm {
  const size = shape.hostOf.length;
  checkShape(shape, size, site);
  if (shapeHosts(shape) < size)
    throw new InvalidArgumentError(site, `'${shape.name}' has ${shape.hosts} hosts, fewer than the ${size} ranks`);
  const inner = alg;
  const reads = alg.topology?.families.includes(shape.family) ?? false;
  const out: Algorithm = {
    ...alg,
    // The bound algorithm hands the shape over itself: compile sees no requirement left to check.
    topology: undefined,
    cost: (reads && alg.topology?.cost?.(shape)) || alg.cost,
    domain: {
      ...alg.domain,
      sizes: [size],
      why: `${alg.domain ? `${alg.domain.why}; ` : ""}bound to ${shape.name} with ${size} ranks`,
    },
    *schedule(c, mem) {
      yield* inner.schedule(c.size === size && c.shape === undefined ? callSeenBy(inner, { ...c, shape }) : c, mem);
    },
  };
  bound.set(out, alg);
  return out;
}

const bound = new WeakMap<Algorithm, Algorithm>();
/** The algorithm withShape() bound `alg` from (undefined for one it did not make). */
export const boundFrom = (alg: Algorithm): Algorithm | undefined => bound.get(alg);
