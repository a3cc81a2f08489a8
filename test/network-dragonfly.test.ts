/**
 * The dragonfly family (src/model/network/families/dragonfly.ts): its shape and link counts, its
 * minimal routes (local, global, local) checked by hand and as a property over random shapes,
 * the global links' placement, and its errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseTopology, parseTopologyShape, TOPOLOGY_HELP } from "../src/model/network/topology.js";
import type { Topology } from "../src/model/network/types.js";

const nodesOf = (t: Topology, path: readonly number[]): string[] => [
  t.nodeName(t.links.from[path[0]!]!),
  ...path.map((l) => t.nodeName(t.links.to[l]!)),
];
const kindsOf = (t: Topology, path: readonly number[]) => path.map((l) => t.links.kind[l]);
const one = (t: Topology, a: number, b: number): readonly number[] => {
  const all = t.paths(a, b);
  expect(all).toHaveLength(1);
  return all[0]!;
};

describe("dragonfly", () => {
  it("is a registered family with its help", () => {
    expect(TOPOLOGY_HELP).toContain("dragonfly[:groups=G,routers=A,hosts=P,global=C]");
    expect(parseTopologyShape("dragonfly:groups=6")).toMatchObject({
      family: "dragonfly",
      name: "dragonfly:groups=6,routers=16,hosts=16,global=1",
      hosts: 6 * 16 * 16,
    });
  });

  it("groups of all-to-all routers, every pair of groups joined by C global links each way", () => {
    const t = parseTopology("dragonfly:groups=5,routers=4,hosts=2,global=2", 40);
    expect(t.hosts).toBe(40);
    expect(t.nodeCount).toBe(40 + 20);
    const count = (k: string) => t.links.kind.filter((x) => x === k).length;
    expect(count("inject")).toBe(40);
    expect(count("eject")).toBe(40);
    expect(count("local")).toBe(5 * 4 * 3);
    expect(count("global")).toBe(5 * 4 * 2);
    // every ordered pair of groups has exactly C = 2 global links, from a router of the one to a router of the other
    const pairs = new Map<string, number>();
    for (let l = 0; l < t.links.count; l++) {
      if (t.links.kind[l] !== "global") continue;
      const g = (node: number) => Math.floor((node - 40) / 4);
      const key = `${g(t.links.from[l]!)}>${g(t.links.to[l]!)}`;
      pairs.set(key, (pairs.get(key) ?? 0) + 1);
    }
    expect(pairs.size).toBe(20);
    for (const n of pairs.values()) expect(n).toBe(2);
    expect(t.groups).toBe(5);
    expect(t.group(17)).toBe(2);
    expect(t.hashed).toBe(true);
    expect(parseTopology("dragonfly:groups=3", 1).hashed).toBeUndefined();
  });

  it("routes by hand: same router, same group, other group", () => {
    const t = parseTopology("dragonfly:groups=3,routers=3,hosts=2", 18);
    expect(nodesOf(t, one(t, 0, 1))).toEqual(["h0", "g0r0", "h1"]);
    expect(nodesOf(t, one(t, 0, 4))).toEqual(["h0", "g0r0", "g0r2", "h4"]);
    // group 0's link to group 1 sits on router 0, group 1's to group 0 on router 0
    expect(nodesOf(t, one(t, 0, 6))).toEqual(["h0", "g0r0", "g1r0", "h6"]);
    // from g0r1: local to g0r1 (holds group 2's link: i = 1), global to g2r1 (group 2's link to group 0... i = 0 -> r0)
    expect(nodesOf(t, one(t, 2, 17))).toEqual(["h2", "g0r1", "g2r0", "g2r2", "h17"]);
    expect(kindsOf(t, one(t, 4, 14))).toEqual(["inject", "local", "global", "local", "eject"]);
    expect(kindsOf(t, one(t, 4, 12))).toEqual(["inject", "local", "global", "eject"]);
  });

  it("property: a connected walk with at most one global link and three router-to-router hops", () => {
    const shape = fc.record({
      groups: fc.integer({ min: 1, max: 6 }),
      routers: fc.integer({ min: 1, max: 5 }),
      hosts: fc.integer({ min: 1, max: 3 }),
      global: fc.integer({ min: 1, max: 3 }),
      a: fc.nat(),
      b: fc.nat(),
    });
    fc.assert(
      fc.property(shape, ({ groups, routers, hosts, global, a, b }) => {
        const t = parseTopology(`dragonfly:groups=${groups},routers=${routers},hosts=${hosts},global=${global}`, 1);
        if (t.hosts < 2) return;
        const ha = a % t.hosts;
        const hb = b % t.hosts === ha ? (ha + 1) % t.hosts : b % t.hosts;
        const p = one(t, ha, hb);
        expect(t.links.from[p[0]!]).toBe(t.hostNode(ha));
        for (let i = 1; i < p.length; i++) expect(t.links.from[p[i]!]).toBe(t.links.to[p[i - 1]!]);
        expect(t.links.to[p[p.length - 1]!]).toBe(t.hostNode(hb));
        const kinds = kindsOf(t, p);
        const globals = kinds.filter((k) => k === "global").length;
        expect(globals).toBe(t.group(ha) === t.group(hb) ? 0 : 1);
        expect(kinds.length - 2).toBeLessThanOrEqual(3);
        expect(t.paths(ha, hb)).toEqual([p]);
      }),
      { numRuns: 300 },
    );
  });

  it("sized from the ranks; bad parameters name --topology and the parameter", () => {
    expect(parseTopology("dragonfly", 300).name).toBe("dragonfly:groups=2,routers=16,hosts=16,global=1");
    expect(() => parseTopology("dragonfly:groups=0", 1)).toThrow(
      "--topology: 'dragonfly:groups=0': groups must be a whole number >= 1",
    );
    expect(() => parseTopology("dragonfly:group=2", 1)).toThrow("unknown parameter 'group' (did you mean 'groups'?)");
    expect(() => parseTopology("dragonfly:4x4", 1)).toThrow("expected key=value parameters");
    expect(() => parseTopology("dragonfly:groups=2,routers=2,hosts=2", 9)).toThrow(
      "has 8 hosts, fewer than the 9 ranks",
    );
    expect(() => parseTopology("dragonfly:groups=4000,routers=1,hosts=1,global=1", 1)).toThrow(
      "would have 16004000 links",
    );
    expect(() => parseTopology("dragonfly", 4, { routing: "ecmp" })).toThrow("it has minimal");
  });
});
