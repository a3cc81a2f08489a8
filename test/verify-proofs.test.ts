/**
 * The proof's large calls in worker threads (src/verify/proofs.ts), as `cclab verify -n N` runs
 * them: the verdict and the call it names are those of the calling thread's proof, the first
 * failing call in the matrix's order whichever worker finishes first; an algorithm a worker cannot
 * find again is proved in the calling thread, not skipped; a proof past --proof-memory stops with
 * an error naming the call and the bound. Runs workers of this process only.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Algorithm } from "../src/schedule/dsl.js";
import { loadAlgorithmFile } from "../src/verify/load.js";
import { checkCases } from "../src/verify/matrix.js";
import { proveCases } from "../src/verify/proofs.js";
import { verifyOne } from "../src/verify/run.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Wrong above 256 ranks only: its last rank's all-gather stops one step early (a deadlock). */
const FILE = "test/fixtures/verify/ring_early_stop.ts";
let loaded: Promise<Algorithm> | undefined;
/** The file's algorithm, loaded (and so registered) once. */
const load = (): Promise<Algorithm> => {
  loaded ??= loadAlgorithmFile(`${ROOT}/${FILE}`).then((a) => a[0] as Algorithm);
  return loaded;
};

describe("proofs in worker threads", () => {
  it("the first failing call in the matrix's order is the one named, at the n where the bug lives", {
    timeout: 300_000,
  }, async () => {
    const alg = await load();
    const o = { backend: "sim", size: 1, runs: 0, algorithmFile: FILE };
    const ok = await verifyOne(alg, { ...o, sizes: [200] }, 1, true);
    expect(ok.failure).toBeUndefined();
    expect(ok.staticCases).toBe(checkCases(alg, 1, [200]).length);
    // 300 and 260 both fail; 260 comes first in the matrix (by n) whichever worker ends first.
    const bad = await verifyOne(alg, { ...o, sizes: [300, 260] }, 1, true);
    expect(bad.failure).toMatch(/n=260, count=259\): deadlock under rendezvous semantics/);
    expect(bad.replay).toContain("-n 260 --count 259");
  });

  it("an algorithm the workers cannot load again (the caller's own) is proved here, and still rejected", {
    timeout: 300_000,
  }, async () => {
    const alg = { ...(await load()), name: "callers_own_ring" };
    const src = { collective: "allreduce", algorithm: alg.name, maxN: 1, sizes: [260], heapMiB: 4096 };
    const { failure: failed } = await proveCases(alg, src, 2);
    expect(failed?.call.size).toBe(260);
    expect(failed?.errors.join("\n")).toMatch(
      /callers_own_ring \(n=260, count=259\): deadlock under rendezvous semantics/,
    );
  });

  it("a proof past --proof-memory stops with an error naming the call and the bound", {
    timeout: 300_000,
  }, async () => {
    const alg = await load();
    const src = {
      collective: "allreduce",
      algorithm: alg.name,
      algorithmFile: FILE,
      maxN: 1,
      sizes: [600],
      heapMiB: 64,
    };
    await expect(proveCases(alg, src, 1)).rejects.toThrow(
      /^verify: argument '--proof-memory': proving allreduce\/ring_early_stop, the call at n=600, count=\d+ needs more than 64 MiB of heap; nothing about it was proved/,
    );
  });
});
