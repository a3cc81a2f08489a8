/**
 * `--topology` into a Topology: the built-in families (full, ring, torus, mesh, fattree, rail)
 * and graphs read from JSON files, with their link parameters (--link, --latency, --hop-latency,
 * --injection, --nvlink, --nic) and routing rule (--routing). docs/network.md says, family by
 * family, the syntax, the defaults and the routing rule. Routes are computed arithmetically for
 * the regular families (no all-pairs table): a 16,384-host system builds in milliseconds.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import { suggest } from "../../core/suggest.js";
import { dimsOf, keyValues, positiveInt, positiveReal, topologyError } from "./builder.js";
import { fatTreeTopology } from "./families/fattree.js";
import { fullTopology } from "./families/full.js";
import { gridTopology } from "./families/grid.js";
import { railTopology } from "./families/rail.js";
import { fileTopology } from "./file.js";
import type { Topology } from "./types.js";
import { formatBandwidth, formatTime } from "./units.js";

export { PLACEMENTS, placeRanks } from "./placement.js";

/** Link parameters from the flags, in model units (bytes per microsecond, microseconds). */
export interface LinkOptions {
  /** --link: bandwidth of each network link (full: of each host's links). */
  readonly link?: number;
  /** --latency: latency of each link (ejection links, switch -> host, carry none). */
  readonly latency?: number;
  /** --hop-latency: switching latency charged per hop. */
  readonly hopLatency?: number;
  /** --injection: bandwidth of a host's links to its router (ring, torus, mesh) or leaf (fattree). */
  readonly injection?: number;
  /** --nvlink: a GPU's bandwidth to its node's NVSwitch, each way (rail). */
  readonly nvlink?: number;
  /** --nic: a GPU's NIC bandwidth, each way (rail). */
  readonly nic?: number;
  /** --routing: the family's routing rule (see ROUTINGS); left out, the family's default. */
  readonly routing?: string;
}

/**
 * `full` keeps today's alpha-beta defaults (alpha 5 µs, 25 GB/s per rank, no switching latency),
 * so `--topology full` with no other flag gives today's numbers.
 */
export const FULL_DEFAULTS = { link: 25e3, latency: 5, hopLatency: 0 } as const;

/**
 * Every other family: 50 GB/s links (400 Gb/s, an NDR InfiniBand or 400GbE port), 100 ns per
 * link (serdes, FEC and a few metres of cable) and 100 ns per hop (a cut-through switch or torus
 * router); a GPU's NVLink 450 GB/s each way (H100: 900 GB/s bidirectional) and its NIC 400 Gb/s.
 */
export const NETWORK_DEFAULTS = {
  link: 50e3,
  latency: 0.1,
  hopLatency: 0.1,
  nvlink: 450e3,
  nic: 50e3,
} as const;

/** Two-level fat-tree defaults: 16 hosts per leaf; as many spines as hosts per leaf (non-blocking). */
export const FATTREE_DEFAULT_HOSTS_PER_LEAF = 16;
/** Rail system default: 8 GPUs per node. */
export const RAIL_DEFAULT_GPUS = 8;

/** The routing rules of each family, default first. */
export const ROUTINGS: Readonly<Record<Topology["family"], readonly string[]>> = {
  full: ["direct"],
  ring: ["shortest", "minimal"],
  torus: ["dor", "minimal"],
  mesh: ["dor", "minimal"],
  fattree: ["ecmp", "spray"],
  rail: ["ecmp", "spray", "pxn"],
  file: ["shortest"],
};

/** Refused before anything is allocated: a typo such as torus:100000x100000 fails at once. */
export const MAX_TOPOLOGY_HOSTS = 2 ** 21;
export const MAX_TOPOLOGY_LINKS = 2 ** 23;

/** --routing minimal on tori and meshes: the most paths one message may be split over (4-D torus: 384). */
export const MAX_MINIMAL_PATHS = 4096;

const FAMILIES = ["full", "ring", "torus", "mesh", "fattree", "rail", "file"] as const;

export const TOPOLOGY_HELP = [
  "network topology (default full):",
  "  full[:N]                     one non-blocking switch (today's model)",
  "  ring[:N]                     bidirectional ring of routers; --routing shortest|minimal",
  "  torus:AxB[xC...]             torus, any dimensions; --routing dor|minimal",
  "  mesh:AxB[xC...]              mesh (no wrap-around); --routing dor|minimal",
  "  fattree[:leaves=L,hosts=H,spines=S,over=R]   leaf/spine (default 16 hosts per leaf)",
  "  fattree:k=K[,over=R]         k-ary three-level fat-tree; --routing ecmp|spray",
  "  rail[:NODESxG,spines=S,over=R]  GPU nodes on NVSwitch, rail-optimized NICs, spines;",
  "                               --routing ecmp|spray|pxn",
  "  file:PATH.json               any graph (see docs/network.md)",
].join("\n");

