/**
 * Fat-trees. Two levels (leaf/spine, the default): `leaves` leaf switches of `hosts` hosts each,
 * every leaf joined to every one of `spines` spine switches by one link each way. Three levels
 * (`k=K`, the k-ary fat-tree of Al-Fares et al., SIGCOMM'08): K pods of K/2 edge (leaf) and K/2
 * aggregation switches, K/2 hosts per edge switch, (K/2)^2 core switches; aggregation switch j of
 * every pod joins cores j·K/2 .. j·K/2 + K/2 - 1. K^3/4 hosts.
 *
 * Bandwidths: host links `host` (default: --link); core links (aggregation to core) `link`; a
 * leaf's uplinks together carry hosts·host / over (over = the oversubscription ratio, default 1):
 * each of a two-level leaf's `spines` uplinks has bandwidth hosts·host / (spines·over), each of a
 * k-ary edge switch's K/2 uplinks host / over. Oversubscription thins the uplinks; the switch
 * count, and so the ECMP choice, stays the same.
 *
 * Numbering: hosts 0..H-1 (nodes 0..H-1), leaf by leaf; then leaves (edges), then spines (for
 * k-ary: aggregation switches pod by pod, then cores). Host h's up link is 2h, its down link 2h+1.
 *
 * Routing: minimal up/down. Same leaf: host -> leaf -> host. Otherwise up to the lowest common
 * level and down. 'ecmp' (the default) picks the spine (and core) by a deterministic hash of the
 * (source host, destination host) pair, so every message of a pair takes one path; 'spray' splits
 * each message evenly over all minimal paths.
 */
import { checkPair, keyValues, LinkTable, pairHash, positiveInt, positiveReal, topologyError } from "../builder.js";
import type { TopologyFamily, TopologyShape } from "../family.js";
import type { Topology } from "../types.js";

/** Two-level fat-tree defaults: 16 hosts per leaf; as many spines as hosts per leaf (non-blocking). */
export const FATTREE_DEFAULT_HOSTS_PER_LEAF = 16;

interface FatTreeShape extends TopologyShape {
  readonly leaves: number;
  readonly hostsPerLeaf: number;
  readonly spines: number;
  readonly k?: number;
  readonly over: number;
}

export const fattree: TopologyFamily<FatTreeShape> = {
  name: "fattree",
  order: 4,
  routings: ["ecmp", "spray"],
  syntax: "fattree[:leaves=L,hosts=H,spines=S,over=R], fattree:k=K",
  help: [
    ["fattree[:leaves=L,hosts=H,spines=S,over=R]", "leaf/spine (default 16 hosts per leaf)"],
    ["fattree:k=K[,over=R]", "k-ary three-level fat-tree"],
  ],
  flags: { injection: "a host's links to and from its leaf (default --link)" },
  parse(rest, { spec, ranks }) {
    const { values, positional } = keyValues(
      rest === "" ? [] : rest.split(","),
      ["leaves", "hosts", "spines", "over", "k"],
      spec,
    );
    if (positional.length > 0)
      throw topologyError(
        `'${spec}': expected key=value parameters (leaves=, hosts=, spines=, over=, or k= for a k-ary fat-tree), got '${positional[0]}'`,
      );
    const over = values.has("over") ? positiveReal(values.get("over") as string, "over", spec) : 1;
    const suffix = over !== 1 ? `,over=${over}` : "";
    if (values.has("k")) {
      for (const key of ["leaves", "hosts", "spines"])
        if (values.has(key))
          throw topologyError(`'${spec}': k= builds a k-ary fat-tree, whose shape k fixes; leave out ${key}=`);
      const k = positiveInt(values.get("k") as string, "k", spec, 2);
      if (k % 2 !== 0) throw topologyError(`'${spec}': k must be even (k/2 ports down, k/2 up), got ${k}`);
      const hosts = k ** 3 / 4;
      return {
        family: "fattree",
        name: `fattree:k=${k}${suffix}`,
        hosts,
        links: 2 * hosts * 3,
        leaves: 0,
        hostsPerLeaf: 0,
        spines: 0,
        k,
        over,
      };
    }
    const hostsPerLeaf = values.has("hosts")
      ? positiveInt(values.get("hosts") as string, "hosts", spec)
      : FATTREE_DEFAULT_HOSTS_PER_LEAF;
    const leaves = values.has("leaves")
      ? positiveInt(values.get("leaves") as string, "leaves", spec)
      : Math.ceil(ranks / hostsPerLeaf);
    const spines = values.has("spines") ? positiveInt(values.get("spines") as string, "spines", spec) : hostsPerLeaf;
    return {
      family: "fattree",
      name: `fattree:leaves=${leaves},hosts=${hostsPerLeaf},spines=${spines}${suffix}`,
      hosts: leaves * hostsPerLeaf,
      links: 2 * leaves * (hostsPerLeaf + spines),
      leaves,
      hostsPerLeaf,
      spines,
      over,
    };
  },
  build(shape, c) {
    return fatTreeTopology({
      leaves: shape.leaves,
      hostsPerLeaf: shape.hostsPerLeaf,
      spines: shape.spines,
      ...(shape.k !== undefined ? { k: shape.k } : {}),
      over: shape.over,
      host: c.options.injection ?? c.link,
      link: c.link,
      latency: c.latency,
      hopLatency: c.hopLatency,
      routing: c.routing as "ecmp" | "spray",
      name: shape.name,
    });
  },
};

