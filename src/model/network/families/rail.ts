/**
 * A rail-optimized multi-node GPU system, `rail:NODESxG`: NODES nodes of G GPUs (the hosts). In a
 * node every GPU has a link to and from the node's NVSwitch (`nvlink` each way); every GPU also
 * has its own NIC (`nic` each way) to rail switch g, g being its local index, so the NICs of the
 * same local index across nodes share one rail switch. Rail switches are joined by `spines` spine
 * switches (default NODES: as many uplinks as downlinks), every rail to every spine one link each
 * way of bandwidth NODES·nic / (spines·over): non-blocking at over = 1.
 *
 * Numbering: GPU (host) h = node·G + local, graph node h; then the NVSwitches (one per node), the
 * rail switches, the spines. GPU h's links: 4h to its NVSwitch, 4h+1 back, 4h+2 its NIC up to
 * its rail, 4h+3 its rail down to it.
 *
 * Routing. Same node: GPU -> NVSwitch -> GPU. Other node, same local index: NIC -> rail -> NIC.
 * Other node and index: NIC -> rail g -> spine -> rail g' -> NIC, the spine picked by a
 * deterministic ECMP hash of (source, destination) ('ecmp', the default) or the message split
 * over every spine ('spray'). 'pxn' (NCCL's PXN, PCI x NVLink): first NVLink to the GPU of the
 * source's node with the destination's local index, then that GPU's NIC along its rail, so no
 * message crosses a spine.
 */
import {
  checkPair,
  dimsOf,
  keyValues,
  LinkTable,
  pairHash,
  positiveInt,
  positiveReal,
  topologyError,
} from "../builder.js";
import { NETWORK_DEFAULTS, type TopologyFamily, type TopologyShape } from "../family.js";
import type { Topology } from "../types.js";

/** Rail system default: 8 GPUs per node. */
export const RAIL_DEFAULT_GPUS = 8;

interface RailShape extends TopologyShape {
  readonly nodes: number;
  readonly gpus: number;
  readonly spines: number;
  readonly over: number;
}

export const rail: TopologyFamily<RailShape> = {
  name: "rail",
  order: 5,
  routings: ["ecmp", "spray", "pxn"],
  syntax: "rail[:NODESxG]",
  help: [["rail[:NODESxG,spines=S,over=R]", "GPU nodes on NVSwitch, rail-optimized NICs, spines"]],
  flags: { nvlink: "a GPU's NVLink bandwidth each way (450GB/s)", nic: "a GPU's NIC bandwidth each way (400Gb/s)" },
  parse(rest, { spec, ranks }) {
    const { values, positional } = keyValues(rest === "" ? [] : rest.split(","), ["spines", "over"], spec);
    if (positional.length > 1) throw topologyError(`'${spec}': expected rail:NODESxG[,spines=S][,over=R]`);
    let nodes: number;
    let gpus: number;
    if (positional.length === 1) {
      const d = dimsOf(positional[0] as string, spec, 1);
      if (d.length !== 2)
        throw topologyError(`'${spec}': expected rail:NODESxG, e.g. rail:16x8, got '${positional[0]}'`);
      [nodes, gpus] = d as [number, number];
    } else {
      gpus = RAIL_DEFAULT_GPUS;
      nodes = Math.ceil(ranks / gpus);
    }
    const spines = values.has("spines") ? positiveInt(values.get("spines") as string, "spines", spec) : nodes;
    const over = values.has("over") ? positiveReal(values.get("over") as string, "over", spec) : 1;
    const extra = `${values.has("spines") ? `,spines=${spines}` : ""}${over !== 1 ? `,over=${over}` : ""}`;
    return {
      family: "rail",
      name: `rail:${nodes}x${gpus}${extra}`,
      hosts: nodes * gpus,
      links: 4 * nodes * gpus + 2 * gpus * spines,
      nodes,
      gpus,
      spines,
      over,
    };
  },
  build(shape, c) {
    return railTopology({
      nodes: shape.nodes,
      gpus: shape.gpus,
      spines: shape.spines,
      over: shape.over,
      nvlink: c.options.nvlink ?? NETWORK_DEFAULTS.nvlink,
      nic: c.options.nic ?? NETWORK_DEFAULTS.nic,
      latency: c.latency,
      hopLatency: c.hopLatency,
      routing: c.routing as "ecmp" | "spray" | "pxn",
      name: shape.name,
    });
  },
};