function routingOf(family: Topology["family"], o: LinkOptions): string {
  const allowed = ROUTINGS[family];
  const r = o.routing?.trim().toLowerCase();
  if (r === undefined || r === "") return allowed[0] as string;
  if (family === "ring" && r === "dor") return "shortest";
  if (allowed.includes(r)) return r;
  const hint = suggest(r, allowed);
  throw new InvalidArgumentError(
    { op: "--routing" },
    `'${o.routing}' is not a routing rule of ${family}${hint ? ` (did you mean '${hint}'?)` : ""}; it has ${allowed.join(", ")}`,
  );
}

function checkSize(spec: string, hosts: number, links: number): void {
  if (hosts > MAX_TOPOLOGY_HOSTS)
    throw topologyError(`'${spec}' would have ${hosts} hosts; the model builds at most ${MAX_TOPOLOGY_HOSTS}`);
  if (links > MAX_TOPOLOGY_LINKS)
    throw topologyError(`'${spec}' would have ${links} links; the model builds at most ${MAX_TOPOLOGY_LINKS}`);
}

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

/**
 * The topology `spec` names ('torus:8x8', 'fattree:k=16,over=2', 'rail:16x8', 'net.json'), built
 * for `ranks` ranks: a family whose size is left out is sized from the rank count, and the
 * topology must have at least `ranks` hosts (a larger one leaves hosts empty).
 */
export function parseTopology(spec: string, ranks: number, o: LinkOptions = {}): Topology {
  if (!Number.isSafeInteger(ranks) || ranks < 1)
    throw new InvalidArgumentError({ op: "parseTopology", arg: "ranks" }, `expected a whole number >= 1, got ${ranks}`);
  checkOptions(o);
  const text = spec.trim();
  if (text === "") throw topologyError(`empty; expected one of ${FAMILIES.join(", ")}`);
  const colon = text.indexOf(":");
  let family = (colon < 0 ? text : text.slice(0, colon)).toLowerCase();
  let rest = colon < 0 ? "" : text.slice(colon + 1).trim();
  if (family !== "file" && text.toLowerCase().endsWith(".json")) {
    family = "file";
    rest = text;
  }
  if (!(FAMILIES as readonly string[]).includes(family)) {
    const hint = suggest(family, FAMILIES);
    throw topologyError(
      `unknown topology '${family}'${hint ? ` (did you mean '${hint}'?)` : ""}; expected one of ${FAMILIES.join(", ")}`,
    );
  }
  const fam = family as Topology["family"];
  const routing = routingOf(fam, o);
  const net = {
    link: o.link ?? NETWORK_DEFAULTS.link,
    latency: o.latency ?? NETWORK_DEFAULTS.latency,
    hopLatency: o.hopLatency ?? NETWORK_DEFAULTS.hopLatency,
  };
  let t: Topology;
  switch (fam) {
    case "full": {
      const n = rest === "" ? ranks : positiveInt(rest, "the host count", text);
      checkSize(text, n, 2 * n);
      t = fullTopology({
        hosts: n,
        link: o.link ?? FULL_DEFAULTS.link,
        latency: o.latency ?? FULL_DEFAULTS.latency,
        hopLatency: o.hopLatency ?? FULL_DEFAULTS.hopLatency,
      });
      break;
    }
    case "ring":
    case "torus":
    case "mesh": {
      let dims: number[];
      if (fam === "ring") dims = [rest === "" ? ranks : positiveInt(rest, "the router count", text)];
      else {
        if (rest === "") throw topologyError(`'${text}': ${fam} needs its dimensions, e.g. ${fam}:8x8 or ${fam}:4x4x4`);
        dims = dimsOf(rest, text, 2);
      }
      const hosts = dims.reduce((a, b) => a * b, 1);
      checkSize(text, hosts, 2 * hosts * (dims.length + 1));
      if (routing === "minimal") {
        let most = 1;
        dims.forEach((A, d) => {
          most *= d + 1;
          if (fam !== "mesh" && A > 2 && A % 2 === 0) most *= 2;
        });
        if (most > MAX_MINIMAL_PATHS)
          throw new InvalidArgumentError(
            { op: "--routing" },
            `minimal on '${text}' splits a message over up to ${most} paths (every order of ${dims.length} dimensions${fam === "mesh" ? "" : ", ties both ways"}); at most ${MAX_MINIMAL_PATHS} are allowed: use dor, or fewer dimensions`,
          );
      }
      t = gridTopology({
        family: fam,
        dims,
        wrap: fam !== "mesh",
        ...net,
        ...(o.injection !== undefined ? { injection: o.injection } : {}),
        routing: routing === "minimal" ? "minimal" : "dor",
      });
      break;
    }
    case "fattree":
      t = fatTree(text, rest, ranks, net, o, routing as "ecmp" | "spray");
      break;
    case "rail":
      t = rail(text, rest, ranks, net, o, routing as "ecmp" | "spray" | "pxn");
      break;
    case "file":
      if (rest === "") throw topologyError("'file:' needs a path, e.g. file:examples/topologies/two-switches.json");
      t = fileTopology(rest, { ...net, maxHosts: MAX_TOPOLOGY_HOSTS, maxLinks: MAX_TOPOLOGY_LINKS });
      break;
  }
  if (t.hosts < ranks) throw topologyError(`'${t.name}' has ${t.hosts} hosts, fewer than the ${ranks} ranks`);
  return t;
}

