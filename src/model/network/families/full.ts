/**
 * `full` / `full:N`: N hosts on one non-blocking switch, today's alpha-beta model as a network.
 * Host h's injection link (2h, host -> switch) carries the latency, its ejection link (2h+1,
 * switch -> host) none, both of bandwidth `link`, and there is no switching latency: one message
 * of B bytes alone takes exactly latency + B / link, alpha + beta·B with alpha = latency and
 * 1/beta = link. Concurrent messages share a host's injection link (its sends) and ejection link
 * (its receives) and nothing else. Routing: the only path, host -> switch -> host.
 */
import { checkPair, LinkTable } from "../builder.js";
import type { Topology } from "../types.js";

export interface FullParams {
  readonly hosts: number;
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
}

export function fullTopology(p: FullParams): Topology {
  const H = p.hosts;
  const table = new LinkTable();
  for (let h = 0; h < H; h++) {
    table.add(h, H, p.link, p.latency, "inject");
    table.add(H, h, p.link, 0, "eject");
  }
  const links = table.finish();
  const route = (a: number, b: number, _flow: number, out: number[]): void => {
    checkPair(a, b, H, "route");
    out.length = 0;
    out.push(2 * a, 2 * b + 1);
  };
  return {
    name: `full:${H}`,
    family: "full",
    nodeCount: H + 1,
    nodeKind: (n) => (n < H ? "host" : "switch"),
    nodeName: (n) => (n < H ? `h${n}` : "switch"),
    hosts: H,
    hostNode: (h) => h,
    links,
    hopLatency: p.hopLatency,
    routing: "host -> switch -> host (the only path)",
    route,
    paths: (a, b) => {
      checkPair(a, b, H, "paths");
      return [[2 * a, 2 * b + 1]];
    },
    groups: H,
    group: (h) => h,
    groupName: "host",
    layout: { kind: "levels", level: (n) => (n < H ? 0 : 1), index: (n) => (n < H ? n : 0) },
  };
}
