/**
 * The alpha-beta model against theory: ring all-reduce costs exactly 2(n-1)(alpha + beta·bytes/n)
 * for divisible sizes; the double binary tree's log-depth latency wins at large N and small
 * messages, the ring's bandwidth at small N and large messages; sweeps find the crossover.
 */
import { describe, expect, it } from "vitest";
import { parseBeta } from "../src/cli/model.js";
import { powersOfTwo, sweep, sweepChart } from "../src/model/sweep.js";
import { type Algorithm, recv, send, step } from "../src/schedule/dsl.js";
import { betaFromGBps, formulaTime, modelTime } from "../src/schedule/model.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";
import { assertWellFormed, count } from "./fixtures/viz/check.js";

const site = { op: "test" };
const ring = findAlgorithm("allreduce", "ring", site);
const dbt = findAlgorithm("allreduce", "double_binary_tree", site);
const params = { alpha: 5, beta: betaFromGBps(25) };
const ar = (c: { size: number; count: number; segment?: number }) => makeCall({ collective: "allreduce", ...c });

describe("alpha-beta model", () => {
  it("ring all-reduce is 2(n-1)(alpha + beta·bytes/n) for divisible sizes", () => {
    for (const n of [2, 3, 4, 8, 16, 48]) {
      const count = n * 1024;
      const bytes = count * 4;
      const m = modelTime(ring, ar({ size: n, count }), params);
      const theory = 2 * (n - 1) * (params.alpha + (params.beta * bytes) / n);
      expect(m.time).toBeCloseTo(theory, 6);
      expect(m.steps).toBe(2 * (n - 1));
      expect(m.messages).toBe(n * 2 * (n - 1));
      expect(m.maxBytesSent).toBe((2 * (n - 1) * bytes) / n);
      expect(formulaTime(ring, ar({ size: n, count }), params)).toBeCloseTo(theory, 6);
    }
  });

  it("large N, small message: the tree's ~2 log2 n latency beats the ring's 2(n-1)", () => {
    const call = ar({ size: 256, count: 2048 });
    const r = modelTime(ring, call, params).time;
    const t = modelTime(dbt, call, params).time;
    expect(t).toBeLessThan(r / 5);
    expect(r).toBeGreaterThan(2 * 255 * params.alpha);
  });

  it("small N, large message: the ring's bandwidth term wins", () => {
    const count = 16 * 1024 * 1024;
    const call = ar({ size: 4, count });
    const r = modelTime(ring, call, params).time;
    const t = modelTime(dbt, call, params).time;
    expect(r).toBeLessThan(t);
    // The ring is within a few alphas of its bandwidth bound 2(n-1)/n · bytes · beta.
    expect(r).toBeCloseTo(1.5 * count * 4 * params.beta + 6 * params.alpha, 3);
  });

  it("shared links charge a rank's concurrent transfers together; 'none' does not", () => {
    const count = 1 << 20;
    const call = ar({ size: 8, count });
    const shared = modelTime(dbt, call, params).time;
    const none = modelTime(dbt, call, { ...params, contention: "none" }).time;
    expect(none).toBeLessThan(shared);
    // The ring posts one send and one receive per step: no difference.
    expect(modelTime(ring, call, { ...params, contention: "none" }).time).toBeCloseTo(
      modelTime(ring, call, params).time,
      9,
    );
  });

  it("gamma adds the reductions on the critical path", () => {
    const call = ar({ size: 4, count: 4096 });
    const base = modelTime(ring, call, params).time;
    const withGamma = modelTime(ring, call, { ...params, gamma: 0.001 }).time;
    // 3 reduce-scatter steps, each reducing a quarter of 16 KiB.
    expect(withGamma - base).toBeCloseTo(3 * 4096 * 0.001, 6);
  });

  it("a schedule that cannot complete is reported, not timed", () => {
    const bad: Algorithm = {
      ...ring,
      name: "one_recv_too_many",
      *schedule(c, mem) {
        yield step("send", [send((c.rank + 1) % c.size, mem.input)]);
        yield step("recv", [recv((c.rank + c.size - 1) % c.size, mem.scratch(c.count))]);
        yield step("recv again", [recv((c.rank + c.size - 1) % c.size, mem.scratch(c.count))]);
      },
    };
    expect(() => modelTime(bad, ar({ size: 3, count: 3 }), params)).toThrow(/cannot complete at n = 3: ranks 0, 1, 2/);
    expect(() => modelTime(ring, ar({ size: 4, count: 4 }), { ...params, alpha: -1 })).toThrow(/alpha/);
  });

  it("size 1 and count 0 cost nothing", () => {
    expect(modelTime(ring, ar({ size: 1, count: 100 }), params).time).toBe(0);
    expect(modelTime(ring, ar({ size: 8, count: 0 }), params).time).toBe(0);
  });
});

describe("sweep", () => {
  it("finds where the tree overtakes the ring, and charts it", () => {
    const r = sweep([ring, dbt], { sizes: powersOfTwo(512), bytes: 256 * 1024, params });
    expect(r.rows.map((x) => x.n)).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512]);
    expect(r.crossovers).toHaveLength(1);
    const c = r.crossovers[0];
    expect(c?.fasterAbove).toBe("double_binary_tree");
    expect(c?.at).toBeGreaterThan(c?.between[0] as number);
    expect(c?.at).toBeLessThan(c?.between[1] as number);
    const last = r.rows[r.rows.length - 1];
    expect(last?.times[1]).toBeLessThan(last?.times[0] as number);
    const svg = sweepChart(r, "allreduce", 256 * 1024, params);
    assertWellFormed(svg);
    expect(count(svg, /<polyline /)).toBe(2);
    expect(count(svg, /class="crossover"/)).toBe(1);
    expect(svg).toContain("double_binary_tree faster above");
  });

  it("parses bandwidths and sizes", () => {
    expect(parseBeta("25GB/s")).toBeCloseTo(4e-5, 12);
    expect(parseBeta("0.001")).toBe(0.001);
    expect(() => parseBeta("fast")).toThrow(/--beta/);
    expect(powersOfTwo(12)).toEqual([2, 4, 8, 12]);
  });
});