export interface FatTreeParams {
  /** Two-level shape; ignored when k is set. */
  readonly leaves: number;
  readonly hostsPerLeaf: number;
  readonly spines: number;
  /** k-ary three-level fat-tree when set (even, >= 2). */
  readonly k?: number;
  readonly over: number;
  readonly host: number;
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
  readonly routing: "ecmp" | "spray";
  readonly name: string;
}

export function fatTreeTopology(p: FatTreeParams): Topology {
  return p.k === undefined ? twoLevel(p) : threeLevel(p, p.k);
}

function twoLevel(p: FatTreeParams): Topology {
  const L = p.leaves;
  const Hl = p.hostsPerLeaf;
  const S = p.spines;
  const H = L * Hl;
  const leafNode = (l: number) => H + l;
  const spineNode = (s: number) => H + L + s;
  const table = new LinkTable();
  for (let h = 0; h < H; h++) {
    table.add(h, leafNode(Math.floor(h / Hl)), p.host, p.latency, "inject");
    table.add(leafNode(Math.floor(h / Hl)), h, p.host, 0, "eject");
  }
  const uplink = (Hl * p.host) / (S * p.over);
  const upBase = table.addComplete(L, S, leafNode, spineNode, uplink, p.latency);
  const links = table.finish();
  const up = (l: number, s: number) => upBase + 2 * (l * S + s);
  const via = (a: number, b: number, s: number): number[] => {
    const la = Math.floor(a / Hl);
    const lb = Math.floor(b / Hl);
    return la === lb ? [2 * a, 2 * b + 1] : [2 * a, up(la, s), up(lb, s) + 1, 2 * b + 1];
  };
  const paths = (a: number, b: number): number[][] => {
    checkPair(a, b, H, "paths");
    if (p.routing === "ecmp" || Math.floor(a / Hl) === Math.floor(b / Hl)) return [via(a, b, pairHash(a, b) % S)];
    return Array.from({ length: S }, (_, s) => via(a, b, s));
  };
  return {
    name: p.name,
    family: "fattree",
    nodeCount: H + L + S,
    nodeKind: (n) => (n < H ? "host" : "switch"),
    nodeName: (n) => (n < H ? `h${n}` : n < H + L ? `leaf${n - H}` : `spine${n - H - L}`),
    hosts: H,
    hostNode: (h) => h,
    links,
    hopLatency: p.hopLatency,
    routing:
      p.routing === "ecmp"
        ? "up/down, minimal; the spine picked by a deterministic ECMP hash of (source host, destination host)"
        : "up/down, minimal; each message split evenly over every spine (packet spraying)",
    hashed: p.routing === "ecmp",
    paths,
    groups: L,
    group: (h) => Math.floor(h / Hl),
    groupName: "leaf",
    layout: {
      kind: "levels",
      level: (n) => (n < H ? 0 : n < H + L ? 1 : 2),
      index: (n) => (n < H ? n : n < H + L ? n - H : n - H - L),
    },
  };
}

