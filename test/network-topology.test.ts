/**
 * The network model's topologies (src/model/network/topology.ts and families/): units, link
 * counts, routes checked link by link against hand-worked cases, multipath counts, JSON files,
 * placement, and 16,384-host systems. Property tests: every route is a connected walk from host a
 * to host b whose length is the family's minimal hop count.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../src/core/errors.js";
import {
  describeTopology,
  FAMILIES,
  FULL_DEFAULTS,
  NETWORK_DEFAULTS,
  parseTopology,
  parseTopologyShape,
  placeRanks,
  ROUTINGS,
  TOPOLOGY_HELP,
} from "../src/model/network/topology.js";
import type { Topology } from "../src/model/network/types.js";
import { formatBandwidth, formatTime, parseBandwidth, parseTime } from "../src/model/network/units.js";

/** The one path a single-path routing rule gives from host a to host b. */
const route = (t: Topology, a: number, b: number): number[] => {
  const all = t.paths(a, b);
  expect(all).toHaveLength(1);
  return [...(all[0] as readonly number[])];
};

/** The nodes a path visits, by name: h0 r(0,0) r(1,0) h1. */
const nodesOf = (t: Topology, path: readonly number[]): string[] => [
  t.nodeName(t.links.from[path[0]!]!),
  ...path.map((l) => t.nodeName(t.links.to[l]!)),
];

/** Throws unless `path` is a connected walk from host a's node to host b's node. */
function expectWalk(t: Topology, a: number, b: number, path: readonly number[]): void {
  expect(path.length).toBeGreaterThan(0);
  expect(t.links.from[path[0]!]).toBe(t.hostNode(a));
  for (let i = 1; i < path.length; i++) expect(t.links.from[path[i]!]).toBe(t.links.to[path[i - 1]!]);
  expect(t.links.to[path[path.length - 1]!]).toBe(t.hostNode(b));
}

/** No two links join the same ordered pair of nodes. */
function expectNoParallelLinks(t: Topology): void {
  const seen = new Set<number>();
  for (let i = 0; i < t.links.count; i++) {
    const key = t.links.from[i]! * t.nodeCount + t.links.to[i]!;
    expect(seen.has(key), `link ${i} duplicates another`).toBe(false);
    seen.add(key);
  }
}

const GB = 1e3; // bytes per µs in one GB/s

describe("units", () => {
  it.each([
    ["400Gb/s", 50 * GB],
    ["50GB/s", 50 * GB],
    ["25 GB/s", 25 * GB],
    ["100Gbps", 12.5 * GB],
    ["8b/s", 1e-6],
    ["8 B/s", 8e-6],
    ["1Kb/s", 125e-6],
    ["1KB/s", 1e-3],
    ["1kB/s", 1e-3],
    ["1Mb/s", 0.125],
    ["1MB/s", 1],
    ["1Tb/s", 125 * GB],
    ["1TB/s", 1000 * GB],
    ["1.5GB/s", 1.5 * GB],
    ["1GiB/s", 2 ** 30 / 1e6],
  ])("bandwidth %s", (text, bytesPerUs) => {
    expect(parseBandwidth(text, "--link")).toBeCloseTo(bytesPerUs, 9);
  });

  it.each(["fast", "400", "400G", "0GB/s", "-5GB/s", "GB/s", "5 GB", "1iB/s", ""])("refuses bandwidth '%s'", (text) => {
    expect(() => parseBandwidth(text, "--link")).toThrow(InvalidArgumentError);
    expect(() => parseBandwidth(text, "--link")).toThrow(/^--link: expected a (positive, finite )?bandwidth like/);
  });

  it("names the flag and the value it refuses", () => {
    expect(() => parseBandwidth("fast", "--link")).toThrow(
      "--link: expected a bandwidth like 400Gb/s or 50GB/s, got 'fast'",
    );
    expect(() => parseTime("soon", "--latency")).toThrow(
      "--latency: expected a time like 100ns, 1.5us or 2ms, got 'soon'",
    );
  });

  it.each([
    ["100ns", 0.1],
    ["1.5us", 1.5],
    ["1.5µs", 1.5],
    ["2 ms", 2000],
    ["1s", 1e6],
    ["0", 0],
    ["0ns", 0],
  ])("time %s", (text, us) => {
    expect(parseTime(text, "--latency")).toBeCloseTo(us, 12);
  });

  it.each(["100", "-1us", "1 min", "us", "1.5 h"])("refuses time '%s'", (text) => {
    expect(() => parseTime(text, "--latency")).toThrow(/^--latency: expected a time/);
  });

  it("formats for reports", () => {
    expect(formatBandwidth(50 * GB)).toBe("50 GB/s");
    expect(formatBandwidth(50 * GB, "bits")).toBe("400 Gb/s");
    expect(formatBandwidth(0.5)).toBe("500 KB/s");
    expect(formatBandwidth(parseBandwidth("1.25TB/s", "x"))).toBe("1.25 TB/s");
    expect(formatTime(0.1)).toBe("100 ns");
    expect(formatTime(1.5)).toBe("1.5 µs");
    expect(formatTime(2000)).toBe("2 ms");
    expect(formatTime(3e6)).toBe("3 s");
    expect(formatTime(0)).toBe("0 µs");
  });
});

