/**
 * MSCCL export at the GPU counts of a large job (256 and 512): nothing in the exporter spreads
 * an unbounded array into one call (a 512-GPU ring has half a million operations, past what V8
 * takes as arguments), the executor's step limit is stated with its fix, and --max-steps for an
 * executor built with a larger MSCCL_MAX_NUM_STEPS lets the file be written.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exportMsccl, longestThreadblock, overLimits, toXml } from "../src/msccl/export.js";
import { explainCall } from "../src/schedule/explain.js";
import { findAlgorithm } from "../src/schedule/registry.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("MSCCL export of a 256- and 512-GPU ring", () => {
  for (const n of [256, 512]) {
    it(`allgather ring at n = ${n}: exported, n - 1 steps a threadblock, over the default limit only`, () => {
      const alg = findAlgorithm("allgather", "ring", { op: "test" });
      const call = explainCall(alg, n);
      const program = exportMsccl(alg, { ...call, segment: Math.max(1, call.count) });
      expect(program.gpus).toHaveLength(n);
      expect(program.nchannels).toBe(1);
      expect(longestThreadblock(program)).toBe(n - 1);
      expect(overLimits(program)[0]).toBe(
        `gpu 0 tb 1 has ${n - 1} steps; msccl-executor-nccl allows 64 (MSCCL_MAX_NUM_STEPS)`,
      );
      expect(overLimits(program, n - 1)).toEqual([]);
      expect(toXml(program)).toContain(`ngpus="${n}"`);
    }, 120_000);
  }

  it("the CLI refuses a program over the executor's steps with the flag that fixes it", () => {
    const r = spawnSync(
      process.execPath,
      [
        "src/cli/bin.js",
        "export",
        "msccl",
        "--collective",
        "allgather",
        "--algorithm",
        "ring",
        "-n",
        "256",
        "-o",
        "/dev/null",
      ],
      { cwd: ROOT, encoding: "utf8" },
    );
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status, out).toBe(1);
    expect(out).not.toContain("Maximum call stack");
    expect(out).toContain("argument '--max-steps'");
    expect(out).toContain("gpu 0 tb 1 has 255 steps; msccl-executor-nccl allows 64");
    expect(out).toContain("pass --max-steps 255");
  }, 120_000);
});
