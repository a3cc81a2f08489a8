/**
 * One case generator for every differential test (src/verify/property.ts caseArb): the sim
 * property tests, MPI's (world size fixed) and NCCL's (nccl-cases.ts, with the GPU's options)
 * draw from it. NCCL's draw is the same on every rank for a seed, covers every dtype in as many
 * cases, never runs on a subgroup, and reaches the counts its kernels need.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DTYPES } from "../src/core/dtype.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { defaultSegment } from "../src/specs/index.js";
import { ncclCases } from "../src/verify/nccl-cases.js";
import { caseArb } from "../src/verify/property.js";

const ring = findAlgorithm("allreduce", "ring", { op: "test" });

describe("caseArb's options", () => {
  it("without subgroups every case runs on the whole world; with them some run on fewer ranks", () => {
    const whole = fc.sample(caseArb(ring, { worldSize: 5, subgroups: false }), { seed: 7, numRuns: 200 });
    expect(whole.every((c) => c.size === 5 && c.members === undefined && c.worldSize === 5)).toBe(true);
    const some = fc.sample(caseArb(ring, { worldSize: 5 }), { seed: 7, numRuns: 200 });
    expect(some.some((c) => c.size < 5)).toBe(true);
  });
  it("large counts reach the kernels' sizes and take the default segment there; small ones never do", () => {
    const large = fc.sample(caseArb(ring, { worldSize: 4, counts: "large" }), { seed: 3, numRuns: 300 });
    expect(large.some((c) => c.count >= 2048)).toBe(true);
    const big = large.filter((c) => c.count >= 64);
    expect(big.length).toBeGreaterThan(0);
    expect(big.every((c) => c.segment === defaultSegment(c.dtype, ring))).toBe(true);
    const small = fc.sample(caseArb(ring, { worldSize: 4 }), { seed: 3, numRuns: 300 });
    expect(Math.max(...small.map((c) => c.count))).toBeLessThanOrEqual(3 * 4 + 5);
  });
});

describe("ncclCases: the GPU's draw from caseArb", () => {
  it("is the same for the same seed, and another for another seed", () => {
    expect(ncclCases(ring, 4, 12, 99)).toEqual(ncclCases(ring, 4, 12, 99));
    expect(ncclCases(ring, 4, 12, 99)).not.toEqual(ncclCases(ring, 4, 12, 100));
  });
  it("cycles the dtypes, runs on the whole world, and premultiplies by 2 only", () => {
    const cases = ncclCases(ring, 3, DTYPES.length * 4, 5);
    expect(new Set(cases.slice(0, DTYPES.length).map((c) => c.dtype))).toEqual(new Set(DTYPES));
    expect(cases.every((c) => c.size === 3)).toBe(true);
    const scalars = cases.filter((c) => c.op.name === "premulsum").map((c) => c.op.scalar);
    expect(scalars.every((s) => s === 2)).toBe(true);
  });
});