describe("full", () => {
  it("one switch: injection carries the latency, ejection none, no hop latency", () => {
    const t = parseTopology("full", 4, { link: 10 * GB, latency: 2 });
    expect(t.name).toBe("full:4");
    expect(t.hosts).toBe(4);
    expect(t.links.count).toBe(8);
    expect(t.hopLatency).toBe(0);
    expect(route(t, 1, 2)).toEqual([2, 5]);
    expect(nodesOf(t, route(t, 1, 2))).toEqual(["h1", "switch", "h2"]);
    expect([...t.links.latency.slice(0, 4)]).toEqual([2, 0, 2, 0]);
    expect([...t.links.bandwidth]).toEqual(new Array(8).fill(10 * GB));
    // one message of B bytes alone: latency + B / link
    const B = 1e6;
    const path = route(t, 1, 2);
    const time =
      path.reduce((s, l) => s + t.links.latency[l]!, 0) + B / Math.min(...path.map((l) => t.links.bandwidth[l]!));
    expect(time).toBe(2 + B / (10 * GB));
    expect(t.paths(1, 2)).toEqual([[2, 5]]);
  });

  it("defaults to today's alpha-beta numbers; full:N sizes it; too few hosts is an error", () => {
    const t = parseTopology("full:8", 3);
    expect(t.hosts).toBe(8);
    expect(t.links.latency[0]).toBe(FULL_DEFAULTS.latency);
    expect(t.links.bandwidth[0]).toBe(FULL_DEFAULTS.link);
    expect(() => parseTopology("full:2", 3)).toThrow("--topology: 'full:2' has 2 hosts, fewer than the 3 ranks");
  });
});

describe("ring", () => {
  it("shorter way round, a tie going +", () => {
    const t = parseTopology("ring:6", 6);
    expect(t.links.count).toBe(6 * 2 + 6 * 2);
    expect(t.layout?.kind).toBe("ring");
    expect(nodesOf(t, route(t, 0, 2))).toEqual(["h0", "r0", "r1", "r2", "h2"]);
    expect(nodesOf(t, route(t, 0, 4))).toEqual(["h0", "r0", "r5", "r4", "h4"]);
    expect(nodesOf(t, route(t, 1, 4))).toEqual(["h1", "r1", "r2", "r3", "r4", "h4"]);
    expect(nodesOf(t, route(t, 4, 1))).toEqual(["h4", "r4", "r5", "r0", "r1", "h1"]);
    expect(t.paths(1, 4)).toHaveLength(1);
    const m = parseTopology("ring:6", 6, { routing: "minimal" });
    expect(m.paths(1, 4).map((p) => nodesOf(m, p))).toEqual([
      ["h1", "r1", "r2", "r3", "r4", "h4"],
      ["h1", "r1", "r0", "r5", "r4", "h4"],
    ]);
    expect(m.paths(1, 3)).toHaveLength(1);
  });

  it("injection defaults to the router's outgoing bandwidth; --injection sets it", () => {
    const t = parseTopology("ring", 5, { link: 10 * GB });
    expect(t.name).toBe("ring:5");
    expect(t.links.bandwidth[0]).toBe(20 * GB);
    expect(t.links.kind[0]).toBe("inject");
    expect(t.links.latency[1]).toBe(0);
    expect(parseTopology("ring", 5, { injection: 3 * GB }).links.bandwidth[1]).toBe(3 * GB);
  });

  it("a ring of 2 has one link each way", () => {
    const t = parseTopology("ring:2", 2);
    expect(t.links.count).toBe(4 + 2);
    expectNoParallelLinks(t);
    expect(nodesOf(t, route(t, 1, 0))).toEqual(["h1", "r1", "r0", "h0"]);
  });
});