export interface RailParams {
  readonly nodes: number;
  readonly gpus: number;
  readonly spines: number;
  readonly over: number;
  readonly nvlink: number;
  readonly nic: number;
  readonly latency: number;
  readonly hopLatency: number;
  readonly routing: "ecmp" | "spray" | "pxn";
  readonly name: string;
}

export function railTopology(p: RailParams): Topology {
  const N = p.nodes;
  const G = p.gpus;
  const S = p.spines;
  const H = N * G;
  const nvs = (n: number) => H + n;
  const rail = (g: number) => H + N + g;
  const spine = (s: number) => H + N + G + s;
  const table = new LinkTable();
  for (let h = 0; h < H; h++) {
    const node = Math.floor(h / G);
    const g = h % G;
    table.add(h, nvs(node), p.nvlink, p.latency, "nvlink");
    table.add(nvs(node), h, p.nvlink, 0, "nvlink");
    table.add(h, rail(g), p.nic, p.latency, "nic");
    table.add(rail(g), h, p.nic, 0, "nic");
  }
  const uplink = (N * p.nic) / (S * p.over);
  const spineBase = table.addComplete(G, S, rail, spine, uplink, p.latency);
  const links = table.finish();
  const up = (g: number, s: number) => spineBase + 2 * (g * S + s);
  const via = (a: number, b: number, s: number): number[] => {
    const na = Math.floor(a / G);
    const nb = Math.floor(b / G);
    const ga = a % G;
    const gb = b % G;
    if (na === nb) return [4 * a, 4 * b + 1];
    if (ga === gb) return [4 * a + 2, 4 * b + 3];
    if (p.routing === "pxn") {
      const relay = na * G + gb;
      return [4 * a, 4 * relay + 1, 4 * relay + 2, 4 * b + 3];
    }
    return [4 * a + 2, up(ga, s), up(gb, s) + 1, 4 * b + 3];
  };
  const paths = (a: number, b: number): number[][] => {
    checkPair(a, b, H, "paths");
    const crossRail = Math.floor(a / G) !== Math.floor(b / G) && a % G !== b % G;
    if (p.routing !== "spray" || !crossRail) return [via(a, b, pairHash(a, b) % S)];
    return Array.from({ length: S }, (_, s) => via(a, b, s));
  };
  return {
    name: p.name,
    family: "rail",
    nodeCount: H + N + G + S,
    nodeKind: (n) => (n < H ? "host" : "switch"),
    nodeName: (n) =>
      n < H ? `gpu${n}` : n < H + N ? `nvswitch${n - H}` : n < H + N + G ? `rail${n - H - N}` : `spine${n - H - N - G}`,
    hosts: H,
    hostNode: (h) => h,
    links,
    hopLatency: p.hopLatency,
    routing:
      p.routing === "pxn"
        ? "same node: NVLink; other node: NVLink to the local GPU on the destination's rail, then that rail (PXN)"
        : p.routing === "spray"
          ? "same node: NVLink; same rail: rail switch; cross rail: rail, every spine (split evenly), rail"
          : "same node: NVLink; same rail: rail switch; cross rail: rail, spine by a deterministic ECMP hash of (source, destination), rail",
    hashed: p.routing === "ecmp",
    paths,
    groups: N,
    group: (h) => Math.floor(h / G),
    groupName: "node",
    layout: {
      kind: "levels",
      level: (n) => (n < H ? 0 : n < H + N ? 1 : n < H + N + G ? 2 : 3),
      index: (n) => (n < H ? n : n < H + N ? n - H : n < H + N + G ? n - H - N : n - H - N - G),
    },
  };
}