interface NetDefaults {
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
}

function fatTree(
  text: string,
  rest: string,
  ranks: number,
  net: NetDefaults,
  o: LinkOptions,
  routing: "ecmp" | "spray",
): Topology {
  const { values, positional } = keyValues(
    rest === "" ? [] : rest.split(","),
    ["leaves", "hosts", "spines", "over", "k"],
    text,
  );
  if (positional.length > 0)
    throw topologyError(
      `'${text}': expected key=value parameters (leaves=, hosts=, spines=, over=, or k= for a k-ary fat-tree), got '${positional[0]}'`,
    );
  const over = values.has("over") ? positiveReal(values.get("over") as string, "over", text) : 1;
  const host = o.injection ?? net.link;
  const suffix = over !== 1 ? `,over=${over}` : "";
  if (values.has("k")) {
    for (const key of ["leaves", "hosts", "spines"])
      if (values.has(key))
        throw topologyError(`'${text}': k= builds a k-ary fat-tree, whose shape k fixes; leave out ${key}=`);
    const k = positiveInt(values.get("k") as string, "k", text, 2);
    if (k % 2 !== 0) throw topologyError(`'${text}': k must be even (k/2 ports down, k/2 up), got ${k}`);
    const hosts = k ** 3 / 4;
    checkSize(text, hosts, 2 * hosts * 3);
    return fatTreeTopology({
      leaves: 0,
      hostsPerLeaf: 0,
      spines: 0,
      k,
      over,
      host,
      ...net,
      routing,
      name: `fattree:k=${k}${suffix}`,
    });
  }
  const hostsPerLeaf = values.has("hosts")
    ? positiveInt(values.get("hosts") as string, "hosts", text)
    : FATTREE_DEFAULT_HOSTS_PER_LEAF;
  const leaves = values.has("leaves")
    ? positiveInt(values.get("leaves") as string, "leaves", text)
    : Math.ceil(ranks / hostsPerLeaf);
  const spines = values.has("spines") ? positiveInt(values.get("spines") as string, "spines", text) : hostsPerLeaf;
  checkSize(text, leaves * hostsPerLeaf, 2 * leaves * (hostsPerLeaf + spines));
  return fatTreeTopology({
    leaves,
    hostsPerLeaf,
    spines,
    over,
    host,
    ...net,
    routing,
    name: `fattree:leaves=${leaves},hosts=${hostsPerLeaf},spines=${spines}${suffix}`,
  });
}

function rail(
  text: string,
  rest: string,
  ranks: number,
  net: NetDefaults,
  o: LinkOptions,
  routing: "ecmp" | "spray" | "pxn",
): Topology {
  const { values, positional } = keyValues(rest === "" ? [] : rest.split(","), ["spines", "over"], text);
  if (positional.length > 1) throw topologyError(`'${text}': expected rail:NODESxG[,spines=S][,over=R]`);
  let nodes: number;
  let gpus: number;
  if (positional.length === 1) {
    const d = dimsOf(positional[0] as string, text, 1);
    if (d.length !== 2) throw topologyError(`'${text}': expected rail:NODESxG, e.g. rail:16x8, got '${positional[0]}'`);
    [nodes, gpus] = d as [number, number];
  } else {
    gpus = RAIL_DEFAULT_GPUS;
    nodes = Math.ceil(ranks / gpus);
  }
  const spines = values.has("spines") ? positiveInt(values.get("spines") as string, "spines", text) : nodes;
  const over = values.has("over") ? positiveReal(values.get("over") as string, "over", text) : 1;
  checkSize(text, nodes * gpus, 4 * nodes * gpus + 2 * gpus * spines);
  const extra = `${values.has("spines") ? `,spines=${spines}` : ""}${over !== 1 ? `,over=${over}` : ""}`;
  return railTopology({
    nodes,
    gpus,
    spines,
    over,
    nvlink: o.nvlink ?? NETWORK_DEFAULTS.nvlink,
    nic: o.nic ?? NETWORK_DEFAULTS.nic,
    latency: net.latency,
    hopLatency: net.hopLatency,
    routing,
    name: `rail:${nodes}x${gpus}${extra}`,
  });
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
  ];
}
