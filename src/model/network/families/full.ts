/**
 * `full` / `full:N`: N hosts on one non-blocking switch, today's alpha-beta model as a network.
 * Host h's injection link (2h, host -> switch) carries the latency, its ejection link (2h+1,
 * switch -> host) none, both of bandwidth `link`, and there is no switching latency: one message
 * of B bytes alone takes exactly latency + B / link, alpha + beta·B with alpha = latency and
 * 1/beta = link. Concurrent messages share a host's injection link (its sends) and ejection link
 * (its receives) and nothing else. Routing: the only path, host -> switch -> host.
 */
import { checkPair, LinkTable, positiveInt } from "../builder.js";
import type { TopologyFamily, TopologyShape } from "../family.js";
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

/**
 * `full` keeps the alpha-beta model's defaults (alpha 5 µs, 25 GB/s per rank, no switching
 * latency), so `--topology full` with no other flag gives the alpha-beta model's numbers.
 */
export const FULL_DEFAULTS = { link: 25e3, latency: 5, hopLatency: 0 } as const;

export const full: TopologyFamily<TopologyShape> = {
  name: "full",
  order: 0,
  routings: ["direct"],
  syntax: "full[:N]",
  help: [["full[:N]", "one non-blocking switch (the alpha-beta model as a network)"]],
  parse(rest, { spec, ranks }) {
    const n = rest === "" ? ranks : positiveInt(rest, "the host count", spec);
    return { family: "full", name: `full:${n}`, hosts: n, links: 2 * n };
  },
  build(shape, { options: o }) {
    return fullTopology({
      hosts: shape.hosts,
      link: o.link ?? FULL_DEFAULTS.link,
      latency: o.latency ?? FULL_DEFAULTS.latency,
      hopLatency: o.hopLatency ?? FULL_DEFAULTS.hopLatency,
    });
  },
};
