/**
 * The machine's shape on the nccl backend, without a GPU: the in-process NCCL stand-in
 * (test/support/nccl-fake.ts) runs the path `cclab run --backend nccl --topology` and
 * `cclab verify --backend nccl --topology` take. A comm given the shape (useTopology, as the
 * runtime's init does from CCLAB_TOPOLOGY) runs an algorithm that needs a torus, and it agrees
 * with NCCL's builtin and the oracle, while a comm without one refuses it by name; the verify
 * worker runs swing_latency on a comm with the shape and reports it agreeing.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { useTopology } from "../src/collectives/plans.js";
import type { Shape } from "../src/specs/types.js";
import { runNcclAlgorithm } from "../src/verify/nccl-cases.js";
import { main as ncclWorker, RESULT_TAG } from "../src/verify/nccl-worker.js";
import { swingTorusOnly } from "./fixtures/verify/torus-only.js";
import { runFakeRanks } from "./support/nccl-fake.js";

const torus2x2: Shape = { family: "torus", dims: [2, 2], name: "torus:2x2", hosts: 4, hostOf: [0, 1, 2, 3] };

afterEach(() => vi.restoreAllMocks());

describe("--topology on the nccl backend (the NCCL stand-in)", () => {
  it("a comm with torus:2x2 runs the torus-only Swing, agreeing with NCCL's builtin; without one it refuses by name", async () => {
    const shaped = await runFakeRanks(4, async (c) => {
      useTopology(c, torus2x2);
      return runNcclAlgorithm(c, c.builtin, swingTorusOnly, 6, 7);
    });
    const failures = shaped.flatMap((r) => r.failures);
    expect(failures, failures.slice(0, 3).join("\n")).toEqual([]);
    expect(shaped[0]!.cases).toBeGreaterThan(0);
    await expect(runFakeRanks(4, (c) => runNcclAlgorithm(c, c.builtin, swingTorusOnly, 2, 7))).rejects.toThrow(
      "allreduce/swing_torus_only: argument '--topology': needs the machine's shape (torus), got none",
    );
  }, 60_000);

  it("verify's nccl worker runs swing_latency bound to the shape its comm was given, agreeing with NCCL", async () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const args = [JSON.stringify({ collective: "allreduce", algorithm: "swing_latency", runs: 4, seed: 3 })];
    await runFakeRanks(4, async (c) => {
      useTopology(c, torus2x2);
      await ncclWorker(c, args);
    });
    vi.restoreAllMocks();
    const results = lines
      .filter((l) => l.startsWith(RESULT_TAG))
      .map((l) => JSON.parse(l.slice(RESULT_TAG.length)) as { algorithm: string; failures: string[]; cases: number });
    expect(results).toHaveLength(4);
    for (const r of results) {
      expect(r.algorithm).toBe("swing_latency");
      expect(r.failures).toEqual([]);
      expect(r.cases).toBeGreaterThan(0);
    }
  }, 60_000);
});
