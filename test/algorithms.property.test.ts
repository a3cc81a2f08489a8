/**
 * Every registered algorithm on the sim backend against the sequential oracle, over random
 * sizes (1..17, some up to 64), counts, dtypes, ops, roots, in/out of place, non-contiguous
 * subgroups, send semantics and interleavings. A failure shrinks to a minimal case; fast-check
 * prints the seed and path that replay it (fc.assert's { seed, path }).
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { allAlgorithms } from "../src/schedule/registry.js";
import { caseArb, describeCase, runCase } from "../src/verify/property.js";

const runs = Number(process.env.CCLAB_PROPERTY_RUNS ?? 40);

describe.each(allAlgorithms().map((a) => [`${a.collective}/${a.name}`, a] as const))("%s on sim", (_id, alg) => {
  it("equals the oracle (sizes 1..17)", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(alg), async (c) => {
        const err = await runCase(alg, c);
        if (err) throw new Error(`${describeCase(alg, c)}: ${err}`);
      }),
      { numRuns: runs },
    );
  });
  it("equals the oracle (sizes up to 64)", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(alg, { maxSize: 64 }), async (c) => {
        const err = await runCase(alg, c);
        if (err) throw new Error(`${describeCase(alg, c)}: ${err}`);
      }),
      { numRuns: 4 },
    );
  });
});
