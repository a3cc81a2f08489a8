/**
 * `--topology` into a Topology: the family (one file each under families/, found by registry.ts)
 * parses the text after its name into a shape and builds it with the link parameters (--link,
 * --latency, --hop-latency, --injection, --nvlink, --nic) and routing rule (--routing). docs/network.md says, family by
 * family, the syntax, the defaults and the routing rule. Routes are computed arithmetically for
 * the regular families (no all-pairs table): a 16,384-host system builds in milliseconds.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import { suggest } from "../../core/suggest.js";
import { topologyError } from "./builder.js";
import {
  type LinkOptions,
  MAX_TOPOLOGY_HOSTS,
  MAX_TOPOLOGY_LINKS,
  NETWORK_DEFAULTS,
  routingOf,
  type TopologyFamily,
  type TopologyShape,
} from "./family.js";
import { FAMILIES, familyNamed } from "./registry.js";
import type { Topology } from "./types.js";
import { formatBandwidth, formatTime } from "./units.js";

export { FATTREE_DEFAULT_HOSTS_PER_LEAF } from "./families/fattree.js";
export { FULL_DEFAULTS } from "./families/full.js";
export { MAX_MINIMAL_PATHS } from "./families/grid.js";
export { RAIL_DEFAULT_GPUS } from "./families/rail.js";
export {
  type FamilyFlag,
  type LinkOptions,
  MAX_TOPOLOGY_HOSTS,
  MAX_TOPOLOGY_LINKS,
  NETWORK_DEFAULTS,
  type TopologyFamily,
  type TopologyShape,
} from "./family.js";
export { PLACEMENTS, placeRanks } from "./placement.js";
export { FAMILIES, familyNamed } from "./registry.js";

/** The routing rules of each family, default first. */
export const ROUTINGS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  FAMILIES.map((f) => [f.name, f.routings]),
);

/** `--topology`'s help: every family's lines, from the families themselves. */
export const TOPOLOGY_HELP = (() => {
  const rows = FAMILIES.flatMap((f) =>
    f.help.map(([syntax, what], i) => [
      syntax,
      i === f.help.length - 1 && f.routings.length > 1 ? `${what}; --routing ${f.routings.join("|")}` : what,
    ]),
  );
  const width = Math.max(...rows.map(([s]) => (s as string).length)) + 2;
  return ["network topology (default full):", ...rows.map(([s, w]) => `  ${(s as string).padEnd(width)}${w}`)].join(
    "\n",
  );
})();

function checkOptions(o: LinkOptions): void {
  for (const [key, flag] of [
    ["link", "--link"],
    ["injection", "--injection"],
    ["nvlink", "--nvlink"],
    ["nic", "--nic"],
  ] as const) {
    const v = o[key];
    if (v !== undefined && !(v > 0 && Number.isFinite(v)))
      throw new InvalidArgumentError({ op: flag }, `expected a positive bandwidth, got ${v} bytes per µs`);
  }
  for (const [key, flag] of [
    ["latency", "--latency"],
    ["hopLatency", "--hop-latency"],
  ] as const) {
    const v = o[key];
    if (v !== undefined && !(v >= 0 && Number.isFinite(v)))
      throw new InvalidArgumentError({ op: flag }, `expected a time >= 0, got ${v} µs`);
  }
}

/** The family a --topology value names and the text after its 'family:'. */
function familyOf(text: string): { family: TopologyFamily; rest: string } {
  const names = FAMILIES.map((f) => f.name);
  if (text === "") throw topologyError(`empty; expected one of ${names.join(", ")}`);
  const colon = text.indexOf(":");
  const word = (colon < 0 ? text : text.slice(0, colon)).toLowerCase();
  const named = familyNamed(word);
  const claimed = FAMILIES.find((f) => f !== named && f.claims?.(text));
  if (claimed) return { family: claimed, rest: text };
  if (named) return { family: named, rest: colon < 0 ? "" : text.slice(colon + 1).trim() };
  const hint = suggest(word, names);
  throw topologyError(
    `unknown topology '${word}'${hint ? ` (did you mean '${hint}'?)` : ""}; expected one of ${names.join(", ")}`,
  );
}