describe("torus and mesh", () => {
  it("torus 8x8: 8*8*4 network links and 2*64 host links, none parallel", () => {
    const t = parseTopology("torus:8x8", 64);
    expect(t.hosts).toBe(64);
    expect(t.links.count).toBe(8 * 8 * 4 + 2 * 64);
    expect(t.links.kind.filter((k) => k === "x+").length).toBe(64);
    expect(t.links.kind.filter((k) => k === "y-").length).toBe(64);
    expectNoParallelLinks(t);
  });

  it("torus 4x4: dimension order, wrap-around and ties, link by link", () => {
    const t = parseTopology("torus:4x4", 16);
    // links: 0..31 host links (2h inject, 2h+1 eject); router r's x+ x- y+ y- are 32 + 4r + 0..3
    expect(route(t, 0, 2)).toEqual([0, 32, 36, 5]); // tie (2 of 4) goes +: r0 x+, r1 x+
    expect(route(t, 0, 3)).toEqual([0, 33, 7]); // wraps: r0 x- to (3,0)
    expect(route(t, 1, 14)).toEqual([2, 36, 43, 29]); // (1,0) -> (2,0) by x+, then y- wraps to (2,3)
    expect(nodesOf(t, route(t, 5, 15))).toEqual(["h5", "r(1,1)", "r(2,1)", "r(3,1)", "r(3,2)", "r(3,3)", "h15"]); // two ties
    expect(nodesOf(t, route(t, 0, 10))).toEqual(["h0", "r(0,0)", "r(1,0)", "r(2,0)", "r(2,1)", "r(2,2)", "h10"]);
    expect(t.layout?.kind).toBe("grid");
    if (t.layout?.kind === "grid") {
      expect(t.layout.dims).toEqual([4, 4]);
      expect(t.layout.coords(t.hostNode(6))).toEqual([2, 1]);
      expect(t.layout.coords(16 + 6)).toEqual([2, 1]);
    }
    expect(t.groups).toBe(4);
    expect(t.group(6)).toBe(1);
  });

  it("torus with a dimension of 2: one link each way in it, routes use it", () => {
    const t = parseTopology("torus:2x4", 8);
    expect(t.links.count).toBe(8 * 3 + 2 * 8);
    expectNoParallelLinks(t);
    expect(nodesOf(t, route(t, 1, 0))).toEqual(["h1", "r(1,0)", "r(0,0)", "h0"]);
    expect(t.links.kind[route(t, 1, 0)[1]!]).toBe("x+");
    const m = parseTopology("torus:2x4", 8, { routing: "minimal" });
    expect(m.paths(0, 1)).toHaveLength(1); // half way round a ring of 2: one direction only
    expect(m.paths(0, 5)).toHaveLength(2 * 2); // two orders, the y tie both ways
  });

  it("mesh 3x3: no wrap-around, straight along each dimension", () => {
    const t = parseTopology("mesh:3x3", 9);
    expect(t.links.count).toBe(2 * 12 + 2 * 9);
    expectNoParallelLinks(t);
    expect(nodesOf(t, route(t, 0, 8))).toEqual(["h0", "r(0,0)", "r(1,0)", "r(2,0)", "r(2,1)", "r(2,2)", "h8"]);
    expect(nodesOf(t, route(t, 2, 0))).toEqual(["h2", "r(2,0)", "r(1,0)", "r(0,0)", "h0"]);
    // injection: a corner router sends on 2 links, the centre on 4
    expect(t.links.bandwidth[0]).toBe(2 * NETWORK_DEFAULTS.link);
    expect(t.links.bandwidth[2 * 4]).toBe(4 * NETWORK_DEFAULTS.link);
    const m = parseTopology("mesh:3x3", 9, { routing: "minimal" });
    expect(m.paths(0, 8).map((p) => nodesOf(m, p))).toEqual([
      ["h0", "r(0,0)", "r(1,0)", "r(2,0)", "r(2,1)", "r(2,2)", "h8"],
      ["h0", "r(0,0)", "r(0,1)", "r(0,2)", "r(1,2)", "r(2,2)", "h8"],
    ]);
  });

  it("minimal multipath: every order of the moving dimensions, ties both ways", () => {
    const t = parseTopology("torus:4x4x4", 64, { routing: "minimal" });
    const at = (x: number, y: number, z: number) => x + 4 * y + 16 * z;
    expect(t.paths(0, at(1, 1, 1))).toHaveLength(6);
    expect(t.paths(0, at(1, 1, 0))).toHaveLength(2);
    expect(t.paths(0, at(2, 0, 0))).toHaveLength(2);
    expect(t.paths(0, at(2, 2, 1))).toHaveLength(6 * 4);
    expect(t.paths(0, at(2, 2, 2))).toHaveLength(6 * 8);
    for (const p of t.paths(0, at(2, 2, 1))) {
      expectWalk(t, 0, at(2, 2, 1), p);
      expect(p).toHaveLength(5 + 2);
    }
    expect(new Set(t.paths(0, at(2, 2, 1)).map((p) => p.join())).size).toBe(24);
    // dor (the default) is one path, the same as route()
    const d = parseTopology("torus:4x4x4", 64);
    expect(d.paths(0, at(2, 2, 1))).toEqual([route(d, 0, at(2, 2, 1))]);
  });

  it("minimal routing refuses a torus whose messages would split over more than 4096 paths", () => {
    expect(parseTopology("torus:4x4x4x4x4", 1, { routing: "minimal" }).paths(0, 2 + 8 + 32 + 128 + 512)).toHaveLength(
      120 * 32,
    );
    expect(() => parseTopology("torus:4x4x4x4x4x4", 1, { routing: "minimal" })).toThrow(
      "--routing: minimal on 'torus:4x4x4x4x4x4' splits a message over up to 46080 paths",
    );
    expect(parseTopology("torus:3x3x3x3x3x3", 1, { routing: "minimal" }).hosts).toBe(729);
  });

  it("property: a connected walk of minimal length, on tori and meshes of 1 to 4 dimensions", () => {
    const shape = fc.record({
      dims: fc.array(fc.integer({ min: 2, max: 6 }), { minLength: 1, maxLength: 4 }),
      mesh: fc.boolean(),
      minimal: fc.boolean(),
      a: fc.nat(),
      b: fc.nat(),
    });
    fc.assert(
      fc.property(shape, ({ dims, mesh, minimal, a, b }) => {
        const spec = `${mesh ? "mesh" : "torus"}:${dims.join("x")}`;
        const R = dims.reduce((x, y) => x * y, 1);
        const t = parseTopology(spec, 1, minimal ? { routing: "minimal" } : {});
        const ha = a % R;
        const hb = b % R === ha ? (ha + 1) % R : b % R;
        let hops = 2;
        let moving = 0;
        let ties = 0;
        for (let d = 0, s = 1; d < dims.length; s *= dims[d]!, d++) {
          const A = dims[d]!;
          const delta = Math.abs((Math.floor(hb / s) % A) - (Math.floor(ha / s) % A));
          const dist = mesh ? delta : Math.min(delta, A - delta);
          hops += dist;
          if (dist > 0) moving++;
          if (!mesh && A > 2 && 2 * delta === A) ties++;
        }
        const one = route(parseTopology(spec, 1), ha, hb);
        expectWalk(t, ha, hb, one);
        expect(one).toHaveLength(hops);
        const all = t.paths(ha, hb);
        let fact = 1;
        for (let k = 2; k <= moving; k++) fact *= k;
        expect(all).toHaveLength(minimal ? fact * 2 ** ties : 1);
        for (const p of all) {
          expectWalk(t, ha, hb, p);
          expect(p).toHaveLength(hops);
        }
        expect(new Set(all.map((p) => p.join())).size).toBe(all.length);
      }),
      { numRuns: 300 },
    );
  });
});