function threeLevel(p: FatTreeParams, k: number): Topology {
  const h2 = k / 2;
  const E = k * h2; // edge switches (h2 per pod)
  const G = k * h2; // aggregation switches
  const C = h2 * h2; // cores
  const H = E * h2;
  const edgeNode = (e: number) => H + e;
  const aggNode = (g: number) => H + E + g;
  const coreNode = (c: number) => H + E + G + c;
  const table = new LinkTable();
  for (let h = 0; h < H; h++) {
    const e = Math.floor(h / h2);
    table.add(h, edgeNode(e), p.host, p.latency, "inject");
    table.add(edgeNode(e), h, p.host, 0, "eject");
  }
  const edgeBase = table.count;
  const edgeUp = p.host / p.over;
  for (let e = 0; e < E; e++) {
    const pod = Math.floor(e / h2);
    for (let j = 0; j < h2; j++) {
      table.add(edgeNode(e), aggNode(pod * h2 + j), edgeUp, p.latency, "up");
      table.add(aggNode(pod * h2 + j), edgeNode(e), edgeUp, p.latency, "down");
    }
  }
  const coreBase = table.count;
  for (let g = 0; g < G; g++) {
    const j = g % h2;
    for (let c = 0; c < h2; c++) {
      table.add(aggNode(g), coreNode(j * h2 + c), p.link, p.latency, "core-up");
      table.add(coreNode(j * h2 + c), aggNode(g), p.link, p.latency, "core-down");
    }
  }
  const links = table.finish();
  const eUp = (e: number, j: number) => edgeBase + 2 * (e * h2 + j);
  const gUp = (g: number, c: number) => coreBase + 2 * (g * h2 + c);
  /** The path through aggregation index j (and core c of j's group when pods differ). */
  const via = (a: number, b: number, j: number, c: number): number[] => {
    const ea = Math.floor(a / h2);
    const eb = Math.floor(b / h2);
    if (ea === eb) return [2 * a, 2 * b + 1];
    const pa = Math.floor(ea / h2);
    const pb = Math.floor(eb / h2);
    if (pa === pb) return [2 * a, eUp(ea, j), eUp(eb, j) + 1, 2 * b + 1];
    return [2 * a, eUp(ea, j), gUp(pa * h2 + j, c), gUp(pb * h2 + j, c) + 1, eUp(eb, j) + 1, 2 * b + 1];
  };
  const paths = (a: number, b: number): number[][] => {
    checkPair(a, b, H, "paths");
    const ea = Math.floor(a / h2);
    const eb = Math.floor(b / h2);
    if (p.routing === "ecmp" || ea === eb) {
      const x = pairHash(a, b);
      return [via(a, b, x % h2, Math.floor(x / h2) % h2)];
    }
    const samePod = Math.floor(ea / h2) === Math.floor(eb / h2);
    const result: number[][] = [];
    for (let j = 0; j < h2; j++) {
      if (samePod) result.push(via(a, b, j, 0));
      else for (let c = 0; c < h2; c++) result.push(via(a, b, j, c));
    }
    return result;
  };
  return {
    name: p.name,
    family: "fattree",
    nodeCount: H + E + G + C,
    nodeKind: (n) => (n < H ? "host" : "switch"),
    nodeName: (n) =>
      n < H ? `h${n}` : n < H + E ? `edge${n - H}` : n < H + E + G ? `agg${n - H - E}` : `core${n - H - E - G}`,
    hosts: H,
    hostNode: (h) => h,
    links,
    hopLatency: p.hopLatency,
    routing:
      p.routing === "ecmp"
        ? "up/down, minimal; aggregation and core switches picked by a deterministic ECMP hash of (source host, destination host)"
        : "up/down, minimal; each message split evenly over every minimal path (packet spraying)",
    hashed: p.routing === "ecmp",
    paths,
    groups: E,
    group: (h) => Math.floor(h / h2),
    groupName: "leaf",
    layout: {
      kind: "levels",
      level: (n) => (n < H ? 0 : n < H + E ? 1 : n < H + E + G ? 2 : 3),
      index: (n) => (n < H ? n : n < H + E ? n - H : n < H + E + G ? n - H - E : n - H - E - G),
    },
  };
}