function checkSize(shape: TopologyShape): void {
  if (shape.hosts > MAX_TOPOLOGY_HOSTS)
    throw topologyError(
      `'${shape.name}' would have ${shape.hosts} hosts; the model builds at most ${MAX_TOPOLOGY_HOSTS}`,
    );
  if (shape.links > MAX_TOPOLOGY_LINKS)
    throw topologyError(
      `'${shape.name}' would have ${shape.links} links; the model builds at most ${MAX_TOPOLOGY_LINKS}`,
    );
}

/**
 * The shape a --topology value names, parsed and checked but not built: its family, its host
 * and link counts and, for grid families (ring, torus, mesh, hyperx), its dimensions. A family
 * whose size is left out ('fattree', 'rail', 'ring') is sized for `ranks` ranks.
 */
export function parseTopologyShape(spec: string, ranks = 1): TopologyShape {
  return resolve(spec, ranks).shape;
}

function resolve(spec: string, ranks: number): { family: TopologyFamily; shape: TopologyShape } {
  if (!Number.isSafeInteger(ranks) || ranks < 1)
    throw new InvalidArgumentError({ op: "parseTopology", arg: "ranks" }, `expected a whole number >= 1, got ${ranks}`);
  const text = spec.trim();
  const { family, rest } = familyOf(text);
  const shape = family.parse(rest, { spec: text, ranks });
  checkSize(shape);
  return { family, shape };
}

/**
 * The topology `spec` names ('torus:8x8', 'fattree:k=16,over=2', 'rail:16x8', 'net.json'), built
 * for `ranks` ranks: a family whose size is left out is sized from the rank count, and the
 * topology must have at least `ranks` hosts (a larger one leaves hosts empty).
 */
export function parseTopology(spec: string, ranks: number, o: LinkOptions = {}): Topology {
  checkOptions(o);
  const { family, shape } = resolve(spec, ranks);
  const routing = routingOf(family, o.routing);
  family.checkRouting?.(shape, routing);
  const t = family.build(shape, {
    options: o,
    routing,
    link: o.link ?? NETWORK_DEFAULTS.link,
    latency: o.latency ?? NETWORK_DEFAULTS.latency,
    hopLatency: o.hopLatency ?? NETWORK_DEFAULTS.hopLatency,
  });
  if (t.hosts < ranks) throw topologyError(`'${t.name}' has ${t.hosts} hosts, fewer than the ${ranks} ranks`);
  return t;
}

/**
 * The topology in a few lines for reports: its size, each kind of link with its count, bandwidth
 * and latency, the switching latency and the routing rule.
 *
 *   torus:8x8: 64 hosts, 64 switches, 384 links
 *     inject  64 × 200 GB/s, 100 ns
 *     ...
 *   hop latency 100 ns; routing: dimension order (dimension 0 first), ...
 */
export function describeTopology(t: Topology): string[] {
  let switches = 0;
  for (let v = 0; v < t.nodeCount; v++) if (t.nodeKind(v) === "switch") switches++;
  const kinds = new Map<string, { count: number; bw: Set<number>; lat: Set<number> }>();
  for (let i = 0; i < t.links.count; i++) {
    const k = t.links.kind[i] as string;
    let e = kinds.get(k);
    if (!e) kinds.set(k, (e = { count: 0, bw: new Set(), lat: new Set() }));
    e.count++;
    e.bw.add(t.links.bandwidth[i] as number);
    e.lat.add(t.links.latency[i] as number);
  }
  const range = (values: Set<number>, fmt: (x: number) => string) => {
    const v = [...values].sort((a, b) => a - b);
    return v.length === 1 ? fmt(v[0] as number) : `${fmt(v[0] as number)} to ${fmt(v[v.length - 1] as number)}`;
  };
  const width = Math.max(...[...kinds.keys()].map((k) => k.length));
  return [
    `${t.name}: ${t.hosts} hosts, ${switches} switches, ${t.links.count} links`,
    ...[...kinds].map(
      ([k, e]) =>
        `  ${k.padEnd(width)}  ${e.count} × ${range(e.bw, (x) => formatBandwidth(x))}, ${range(e.lat, formatTime)}`,
    ),
    `hop latency ${formatTime(t.hopLatency)}; routing: ${t.routing}`,
    ...(t.injectionLimit ? [`injection: ${t.injectionLimit}`] : []),
  ];
}
