/**
 * A user's own algorithm file through the CLI, as docs/writing-an-algorithm.md walks through it:
 * `cclab verify --algorithm-file` proves examples/algorithms/sliced_ring.ts, rejects its
 * deliberately broken twin with a counterexample and a replay command that reproduces it, and
 * `cclab explain --algorithm-file` prints its step table.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const GOOD = "examples/algorithms/sliced_ring.ts";
const BROKEN = "examples/algorithms/sliced_ring_broken.ts";

/** Runs `cclab <args>` (node src/cli/bin.js) from the repository root. */
function cclab(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("cclab with --algorithm-file", () => {
  it("verify proves sliced_ring and lists it", () => {
    const r = cclab(["verify", "--algorithm-file", GOOD, "--max-n", "8", "--runs", "20", "--seed", "1"]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/│ allreduce\s+│ sliced_ring\s+│ \d+\s+│ 20\s+│ ok/);
    expect(r.out).toContain("1 of 1 algorithms verified");
  });

  it("verify rejects the broken twin statically, naming the call and how to see it", () => {
    const r = cclab(["verify", "--algorithm-file", BROKEN, "--seed", "1"]);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toContain("allreduce/sliced_ring_broken FAILED");
    expect(r.out).toMatch(
      /sliced_ring_broken \(n=2, count=7\): rank 0: output\[3\] was never written; it should hold \[0\+1\]/,
    );
    expect(r.out).toContain(
      `replay: cclab explain allreduce --algorithm sliced_ring_broken --algorithm-file ${BROKEN} -n 2 --count 7 --segment 3`,
    );
  });

  it("the property tests alone find a counterexample, and its replay command reproduces it", () => {
    const r = cclab(["verify", "--algorithm-file", BROKEN, "--max-n", "1", "--runs", "300", "--seed", "4"]);
    expect(r.code, r.out).not.toBe(0);
    const found = /minimal counterexample after \d+ shrinks: (allreduce\/sliced_ring_broken, n=\d+, count=\d+.*)/m;
    const counterexample = found.exec(r.out)?.[1];
    expect(counterexample, r.out).toBeDefined();
    const replay = /^replay: cclab (verify .*--max-n 1 --seed 4 --runs 300)$/m.exec(r.out)?.[1];
    expect(replay, r.out).toBeDefined();
    const again = cclab((replay ?? "").split(" "));
    expect(again.code).not.toBe(0);
    expect(found.exec(again.out)?.[1]).toBe(counterexample);
  });

  it("explain prints the file's step table from its schedule", () => {
    const r = cclab(["explain", "allreduce", "--algorithm-file", GOOD, "-n", "4", "--count", "8", "--segment", "1"]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("allreduce/sliced_ring: n = 4, count = 8, out of place, segment 1");
    expect(r.out).toMatch(/slice 1: recvCopySend chunk \d/);
    expect(r.out).toContain("cost: 2(n-1)·S, S = ⌈count / (n·segment)⌉ steps");
  });
});