describe("fat-tree", () => {
  it("two levels: link counts, same leaf, other leaf through a spine", () => {
    const t = parseTopology("fattree:leaves=4,hosts=4,spines=2", 16);
    expect(t.name).toBe("fattree:leaves=4,hosts=4,spines=2");
    expect(t.hosts).toBe(16);
    expect(t.links.count).toBe(16 * 2 + 4 * 2 * 2);
    expectNoParallelLinks(t);
    expect(route(t, 0, 3)).toEqual([0, 7]);
    expect(nodesOf(t, route(t, 0, 3))).toEqual(["h0", "leaf0", "h3"]);
    const p = nodesOf(t, route(t, 0, 5));
    expect(p).toHaveLength(5);
    expect([p[0], p[1], p[3], p[4]]).toEqual(["h0", "leaf0", "leaf1", "h5"]);
    expect(p[2]).toMatch(/^spine[01]$/);
    expect(t.groups).toBe(4);
    expect(t.group(5)).toBe(1);
    expect(t.groupName).toBe("leaf");
  });

  it("ECMP: deterministic per pair, and spread over every spine", () => {
    const t = parseTopology("fattree:leaves=8,hosts=8,spines=8", 64);
    const used = new Map<string, number>();
    for (let a = 0; a < 64; a++)
      for (let b = 0; b < 64; b++) {
        if (Math.floor(a / 8) === Math.floor(b / 8)) continue;
        const r = route(t, a, b);
        expect(route(t, a, b)).toEqual(r);
        const spine = nodesOf(t, r)[2]!;
        used.set(spine, (used.get(spine) ?? 0) + 1);
      }
    expect([...used.keys()].sort()).toEqual(Array.from({ length: 8 }, (_, s) => `spine${s}`).sort());
    // 3584 pairs over 8 spines: each gets 448 on average; a hash should not be lopsided
    for (const n of used.values()) expect(n).toBeGreaterThan(300);
  });

  it("spray: every spine, the same leaf one path", () => {
    const t = parseTopology("fattree:leaves=4,hosts=4,spines=3", 16, { routing: "spray" });
    const ps = t.paths(0, 9);
    expect(ps).toHaveLength(3);
    expect(ps.map((p) => nodesOf(t, p)[2])).toEqual(["spine0", "spine1", "spine2"]);
    for (const p of ps) expectWalk(t, 0, 9, p);
    expect(t.paths(0, 1)).toEqual([[0, 3]]);
  });

  it("oversubscription thins the uplinks: a leaf's uplinks carry hosts*link/over", () => {
    const t = parseTopology("fattree:leaves=2,hosts=4,spines=2,over=2", 8, { link: 10 * GB });
    expect(t.name).toBe("fattree:leaves=2,hosts=4,spines=2,over=2");
    const up = t.links.kind.indexOf("up");
    expect(t.links.bandwidth[up]).toBe((4 * 10 * GB) / (2 * 2));
    expect(t.links.bandwidth[0]).toBe(10 * GB);
  });

  it("sized from the rank count: leaves of 16 hosts, 16 spines", () => {
    const t = parseTopology("fattree", 40);
    expect(t.name).toBe("fattree:leaves=3,hosts=16,spines=16");
    expect(t.hosts).toBe(48);
  });

  it("k-ary (k=4): 16 hosts, 8 edge, 8 aggregation, 4 core; paths of 2, 4 and 6 links", () => {
    const t = parseTopology("fattree:k=4", 16);
    expect(t.hosts).toBe(16);
    expect(t.nodeCount).toBe(16 + 8 + 8 + 4);
    expect(t.links.count).toBe(32 + 32 + 32);
    expectNoParallelLinks(t);
    expect(nodesOf(t, route(t, 0, 1))).toEqual(["h0", "edge0", "h1"]);
    const samePod = nodesOf(t, route(t, 0, 2));
    expect([samePod[0], samePod[1], samePod[3], samePod[4]]).toEqual(["h0", "edge0", "edge1", "h2"]);
    expect(samePod[2]).toMatch(/^agg[01]$/);
    const far = nodesOf(t, route(t, 0, 15));
    expect(far).toHaveLength(7);
    expect(far[3]).toMatch(/^core[0-3]$/);
    expect(far[5]).toBe("edge7");
    const s = parseTopology("fattree:k=4", 16, { routing: "spray" });
    expect(s.paths(0, 2)).toHaveLength(2);
    expect(s.paths(0, 15)).toHaveLength(4);
    expect(new Set(s.paths(0, 15).map((p) => nodesOf(s, p)[3])).size).toBe(4);
    for (const p of s.paths(0, 15)) expectWalk(s, 0, 15, p);
  });

  it("k-ary ECMP covers every aggregation switch and core over many pairs", () => {
    const t = parseTopology("fattree:k=8", 128);
    const cores = new Set<string>();
    const aggs = new Set<string>();
    for (
      let a = 0;
      a < 16;
      a++ // pod 0: 16 hosts
    )
      for (let b = 16; b < 128; b++) {
        const n = nodesOf(t, route(t, a, b));
        aggs.add(n[2]!);
        cores.add(n[3]!);
      }
    expect(cores.size).toBe(16);
    expect(aggs.size).toBe(4); // pod 0's four aggregation switches
  });

  it("property: up/down routes are connected walks of 2, 4 or 6 links", () => {
    const t2 = parseTopology("fattree:leaves=6,hosts=5,spines=3", 30);
    const t3 = parseTopology("fattree:k=6", 54);
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (x, y) => {
        for (const t of [t2, t3]) {
          const a = x % t.hosts;
          const b = y % t.hosts === a ? (a + 1) % t.hosts : y % t.hosts;
          const r = route(t, a, b);
          expectWalk(t, a, b, r);
          const leafA = t.group(a);
          const leafB = t.group(b);
          const podOf = (h: number) => Math.floor(h / 9); // k=6: 9 hosts per pod
          const expected = leafA === leafB ? 2 : t === t2 || podOf(a) === podOf(b) ? 4 : 6;
          expect(r).toHaveLength(expected);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("rail-optimized GPU system", () => {
  it("rail:2x4: NVLink inside a node, the rail across nodes, spines across rails", () => {
    const t = parseTopology("rail:2x4", 8);
    expect(t.hosts).toBe(8);
    expect(t.nodeCount).toBe(8 + 2 + 4 + 2);
    expect(t.links.count).toBe(8 * 4 + 4 * 2 * 2);
    expectNoParallelLinks(t);
    expect(route(t, 0, 3)).toEqual([0, 13]);
    expect(nodesOf(t, route(t, 0, 3))).toEqual(["gpu0", "nvswitch0", "gpu3"]);
    expect(route(t, 1, 5)).toEqual([6, 23]);
    expect(nodesOf(t, route(t, 1, 5))).toEqual(["gpu1", "rail1", "gpu5"]);
    const cross = nodesOf(t, route(t, 1, 6));
    expect([cross[0], cross[1], cross[3], cross[4]]).toEqual(["gpu1", "rail1", "rail2", "gpu6"]);
    expect(cross[2]).toMatch(/^spine[01]$/);
    expect(t.links.bandwidth[0]).toBe(NETWORK_DEFAULTS.nvlink);
    expect(t.links.bandwidth[2]).toBe(NETWORK_DEFAULTS.nic);
    expect(t.groups).toBe(2);
    expect(t.group(5)).toBe(1);
    expect(t.groupName).toBe("node");
  });

  it("pxn: NVLink to the GPU on the destination's rail, then its rail", () => {
    const t = parseTopology("rail:2x4", 8, { routing: "pxn" });
    expect(route(t, 1, 6)).toEqual([4, 9, 10, 27]);
    expect(nodesOf(t, route(t, 1, 6))).toEqual(["gpu1", "nvswitch0", "gpu2", "rail2", "gpu6"]);
    expect(nodesOf(t, route(t, 1, 5))).toEqual(["gpu1", "rail1", "gpu5"]);
  });

  it("spray over every spine; ECMP covers every spine over many pairs", () => {
    const s = parseTopology("rail:4x4,spines=3", 16, { routing: "spray" });
    expect(s.name).toBe("rail:4x4,spines=3");
    expect(s.paths(0, 5).map((p) => nodesOf(s, p)[2])).toEqual(["spine0", "spine1", "spine2"]);
    expect(s.paths(0, 4)).toHaveLength(1);
    const e = parseTopology("rail:16x8", 128);
    const spines = new Set<string>();
    for (let a = 0; a < 128; a++)
      for (let b = 0; b < 128; b++)
        if (Math.floor(a / 8) !== Math.floor(b / 8) && a % 8 !== b % 8) spines.add(nodesOf(e, route(e, a, b))[2]!);
    expect(spines.size).toBe(16);
  });

  it("over=2 halves the spine uplinks; `rail` alone is nodes of 8 sized from the ranks", () => {
    const t = parseTopology("rail:4x2,over=2", 8);
    expect(t.links.bandwidth[t.links.kind.indexOf("up")]).toBe(NETWORK_DEFAULTS.nic / 2);
    expect(parseTopology("rail", 20).name).toBe("rail:3x8");
  });
});

describe("paths() under the default (single-path) rules", () => {
  it.each([
    "full:12",
    "ring:12",
    "torus:3x4",
    "mesh:4x3",
    "fattree:leaves=3,hosts=4,spines=2",
    "fattree:k=4",
    "rail:3x4",
    "examples/topologies/two-leaves.json",
  ])("%s: one path, a walk, the same each time", (spec) => {
    const t = parseTopology(spec, 4);
    for (let a = 0; a < t.hosts; a++)
      for (let b = 0; b < t.hosts; b++) {
        if (a === b) continue;
        const r = route(t, a, b);
        expectWalk(t, a, b, r);
        expect(t.paths(a, b)).toEqual([r]);
      }
  });
});

describe("describeTopology", () => {
  it("sizes, each kind of link, the hop latency and the routing rule", () => {
    expect(describeTopology(parseTopology("torus:4x4", 16))).toEqual([
      "torus:4x4: 16 hosts, 16 switches, 96 links",
      "  inject  16 × 200 GB/s, 100 ns",
      "  eject   16 × 200 GB/s, 0 µs",
      "  x+      16 × 50 GB/s, 100 ns",
      "  x-      16 × 50 GB/s, 100 ns",
      "  y+      16 × 50 GB/s, 100 ns",
      "  y-      16 × 50 GB/s, 100 ns",
      "hop latency 100 ns; routing: dimension order (dimension 0 first), the shorter way round each ring, a tie going +",
      "injection: each host drives its router's 4 outgoing links at once (a port per direction): up to 4 × the link bandwidth out, and in",
    ]);
    expect(describeTopology(parseTopology("mesh:3x3", 9))[1]).toBe("  inject  9 × 100 GB/s to 200 GB/s, 100 ns");
  });
});

describe("layouts for the heat maps", () => {
  const levels = (t: Topology) => {
    if (t.layout?.kind !== "levels") throw new Error(`${t.name}: expected a levels layout`);
    const { level, index } = t.layout;
    return Array.from({ length: t.nodeCount }, (_, v) => `${t.nodeName(v)}@${level(v)}.${index(v)}`);
  };

  it("full, fat-trees, rail and files draw in levels, hosts at the bottom", () => {
    expect(levels(parseTopology("full", 2))).toEqual(["h0@0.0", "h1@0.1", "switch@1.0"]);
    expect(levels(parseTopology("fattree:leaves=2,hosts=1,spines=2", 2))).toEqual([
      "h0@0.0",
      "h1@0.1",
      "leaf0@1.0",
      "leaf1@1.1",
      "spine0@2.0",
      "spine1@2.1",
    ]);
    expect(levels(parseTopology("fattree:k=2", 2))).toEqual([
      "h0@0.0",
      "h1@0.1",
      "edge0@1.0",
      "edge1@1.1",
      "agg0@2.0",
      "agg1@2.1",
      "core0@3.0",
    ]);
    expect(levels(parseTopology("rail:2x1", 2))).toEqual([
      "gpu0@0.0",
      "gpu1@0.1",
      "nvswitch0@1.0",
      "nvswitch1@1.1",
      "rail0@2.0",
      "spine0@3.0",
      "spine1@3.1",
    ]);
    expect(levels(parseTopology("examples/topologies/two-leaves.json", 4))).toEqual([
      "h0@0.0",
      "h1@0.1",
      "h2@0.2",
      "h3@0.3",
      "leaf0@1.0",
      "leaf1@1.1",
      "spine@2.0",
    ]);
  });
});

describe("spec errors", () => {
  it.each([
    ["tours:8x8", "unknown topology 'tours' (did you mean 'torus'?)"],
    ["torus", "torus needs its dimensions"],
    ["torus:8x1", "dimension 1 must be a whole number >= 2, got '1'"],
    ["torus:8xx8", "expected dimensions like 8x8"],
    ["mesh:axb", "dimension 0 must be a whole number"],
    ["fattree:k=5", "k must be even"],
    ["fattree:leafs=4", "unknown parameter 'leafs' (did you mean 'leaves'?)"],
    ["fattree:k=4,hosts=2", "leave out hosts="],
    ["fattree:over=0", "over must be a positive number"],
    ["rail:16", "expected rail:NODESxG"],
    ["torus:100000x100000", "the model builds at most"],
  ])("%s", (spec, message) => {
    expect(() => parseTopology(spec, 4)).toThrow(InvalidArgumentError);
    expect(() => parseTopology(spec, 4)).toThrow(message);
    expect(() => parseTopology(spec, 4)).toThrow(/^--topology: /);
  });

  it("an unknown routing rule names --routing and the family's rules", () => {
    expect(() => parseTopology("torus:4x4", 16, { routing: "minimall" })).toThrow(
      "--routing: 'minimall' is not a routing rule of torus (did you mean 'minimal'?); it has dor, minimal",
    );
    expect(() => parseTopology("fattree", 16, { routing: "dor" })).toThrow(/it has ecmp, spray/);
  });

  it("bad link options name their flag", () => {
    expect(() => parseTopology("full", 4, { link: 0 })).toThrow(/^--link: /);
    expect(() => parseTopology("full", 4, { latency: -1 })).toThrow(/^--latency: /);
  });

  it("routes need two distinct hosts in range", () => {
    const t = parseTopology("torus:4x4", 16);
    expect(() => route(t, 3, 3)).toThrow(InvalidArgumentError);
    expect(() => route(t, 0, 16)).toThrow("host 16 is not in 0..15");
  });

  it("the help lists every family", () => {
    for (const f of ["full", "ring", "torus", "mesh", "fattree", "rail", "file:"]) expect(TOPOLOGY_HELP).toContain(f);
  });
});

describe("topology files", () => {
  const dir = mkdtempSync(join(tmpdir(), "cclab-topo-"));
  const write = (name: string, doc: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, typeof doc === "string" ? doc : JSON.stringify(doc));
    return path;
  };
  const hostsAndSwitch = [
    { name: "a", kind: "host" },
    { name: "b", kind: "host" },
    { name: "s", kind: "switch" },
  ];

  it("the shipped example: routes by fewest hops, its own placement, units parsed", () => {
    const t = parseTopology("examples/topologies/two-leaves.json", 4);
    expect(t.family).toBe("file");
    expect(t.hosts).toBe(4);
    expect(t.links.count).toBe(12);
    expect(t.hopLatency).toBeCloseTo(0.1, 12);
    expect(route(t, 0, 3)).toEqual([0, 8, 11, 7]);
    expect(nodesOf(t, route(t, 0, 3))).toEqual(["h0", "leaf0", "spine", "leaf1", "h3"]);
    expect(route(t, 0, 1)).toEqual([0, 3]);
    expect(t.links.bandwidth[0]).toBe(50 * GB);
    expect(t.links.bandwidth[8]).toBe(25 * GB);
    expect(t.links.latency[8]).toBeCloseTo(0.5, 12);
    expect([...placeRanks(t, 4)]).toEqual([0, 2, 1, 3]);
    expect([...placeRanks(t, 4, "block")]).toEqual([0, 1, 2, 3]);
    expect(t.groups).toBe(2);
    expect([...placeRanks(t, 4, "round-robin")]).toEqual([0, 2, 1, 3]);
    expect(parseTopology("file:examples/topologies/two-leaves.json", 2).name).toBe(
      "two leaves, one spine, a slow uplink",
    );
  });

  it("defaults, simplex links, and no transit through hosts unless allowed", () => {
    const path = write("line.json", {
      nodes: [
        { name: "a", kind: "host" },
        { name: "b", kind: "host" },
        { name: "c", kind: "host" },
      ],
      links: [
        { from: "a", to: "b" },
        { from: "b", to: "c", duplex: false },
      ],
    });
    const t = parseTopology(path, 3, { link: 7 * GB, latency: 0.25 });
    expect(t.links.count).toBe(3);
    expect(t.links.bandwidth[0]).toBe(7 * GB);
    expect(t.links.latency[2]).toBe(0.25);
    expect(route(t, 1, 2)).toEqual([2]);
    expect(() => route(t, 0, 2)).toThrow(`no route from host 'a' to host 'c'`);
    expect(() => route(t, 2, 1)).toThrow(`no route from host 'c' to host 'b'`);
    const fwd = write("line-forward.json", {
      hostsForward: true,
      nodes: [
        { name: "a", kind: "host" },
        { name: "b", kind: "host" },
        { name: "c", kind: "host" },
      ],
      links: [
        { from: "a", to: "b" },
        { from: "b", to: "c", duplex: false },
      ],
    });
    expect(route(parseTopology(fwd, 3), 0, 2)).toEqual([0, 2]);
  });

  it("ties go to the path through the lower link ids", () => {
    const path = write("two-ways.json", {
      nodes: [...hostsAndSwitch, { name: "t", kind: "switch" }],
      links: [
        { from: "a", to: "t" },
        { from: "a", to: "s" },
        { from: "b", to: "s" },
        { from: "b", to: "t" },
      ],
    });
    const t = parseTopology(path, 2);
    expect(nodesOf(t, route(t, 0, 1))).toEqual(["a", "t", "b"]);
    expect(nodesOf(t, route(t, 1, 0))).toEqual(["b", "s", "a"]);
  });

  it.each([
    ["not-json.json", "{nodes", "not valid JSON"],
    ["array.json", [], "expected a JSON object"],
    ["no-nodes.json", { links: [] }, "nodes: expected a non-empty array"],
    ["typo.json", { nodes: hostsAndSwitch, links: [], ranx: [] }, "unknown field 'ranx' (did you mean 'ranks'?)"],
    [
      "kind.json",
      { nodes: [{ name: "a", kind: "gpu" }], links: [] },
      'nodes[0].kind: expected "host" or "switch", got "gpu"',
    ],
    [
      "dup.json",
      { nodes: [...hostsAndSwitch, { name: "a", kind: "host" }], links: [] },
      "nodes[3].name: 'a' is already nodes[0]",
    ],
    ["no-host.json", { nodes: [{ name: "s", kind: "switch" }], links: [] }, 'no node has kind "host"'],
    ["from.json", { nodes: hostsAndSwitch, links: [{ from: "x", to: "s" }] }, "links[0].from: no node named 'x'"],
    [
      "bw.json",
      {
        nodes: hostsAndSwitch,
        links: [
          { from: "a", to: "s" },
          { from: "b", to: "s", bandwidth: "fast" },
        ],
      },
      "links[1].bandwidth: expected a bandwidth like 400Gb/s or 50GB/s, got 'fast'",
    ],
    [
      "lat.json",
      { nodes: hostsAndSwitch, links: [{ from: "a", to: "s", latency: 5 }] },
      "links[0].latency: expected a time like 100ns, 1.5us or 2ms, got 5",
    ],
    ["self.json", { nodes: hostsAndSwitch, links: [{ from: "s", to: "s" }] }, "links[0]: a link from 's' to itself"],
    [
      "linkfield.json",
      { nodes: hostsAndSwitch, links: [{ from: "a", to: "s", bandwith: "1GB/s" }] },
      "links[0]: unknown field 'bandwith' (did you mean 'bandwidth'?)",
    ],
    ["rank-switch.json", { nodes: hostsAndSwitch, links: [], ranks: ["s"] }, "ranks[0]: 's' is a switch"],
    [
      "rank-dup.json",
      { nodes: hostsAndSwitch, links: [], ranks: ["a", "a"] },
      "ranks[1]: host 'a' already holds rank 0",
    ],
  ])("%s is refused with a message naming the file, the entry and the field", (name, doc, message) => {
    const path = write(name, doc);
    expect(() => parseTopology(path, 1)).toThrow(InvalidArgumentError);
    expect(() => parseTopology(path, 1)).toThrow(`--topology: ${path}: `);
    expect(() => parseTopology(path, 1)).toThrow(message);
  });

  it("a missing file, too few hosts", () => {
    expect(() => parseTopology(join(dir, "absent.json"), 1)).toThrow(/^--topology: cannot read .*absent\.json/);
    const path = write("two.json", { nodes: hostsAndSwitch, links: [] });
    expect(() => parseTopology(path, 3)).toThrow("has 2 hosts, fewer than the 3 ranks");
  });
});

describe("placement", () => {
  it("block fills a group first; round-robin deals across groups", () => {
    const t = parseTopology("rail:3x2", 6);
    expect([...placeRanks(t, 6, "block")]).toEqual([0, 1, 2, 3, 4, 5]);
    expect([...placeRanks(t, 6, "round-robin")]).toEqual([0, 2, 4, 1, 3, 5]);
    expect([...placeRanks(t, 4, "round-robin")]).toEqual([0, 2, 4, 1]);
    expect([...placeRanks(t, 3)]).toEqual([0, 1, 2]);
  });

  it("round-robin on a torus deals across rows; on a ring it is block", () => {
    const t = parseTopology("torus:4x2", 8);
    expect([...placeRanks(t, 8, "round-robin")]).toEqual([0, 4, 1, 5, 2, 6, 3, 7]);
    const r = parseTopology("ring:5", 5);
    expect([...placeRanks(r, 5, "round-robin")]).toEqual([0, 1, 2, 3, 4]);
  });

  it("round-robin skips a group that is full", () => {
    const path = join(mkdtempSync(join(tmpdir(), "cclab-place-")), "uneven.json");
    writeFileSync(
      path,
      JSON.stringify({
        nodes: [
          { name: "a", kind: "host", group: "x" },
          { name: "b", kind: "host", group: "x" },
          { name: "c", kind: "host", group: "y" },
          { name: "d", kind: "host", group: "x" },
        ],
        links: [],
      }),
    );
    expect([...placeRanks(parseTopology(path, 4), 4, "round-robin")]).toEqual([0, 2, 1, 3]);
  });

  it("from a file: a JSON array or one host per line, validated", () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-place-"));
    const t = parseTopology("torus:4x4", 16);
    const json = join(dir, "p.json");
    writeFileSync(json, "[15, 0, 7]");
    expect([...placeRanks(t, 3, `file:${json}`)]).toEqual([15, 0, 7]);
    const lines = join(dir, "p.txt");
    writeFileSync(lines, "3\n2\n1\n");
    expect([...placeRanks(t, 3, `file:${lines}`)]).toEqual([3, 2, 1]);
    writeFileSync(lines, "3\n3\n1\n");
    expect(() => placeRanks(t, 3, `file:${lines}`)).toThrow(`--placement: ${lines}: ranks 0 and 1 are both on host 3`);
    writeFileSync(lines, "3\n16\n1\n");
    expect(() => placeRanks(t, 3, `file:${lines}`)).toThrow(
      'rank 1: expected a host index in 0..15 (torus:4x4), got "16"',
    );
    expect(() => placeRanks(t, 4, `file:${json}`)).toThrow("has 3 entries, one per rank is needed: 4");
    expect(() => placeRanks(t, 3, `file:${join(dir, "none")}`)).toThrow(/^--placement: cannot read/);
  });

  it("unknown placement, too many ranks", () => {
    const t = parseTopology("torus:4x4", 16);
    expect(() => placeRanks(t, 4, "roundrobin")).toThrow(
      "--placement: unknown placement 'roundrobin' (did you mean 'round-robin'?)",
    );
    expect(() => placeRanks(t, 17, "block")).toThrow("'torus:4x4' has 16 hosts, fewer than the 17 ranks to place");
  });
});

describe("16,384 hosts", () => {
  it.each([
    ["torus:128x128", 16384, 128 * 128 * 4 + 2 * 16384],
    ["torus:16x32x32", 16384, 16384 * 6 + 2 * 16384],
    ["mesh:128x128", 16384, 2 * 2 * 128 * 127 + 2 * 16384],
    ["fattree", 16384, 2 * 16384 + 2 * 1024 * 16],
    ["fattree:k=42", 42 ** 3 / 4, 2 * (42 ** 3 / 4) * 3],
    ["rail:2048x8", 16384, 4 * 16384 + 2 * 8 * 2048],
    ["full", 16384, 2 * 16384],
  ])("%s: hosts and links", (spec, hosts, links) => {
    const t = parseTopology(spec, 16384);
    expect(t.hosts).toBe(hosts);
    expect(t.links.count).toBe(links);
    const r = route(t, 0, 16383);
    expectWalk(t, 0, 16383, r);
  });
});

describe("the family registry", () => {
  it("every family file's family is registered, and --topology's help and routing rules come from them", () => {
    const names = FAMILIES.map((f) => f.name);
    for (const f of ["full", "ring", "torus", "mesh", "fattree", "rail", "file"]) expect(names).toContain(f);
    for (const f of FAMILIES) {
      for (const [syntax, what] of f.help) {
        expect(TOPOLOGY_HELP).toContain(syntax);
        expect(TOPOLOGY_HELP).toContain(what);
      }
      expect(ROUTINGS[f.name]).toEqual(f.routings);
      // Its bare name builds it (sized from the ranks), or is refused naming --topology and what to write.
      const spec = f.name === "file" ? "examples/topologies/two-leaves.json" : f.name;
      let built: string | undefined;
      try {
        built = parseTopology(spec, 2).family;
      } catch (e) {
        expect(String(e)).toMatch(/--topology: '.*': .* (needs|expected)/);
        built = parseTopology(`${f.name}:2x2`, 2).family;
      }
      expect(built).toBe(f.name);
    }
  });

  it("parseTopologyShape: the family and dimensions of a --topology value, nothing built", () => {
    expect(parseTopologyShape("torus:8x4x2")).toMatchObject({
      family: "torus",
      name: "torus:8x4x2",
      hosts: 64,
      dims: [8, 4, 2],
    });
    expect(parseTopologyShape("Mesh:4x4")).toMatchObject({ family: "mesh", dims: [4, 4] });
    expect(parseTopologyShape("ring", 12)).toMatchObject({ family: "ring", hosts: 12, dims: [12] });
    expect(parseTopologyShape("fattree:k=4")).toMatchObject({ family: "fattree", hosts: 16 });
    expect(parseTopologyShape("fattree:k=4").dims).toBeUndefined();
    expect(() => parseTopologyShape("torus:100000x100000")).toThrow("would have 10000000000 hosts");
    expect(() => parseTopologyShape("tours:4x4")).toThrow("unknown topology 'tours' (did you mean 'torus'?)");
  });

  it("a routing rule another family has is refused, naming the family's own rules", () => {
    expect(() => parseTopology("torus:4x4", 16, { routing: "ecmp" })).toThrow(
      "--routing: 'ecmp' is not a routing rule of torus; it has dor, minimal",
    );
    expect(parseTopology("ring:8", 8, { routing: "dor" }).routing).toContain("shorter way round the ring");
  });
});
