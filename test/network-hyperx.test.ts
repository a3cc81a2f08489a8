/**
 * The HyperX family (src/model/network/families/hyperx.ts): its link counts, its dimension-order
 * routes checked by hand and as a property (one hop per differing coordinate), its errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseTopology, parseTopologyShape, TOPOLOGY_HELP } from "../src/model/network/topology.js";
import type { Topology } from "../src/model/network/types.js";

const nodesOf = (t: Topology, path: readonly number[]): string[] => [
  t.nodeName(t.links.from[path[0]!]!),
  ...path.map((l) => t.nodeName(t.links.to[l]!)),
];
const one = (t: Topology, a: number, b: number): readonly number[] => {
  const all = t.paths(a, b);
  expect(all).toHaveLength(1);
  return all[0]!;
};

describe("hyperx", () => {
  it("is a registered family; its shape has its dimensions", () => {
    expect(TOPOLOGY_HELP).toContain("hyperx:AxB[xC...]");
    expect(parseTopologyShape("hyperx:4x3x2")).toMatchObject({ family: "hyperx", hosts: 24, dims: [4, 3, 2] });
  });

  it("every dimension fully connected: sum(A - 1) links out of each router", () => {
    const t = parseTopology("hyperx:4x3", 12);
    const count = (k: string) => t.links.kind.filter((x) => x === k).length;
    expect(count("x")).toBe(12 * 3);
    expect(count("y")).toBe(12 * 2);
    expect(t.links.count).toBe(24 + 60);
    // the host drives its router's 5 links at once
    expect(t.links.bandwidth[0]).toBe(5 * t.links.bandwidth[24]!);
    expect(t.injectionLimit).toContain("5 outgoing links at once");
    expect(parseTopology("hyperx:4x3", 12, { injection: 1000 }).links.bandwidth[0]).toBe(1000);
  });

  it("routes by hand: one hop per differing coordinate, dimension 0 first", () => {
    const t = parseTopology("hyperx:4x3", 12);
    expect(nodesOf(t, one(t, 0, 3))).toEqual(["h0", "r(0,0)", "r(3,0)", "h3"]);
    expect(nodesOf(t, one(t, 0, 8))).toEqual(["h0", "r(0,0)", "r(0,2)", "h8"]);
    expect(nodesOf(t, one(t, 1, 10))).toEqual(["h1", "r(1,0)", "r(2,0)", "r(2,2)", "h10"]);
    expect(nodesOf(t, one(t, 10, 1))).toEqual(["h10", "r(2,2)", "r(1,2)", "r(1,0)", "h1"]);
  });

  it("property: a connected walk of (differing coordinates) router hops", () => {
    const shape = fc.record({
      dims: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
      a: fc.nat(),
      b: fc.nat(),
    });
    fc.assert(
      fc.property(shape, ({ dims, a, b }) => {
        const t = parseTopology(`hyperx:${dims.join("x")}`, 1);
        if (t.hosts < 2) return;
        const ha = a % t.hosts;
        const hb = b % t.hosts === ha ? (ha + 1) % t.hosts : b % t.hosts;
        const p = one(t, ha, hb);
        expect(t.links.from[p[0]!]).toBe(t.hostNode(ha));
        for (let i = 1; i < p.length; i++) expect(t.links.from[p[i]!]).toBe(t.links.to[p[i - 1]!]);
        expect(t.links.to[p[p.length - 1]!]).toBe(t.hostNode(hb));
        let differing = 0;
        for (let d = 0, s = 1; d < dims.length; s *= dims[d]!, d++)
          if (Math.floor(ha / s) % dims[d]! !== Math.floor(hb / s) % dims[d]!) differing++;
        expect(p.length).toBe(differing + 2);
      }),
      { numRuns: 300 },
    );
  });

  it("errors name --topology and what to write", () => {
    expect(() => parseTopology("hyperx", 4)).toThrow(
      "--topology: 'hyperx': hyperx needs its dimensions, e.g. hyperx:8x8",
    );
    expect(() => parseTopology("hyperx:4x", 4)).toThrow("expected dimensions like 8x8");
    expect(() => parseTopology("hyperx:2x2", 5)).toThrow("has 4 hosts, fewer than the 5 ranks");
    expect(() => parseTopology("hyperx:4x4", 16, { routing: "minimal" })).toThrow("it has dor");
    expect(() => parseTopology("hyperx:3000x3000", 1)).toThrow("would have 9000000 hosts");
  });
});
