/**
 * `hyperx:AxB[xC...]`: the HyperX of Ahn et al. (SC'09), a flattened butterfly. One router per
 * grid point, one host on each; in every dimension the routers that differ only in that
 * coordinate are fully connected (one link each way between every two of them). A router of
 * dimensions A0..A{D-1} has sum(Ad - 1) network links out, and its host drives them all at once:
 * its injection and ejection links carry their bandwidth together unless --injection says less.
 *
 * Numbering: grid point (x0, x1, ...) is index x0 + A0·(x1 + A1·(...)), dimension 0 fastest; host
 * h is node h and its router node R + h. Links: host h's injection link 2h and ejection link
 * 2h+1; then router by router, dimension by dimension, one link to each other coordinate of
 * that dimension in increasing order. Kinds: 'inject', 'eject', and the dimension ('x', 'y', 'z',
 * then 'd3', 'd4', ...).
 *
 * Routing: dimension order, dimension 0 first: one hop in each dimension whose coordinate
 * differs, straight to the destination's coordinate (minimal: as many router hops as differing
 * coordinates).
 */
import { checkPair, dimsOf, LinkTable, topologyError } from "../builder.js";
import type { TopologyFamily, TopologyShape } from "../family.js";
import type { Topology } from "../types.js";

interface HyperXShape extends TopologyShape {
  readonly dims: readonly number[];
}

export const hyperx: TopologyFamily<HyperXShape> = {
  name: "hyperx",
  order: 7,
  routings: ["dor"],
  syntax: "hyperx:AxB[xC...]",
  help: [["hyperx:AxB[xC...]", "HyperX: every dimension fully connected; dimension-order routing"]],
  flags: {
    injection: "a host's links to and from its router (default: its router's outgoing links together)",
  },
  parse(rest, { spec }) {
    if (rest === "") throw topologyError(`'${spec}': hyperx needs its dimensions, e.g. hyperx:8x8 or hyperx:4x4x4`);
    const dims = dimsOf(rest, spec, 1);
    const hosts = dims.reduce((a, b) => a * b, 1);
    const degree = dims.reduce((s, A) => s + A - 1, 0);
    return { family: "hyperx", name: `hyperx:${dims.join("x")}`, hosts, links: hosts * (2 + degree), dims };
  },
  build(shape, c) {
    return hyperxTopology(shape, {
      link: c.link,
      latency: c.latency,
      hopLatency: c.hopLatency,
      ...(c.options.injection !== undefined ? { injection: c.options.injection } : {}),
    });
  },
};

interface LinkParams {
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
  readonly injection?: number;
}

export function hyperxTopology(s: HyperXShape, p: LinkParams): Topology {
  const dims = s.dims;
  const D = dims.length;
  const stride: number[] = [];
  let R = 1;
  for (const A of dims) {
    stride.push(R);
    R *= A;
  }
  const degree = dims.reduce((sum, A) => sum + A - 1, 0);
  const table = new LinkTable();
  const host = p.injection ?? Math.max(1, degree) * p.link;
  for (let h = 0; h < R; h++) {
    table.add(h, R + h, host, p.latency, "inject");
    table.add(R + h, h, host, 0, "eject");
  }
  const axis = (d: number) => (D <= 3 ? "xyz"[d]! : `d${d}`);
  const coord = (r: number, d: number) => Math.floor(r / stride[d]!) % dims[d]!;
  // first[r·D + d]: router r's link to the lowest other coordinate of dimension d; the others follow.
  const first = new Int32Array(R * D);
  for (let r = 0; r < R; r++)
    for (let d = 0; d < D; d++) {
      first[r * D + d] = table.count;
      const x = coord(r, d);
      for (let y = 0; y < dims[d]!; y++)
        if (y !== x) table.add(R + r, R + r + (y - x) * stride[d]!, p.link, p.latency, axis(d));
    }
  const links = table.finish();

  const paths = (a: number, b: number): number[][] => {
    checkPair(a, b, R, "paths");
    const path = [2 * a];
    let cur = a;
    for (let d = 0; d < D; d++) {
      const x = coord(cur, d);
      const y = coord(b, d);
      if (x === y) continue;
      path.push(first[cur * D + d]! + (y < x ? y : y - 1));
      cur += (y - x) * stride[d]!;
    }
    path.push(2 * b + 1);
    return [path];
  };

  return {
    name: s.name,
    family: "hyperx",
    nodeCount: 2 * R,
    nodeKind: (n) => (n < R ? "host" : "switch"),
    nodeName: (n) => {
      const r = n < R ? n : n - R;
      const c = Array.from({ length: D }, (_, d) => coord(r, d));
      return n < R ? `h${r}` : `r(${c.join(",")})`;
    },
    hosts: R,
    hostNode: (h) => h,
    links,
    hopLatency: p.hopLatency,
    routing: "dimension order (dimension 0 first), one hop straight to each differing coordinate",
    injectionLimit:
      p.injection === undefined
        ? `each host drives its router's ${degree} outgoing links at once: up to ${degree} × the link bandwidth out, and in`
        : "each host's traffic in and out limited to --injection",
    paths,
    groups: R / dims[0]!,
    group: (h) => Math.floor(h / dims[0]!),
    groupName: "row",
    layout: {
      kind: "grid",
      dims,
      coords: (n) => {
        const r = n < R ? n : n - R;
        return Array.from({ length: D }, (_, d) => coord(r, d));
      },
    },
  };
}
