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
import { checkPair, LinkTable, pairHash } from "../builder.js";
import type { Topology } from "../types.js";

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
  const route = (a: number, b: number, _flow: number, out: number[]): void => {
    checkPair(a, b, H, "route");
    out.length = 0;
    out.push(...via(a, b, pairHash(a, b) % S));
  };
  const paths = (a: number, b: number, flow: number): number[][] => {
    const crossRail = Math.floor(a / G) !== Math.floor(b / G) && a % G !== b % G;
    if (p.routing !== "spray" || !crossRail) {
      const one: number[] = [];
      route(a, b, flow, one);
      return [one];
    }
    checkPair(a, b, H, "paths");
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
    route,
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
