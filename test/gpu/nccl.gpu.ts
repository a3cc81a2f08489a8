/**
 * npm run test:gpu: the nccl backend on real GPUs (see test/gpu/suite.ts for what runs). Where
 * the backend cannot run (addon without CUDA, no libnccl.so.2, no GPU) it prints why and skips.
 */
import { describe, expect, it } from "vitest";
import { ncclDiagnose } from "../../src/backends/nccl/index.js";
import { explainUnavailable } from "../../src/verify/nccl.js";
import { gpuSizes, RING_AND_TREE, runDifferential, runP2P, runSemantics } from "./suite.js";

const d = ncclDiagnose();
if (!d.ok) console.warn(`${explainUnavailable(d, "npm run test:gpu")}\nSkipping every GPU test.`);
const sizes = gpuSizes(d.devices);
const runs = Number(process.env.CCLAB_GPU_RUNS ?? 6);
const seed = Number(process.env.CCLAB_SEED ?? 20261123);

describe("where the GPU tests run", () => {
  it("reports whether the nccl backend can run here", () => {
    if (d.ok) expect(d.devices).toBeGreaterThan(0);
    else expect(d.problems.length).toBeGreaterThan(0);
  });
});

describe.skipIf(!d.ok)("the nccl backend on GPUs", () => {
  for (const n of sizes) {
    it(`point-to-point, groups, split, builtin, local kernels and a timeout: ${n} ranks`, async () => {
      const p = await runP2P(n);
      expect(p.result.exitCode, p.output).toBe(0);
      expect(p.output.match(/^\[rank \d+\] done /gm)?.length, p.output).toBe(n);
    });
  }
  for (const n of sizes) {
    it(`docs/semantics.md's cases on the CUDA kernels, every rank the same bits: ${n} ranks`, async () => {
      const p = await runSemantics(n);
      expect(
        p.output.split("\n").filter((l) => l.includes("FAIL ")),
        p.output,
      ).toEqual([]);
      expect(p.result.exitCode, p.output).toBe(0);
      expect(p.output.match(/^\[rank \d+\] done /gm)?.length, p.output).toBe(n);
    });
  }
  for (const algo of RING_AND_TREE) {
    for (const n of sizes) {
      it(`every ${algo.collective ?? ""} algorithm agrees with NCCL (NCCL_ALGO=${algo.algo}): ${n} ranks`, async () => {
        const lines: string[] = [];
        const r = await runDifferential(n, algo, runs, seed, (l) => lines.push(l));
        const bad = r.rows.flatMap((row) => row.failures);
        expect(r.launchFailures, lines.slice(-40).join("\n")).toEqual([]);
        expect(bad.slice(0, 10)).toEqual([]);
        expect(r.rows.length).toBeGreaterThan(0);
      });
    }
  }
});
