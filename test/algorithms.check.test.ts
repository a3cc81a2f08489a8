/**
 * Static proof for every registered algorithm: for n = 1..64 and the matrix of src/verify/matrix.ts (checkCases),
 * the symbolic checker must find every send matched, no deadlock, no race, the collective's
 * result with each contribution exactly once, and the header's cost formulas exact.
 */
import { describe, expect, it } from "vitest";
import { checkAlgorithm } from "../src/schedule/check.js";
import { allAlgorithms } from "../src/schedule/registry.js";
import { checkCases } from "../src/verify/matrix.js";

const algorithms = allAlgorithms();
// Mutation testing (stryker.config.json) runs a smaller matrix; CI and npm test run all of n = 1..64.
const maxSize = Number(process.env.CCLAB_CHECK_MAX_SIZE ?? 64);

describe("static checks, n = 1..64", () => {
  it("has algorithms registered", () => {
    expect(algorithms.length).toBeGreaterThan(0);
  });
  it.each(algorithms.map((a) => [`${a.collective}/${a.name}`, a] as const))("%s", (_id, alg) => {
    const errors: string[] = [];
    for (const args of checkCases(alg, maxSize)) {
      const report = checkAlgorithm(alg, args);
      errors.push(...report.errors);
      if (errors.length >= 5) break;
    }
    expect(errors).toEqual([]);
  });
});
