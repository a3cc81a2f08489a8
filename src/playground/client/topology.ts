/**
 * The playground's topology field, as the Worker reads it: the machine in cclab model's syntax for
 * the families an algorithm can read here (ring[:N], torus:AxB[xC...], mesh:AxB[xC...]), ranks
 * placed one per host in order (block). Run gives every rank's comm that shape (a program's
 * collectives then run their algorithm on it: swing_latency on torus:4x4 runs the paper's
 * multiport form); Explain shows the algorithm bound to it. Blank: the flat rank line. The
 * network model's other families read files or the heap (Node only): cclab model takes them.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import { mesh, ring, torus } from "../../model/network/families/grid.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { withShape } from "../../schedule/shape.js";
import type { Shape } from "../../specs/types.js";
import { MAX_TOPOLOGY_TEXT } from "./protocol.js";

const FAMILIES = { ring, torus, mesh } as const;
const SITE = { op: "playground", arg: "topology" };

/** The shape `text` gives n ranks (block placement); undefined for a blank field. */
export function shapeOfText(text: string | undefined, n: number): Shape | undefined {
  const spec = (text ?? "").trim();
  if (spec === "") return undefined;
  const bad = (detail: string) => new InvalidArgumentError(SITE, `'${spec.slice(0, MAX_TOPOLOGY_TEXT)}': ${detail}`);
  if (spec.length > MAX_TOPOLOGY_TEXT) throw bad(`longer than ${MAX_TOPOLOGY_TEXT} characters`);
  const colon = spec.indexOf(":");
  const word = (colon < 0 ? spec : spec.slice(0, colon)).toLowerCase();
  const family = Object.hasOwn(FAMILIES, word) ? FAMILIES[word as keyof typeof FAMILIES] : undefined;
  if (!family)
    throw bad(
      `the playground takes ring[:N], torus:AxB[xC...] or mesh:AxB[xC...] (e.g. torus:4x4); leave it blank for the flat rank line`,
    );
  let parsed: ReturnType<typeof family.parse>;
  try {
    parsed = family.parse(colon < 0 ? "" : spec.slice(colon + 1).trim(), { spec, ranks: n });
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw new InvalidArgumentError(SITE, e.message);
    throw e;
  }
  if (parsed.hosts < n) throw bad(`has ${parsed.hosts} hosts, fewer than the ${n} ranks (n)`);
  const dims = [...(parsed.dims ?? [parsed.hosts])];
  return {
    family: word as "ring" | "torus" | "mesh",
    dims,
    name: parsed.name,
    hosts: parsed.hosts,
    hostOf: Array.from({ length: n }, (_, r) => r),
  };
}

/** `alg` as it runs on the shape (bound: src/schedule/shape.ts), or itself without one. */
export function onShape(alg: Algorithm, shape: Shape | undefined): Algorithm {
  return shape ? withShape(alg, shape, SITE) : alg;
}
