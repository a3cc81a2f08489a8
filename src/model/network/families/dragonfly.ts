/**
 * `dragonfly[:groups=G,routers=A,hosts=P,global=C]`: the dragonfly of Kim et al. (ISCA'08) as
 * HPE Slingshot builds it. G groups of A routers; P hosts on each router (an injection and an
 * ejection link each); inside a group every router joined to every other by one local link each
 * way; every pair of groups joined by C global links each way. Defaults: 16 routers of 16 hosts
 * (LUMI-C's electrical group: 16 switches of 16 nodes, all-to-all inside), one global link per
 * pair, and as many groups as the ranks need. LUMI-C (the Bine paper's dragonfly) is
 * `dragonfly:groups=6` with `--link 25GB/s` (Slingshot-11, 200 Gb/s).
 *
 * Global links: group g's links to group h (h != g) sit on consecutive routers, its i-th other
 * group (i = h, or h - 1 when h > g) taking routers (i·C + j) mod A for j = 0..C-1: each router
 * holds about (G-1)·C/A of them.
 *
 * Numbering: host (g, r, p) = (g·A + r)·P + p is node h; router (g, r) is node H + g·A + r. Links:
 * host h's injection link 2h and ejection link 2h+1; then the local links group by group, router
 * by router; then the global links, group by group, to each other group in order, C each.
 *
 * Routing: minimal, at most one global hop: source router, (local) to the router holding the
 * global link to the destination's group, global, (local) to the destination's router. Of C > 1
 * global links per pair one is picked by a deterministic hash of the host pair (ECMP), which
 * makes the topology `hashed`. Link kinds 'local' and 'global' (with 'inject'/'eject') are the
 * classes the model's result sums bytes by.
 */
import { checkPair, keyValues, LinkTable, pairHash, positiveInt, topologyError } from "../builder.js";
import type { TopologyFamily, TopologyShape } from "../family.js";
import type { Topology } from "../types.js";

/** LUMI-C's electrical group: 16 switches, 16 nodes on each. */
export const DRAGONFLY_DEFAULT_ROUTERS = 16;
export const DRAGONFLY_DEFAULT_HOSTS = 16;

interface DragonflyShape extends TopologyShape {
  readonly groups: number;
  readonly routers: number;
  readonly hostsPerRouter: number;
  readonly globals: number;
}

export const dragonfly: TopologyFamily<DragonflyShape> = {
  name: "dragonfly",
  order: 6,
  routings: ["minimal"],
  syntax: "dragonfly[:groups=G,routers=A,hosts=P,global=C]",
  help: [
    [
      "dragonfly[:groups=G,routers=A,hosts=P,global=C]",
      "groups of A all-to-all routers of P hosts, C global links per pair of groups (default 16x16, 1)",
    ],
  ],
  flags: { injection: "a host's links to and from its router (default --link)" },
  parse(rest, { spec, ranks }) {
    const { values, positional } = keyValues(
      rest === "" ? [] : rest.split(","),
      ["groups", "routers", "hosts", "global"],
      spec,
    );
    if (positional.length > 0)
      throw topologyError(
        `'${spec}': expected key=value parameters (groups=, routers=, hosts=, global=), got '${positional[0]}'`,
      );
    const get = (key: string, fallback: number) =>
      values.has(key) ? positiveInt(values.get(key) as string, key, spec) : fallback;
    const routers = get("routers", DRAGONFLY_DEFAULT_ROUTERS);
    const hostsPerRouter = get("hosts", DRAGONFLY_DEFAULT_HOSTS);
    const groups = get("groups", Math.ceil(ranks / (routers * hostsPerRouter)));
    const globals = get("global", 1);
    const hosts = groups * routers * hostsPerRouter;
    const name = `dragonfly:groups=${groups},routers=${routers},hosts=${hostsPerRouter},global=${globals}`;
    const links = 2 * hosts + groups * routers * (routers - 1) + groups * (groups - 1) * globals;
    return { family: "dragonfly", name, hosts, links, groups, routers, hostsPerRouter, globals };
  },
  build(shape, c) {
    return dragonflyTopology(shape, {
      host: c.options.injection ?? c.link,
      link: c.link,
      latency: c.latency,
      hopLatency: c.hopLatency,
    });
  },
};

interface LinkParams {
  readonly host: number;
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
}

export function dragonflyTopology(s: DragonflyShape, p: LinkParams): Topology {
  const G = s.groups;
  const A = s.routers;
  const P = s.hostsPerRouter;
  const C = s.globals;
  const R = G * A;
  const H = R * P;
  const table = new LinkTable();
  for (let h = 0; h < H; h++) {
    table.add(h, H + Math.floor(h / P), p.host, p.latency, "inject");
    table.add(H + Math.floor(h / P), h, p.host, 0, "eject");
  }
  // local[(g·A + r)·A + r2]: the link from router r to router r2 of group g.
  const local = new Int32Array(R * A).fill(-1);
  for (let g = 0; g < G; g++)
    for (let r = 0; r < A; r++)
      for (let r2 = 0; r2 < A; r2++)
        if (r2 !== r)
          local[(g * A + r) * A + r2] = table.add(H + g * A + r, H + g * A + r2, p.link, p.latency, "local");
  /** The router of group g holding its j-th global link to group h. */
  const gateway = (g: number, h: number, j: number) => ((h < g ? h : h - 1) * C + j) % A;
  // global[(g·G + h)·C + j]: the j-th link from group g to group h.
  const global = new Int32Array(G * G * C).fill(-1);
  for (let g = 0; g < G; g++)
    for (let h = 0; h < G; h++) {
      if (h === g) continue;
      for (let j = 0; j < C; j++)
        global[(g * G + h) * C + j] = table.add(
          H + g * A + gateway(g, h, j),
          H + h * A + gateway(h, g, j),
          p.link,
          p.latency,
          "global",
        );
    }
  const links = table.finish();

  const paths = (a: number, b: number): number[][] => {
    checkPair(a, b, H, "paths");
    const ra = Math.floor(a / P);
    const rb = Math.floor(b / P);
    const ga = Math.floor(ra / A);
    const gb = Math.floor(rb / A);
    const path = [2 * a];
    const hop = (g: number, from: number, to: number) => {
      if (from !== to) path.push(local[(g * A + from) * A + to]!);
    };
    if (ga === gb) hop(ga, ra % A, rb % A);
    else {
      const j = C === 1 ? 0 : pairHash(a, b) % C;
      hop(ga, ra % A, gateway(ga, gb, j));
      path.push(global[(ga * G + gb) * C + j]!);
      hop(gb, gateway(gb, ga, j), rb % A);
    }
    path.push(2 * b + 1);
    return [path];
  };

  return {
    name: s.name,
    family: "dragonfly",
    nodeCount: H + R,
    nodeKind: (n) => (n < H ? "host" : "switch"),
    nodeName: (n) => {
      if (n < H) return `h${n}`;
      const r = n - H;
      return `g${Math.floor(r / A)}r${r % A}`;
    },
    hosts: H,
    hostNode: (h) => h,
    links,
    hopLatency: p.hopLatency,
    routing: `minimal: local, global, local (at most one global hop)${C > 1 ? "; of the global links between two groups, one picked by a deterministic ECMP hash of (source host, destination host)" : ""}`,
    ...(C > 1 ? { hashed: true } : {}),
    paths,
    groups: G,
    group: (h) => Math.floor(h / (A * P)),
    groupName: "group",
    layout: {
      kind: "levels",
      level: (n) => (n < H ? 0 : 1),
      index: (n) => (n < H ? n : n - H),
    },
  };
}
