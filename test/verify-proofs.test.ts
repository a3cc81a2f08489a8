/**
 * The proof's large calls in worker threads (src/verify/proofs.ts), as `cclab verify -n N` runs
 * them: the verdict and the call it names are those of the calling thread's proof, the first
 * failing call in the matrix's order whichever worker finishes first; workers are used only for
 * the registry's own algorithm (a caller's mutant under a registered name is proved here); an
 * algorithm a worker cannot find again is proved here, not skipped; a proof past
 * --proof-memory stops with an error naming the call and the bound. Runs workers of this process.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Algorithm, step } from "../src/schedule/dsl.js";
import { loadAlgorithmFile } from "../src/verify/load.js";
import { checkCases } from "../src/verify/matrix.js";
import { proveCases, settled, workersThatFit } from "../src/verify/proofs.js";
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
const source = (alg: Algorithm, sizes: number[], heapMiB = 4096) => ({
  collective: alg.collective,
  algorithm: alg.name,
  algorithmFile: FILE,
  maxN: 1,
  sizes,
  heapMiB,
});

describe("proofs in worker threads", () => {
  it("workers prove the large calls; the failure named is the first in the matrix's order, where the bug lives", {
    timeout: 300_000,
  }, async () => {
    const alg = await load();
    const ok = await proveCases(alg, source(alg, [200]), 2);
    expect(ok.failure).toBeUndefined();
    expect(ok.cases).toBe(checkCases(alg, 1, [200]).length);
    expect(ok.workers).toBeGreaterThanOrEqual(1);
    // 300 and 260 both fail; 260 comes first in the matrix (by n).
    const bad = await verifyOne(
      alg,
      { backend: "sim", size: 1, runs: 0, algorithmFile: FILE, sizes: [300, 260] },
      1,
      alg,
    );
    expect(bad.failure).toMatch(
      /^allreduce\/ring_early_stop \(n=260, count=259\): deadlock under rendezvous semantics/,
    );
    expect(bad.replay).toContain("-n 260 --count 259");
  });

  it("results arriving out of order settle on the first failing call once all before it are in", () => {
    const results = new Map<number, readonly string[]>();
    results.set(9, ["wrong at 9"]);
    expect(settled([3, 5, 9], results)).toBeUndefined();
    results.set(5, ["wrong at 5"]);
    expect(settled([3, 5, 9], results)).toBeUndefined();
    results.set(3, []);
    expect(settled([3, 5, 9], results)).toBe(5);
    expect(settled([3], results)).toBe("done");
  });

  it("a caller's algorithm under a registered name is proved here, never the registry's in a worker", {
    timeout: 300_000,
  }, async () => {
    const registered = await load();
    // The same name, but a schedule that does nothing at 130 ranks (its output never written).
    const mutant: Algorithm = {
      ...registered,
      *schedule(call, memory) {
        if (call.size !== 130) yield* registered.schedule(call, memory);
        else yield step("nothing", [], []);
      },
    };
    const o = { backend: "sim", size: 1, runs: 0, algorithmFile: FILE, sizes: [130] };
    expect((await verifyOne(registered, o, 1, registered)).failure).toBeUndefined();
    const row = await verifyOne(mutant, o, 1, registered);
    expect(row.failure).toMatch(
      /^allreduce\/ring_early_stop \(n=130, count=\d+\): rank \d+: output\[\d+\] was never written/,
    );
  });

  it("an algorithm the workers cannot load again (the caller's own) is proved here, and still rejected", {
    timeout: 300_000,
  }, async () => {
    const alg = { ...(await load()), name: "callers_own_ring" };
    const src = { collective: "allreduce", algorithm: alg.name, maxN: 1, sizes: [260], heapMiB: 4096 };
    const { failure, workers } = await proveCases(alg, src, 2);
    expect(workers).toBe(0);
    expect(failure?.call.size).toBe(260);
    expect(failure?.errors.join("\n")).toMatch(
      /callers_own_ring \(n=260, count=259\): deadlock under rendezvous semantics/,
    );
  });

  it("a proof past --proof-memory stops with an error naming the call and the bound", {
    timeout: 300_000,
  }, async () => {
    const alg = await load();
    await expect(proveCases(alg, source(alg, [600], 64), 1)).rejects.toThrow(
      /^verify: argument '--proof-memory': proving allreduce\/ring_early_stop, the call at n=600, count=\d+ needs more than 64 MiB of heap; nothing about it was proved/,
    );
    // Workers at a heap cap fit in half the memory the process may use, at least one.
    expect(workersThatFit(64)).toBeGreaterThanOrEqual(workersThatFit(4096));
    expect(workersThatFit(2 ** 30)).toBe(1);
  });
});
