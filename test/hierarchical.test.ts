/**
 * allreduce/hierarchical and its factory: the default mesh shape, other shapes proved by the
 * checker, the clear error for a group size that does not divide n, and what the mesh buys over
 * the ring (the same bytes in far fewer steps).
 */
import { describe, expect, it } from "vitest";
import { hierarchical, hierarchicalAllreduce, squarestGroup } from "../algorithms/allreduce/hierarchical.js";
import { ring } from "../algorithms/allreduce/ring.js";
import { InvalidArgumentError } from "../src/core/errors.js";
import { checkAlgorithm } from "../src/schedule/check.js";
import { compile } from "../src/schedule/plan.js";
import { makeCall, rankCall } from "../src/specs/index.js";

describe("the mesh shape", () => {
  it("defaults to the squarest: the largest divisor of n not above √n", () => {
    expect([1, 2, 4, 6, 7, 8, 12, 16, 18, 64, 100, 1024].map(squarestGroup)).toEqual([
      1, 1, 2, 2, 1, 2, 3, 4, 3, 8, 10, 32,
    ]);
  });
  it("any divisor works: 8 GPUs a node, 2 a node, one node", () => {
    const errors: string[] = [];
    for (const [g, sizes] of [
      [8, [8, 16, 24, 40]],
      [2, [2, 6, 10, 14]],
      [1, [3, 5]],
    ] as const) {
      const alg = hierarchicalAllreduce(`hierarchical_g${g}`, () => g, `g = ${g}`);
      for (const n of sizes) {
        for (const count of [0, n - 1, 3 * n + 1]) {
          for (const inPlace of [false, true]) {
            errors.push(...checkAlgorithm(alg, makeCall({ collective: "allreduce", size: n, count, inPlace })).errors);
          }
        }
      }
    }
    expect(errors).toEqual([]);
  });
  it("a group size that does not divide n is an error naming the rank, the algorithm and the argument", () => {
    const alg = hierarchicalAllreduce("hierarchical_g4", () => 4, "g = 4");
    const call = rankCall(makeCall({ collective: "allreduce", size: 6, count: 6 }), 5);
    expect(() => compile(alg, call)).toThrow(InvalidArgumentError);
    expect(() => compile(alg, call)).toThrow(
      /rank 5.*allreduce\/hierarchical_g4.*groupSize.*divide the 6 ranks; got 4/,
    );
  });
  it("no group size but a divisor of n: 1.5 and -2 divide 6 arithmetically, 0 divides nothing", () => {
    const call = rankCall(makeCall({ collective: "allreduce", size: 6, count: 6 }), 5);
    for (const g of [1.5, -2, 0]) {
      expect(
        () =>
          compile(
            hierarchicalAllreduce("h", () => g, "bad"),
            call,
          ),
        `g=${g}`,
      ).toThrow(`got ${g}`);
    }
  });
  it("a variant says its shape, and keeps the rest", () => {
    const alg = hierarchicalAllreduce("hierarchical_g8", () => 8, "g = 8, a node's GPUs");
    expect(alg.summary).toContain("(g = 8, a node's GPUs)");
    expect(hierarchical.summary).toContain("(g = the largest divisor of n not above √n)");
    expect(alg.limits).toBe(hierarchical.limits);
    expect(alg.cost.steps.value(64, 64, 1)).toBe(2 * 7 + 2 * 7);
    expect(alg.cost.steps.value(32, 64, 1)).toBe(2 * 7 + 2 * 3);
  });
  it("the cost formulas are exact where n divides the count, bounds elsewhere", () => {
    expect(hierarchical.cost.exact?.(12, 24, 1)).toBe(true);
    expect(hierarchical.cost.exact?.(12, 25, 1)).toBe(false);
    const uneven = checkAlgorithm(hierarchical, makeCall({ collective: "allreduce", size: 12, count: 13 }));
    expect(uneven.errors).toEqual([]);
    expect(uneven.sent).toBeLessThan(hierarchical.cost.sent.value(12, 13, 1));
  });
});

describe("against the ring", () => {
  it("the same bytes, 2(g-1) + 2(n/g-1) steps instead of 2(n-1)", () => {
    const call = makeCall({ collective: "allreduce", size: 64, count: 64 * 10 });
    const h = checkAlgorithm(hierarchical, call);
    const r = checkAlgorithm(ring, call);
    expect(h.errors).toEqual([]);
    expect(h.steps).toBe(28);
    expect(r.steps).toBe(126);
    expect(h.sent).toBe(r.sent);
  });
  it("a prime n is one ring across n groups of one", () => {
    const call = makeCall({ collective: "allreduce", size: 7, count: 70 });
    expect(checkAlgorithm(hierarchical, call).steps).toBe(checkAlgorithm(ring, call).steps);
  });
});
