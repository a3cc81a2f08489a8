/**
 * A user's own algorithm file through the CLI, as docs/writing-an-algorithm.md walks through it:
 * `cclab verify --algorithm-file` proves examples/algorithms/sliced_ring.ts, rejects its
 * deliberately broken twin with a counterexample and a replay command that reproduces it, and a
 * draft whose cost formula is wrong; `cclab explain --algorithm-file` prints its step table and
 * what overlaps; `cclab model` and `cclab bench --backend sim` compare it with the built-in rings.
 * (The tutorial's `bench --backend mpi` run is not repeated here: its times are the machine's.)
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
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
    expect(r.out).toContain("1 of 1 algorithm verified");
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
    // Slices run one after the other through one buffer: 12 steps in 11 dataflow rounds.
    expect(r.out).toContain("dataflow: 11 rounds deep");
    expect(r.out).toContain("step 5 (slice 0: recvCopySend chunk 1) with step 6 (slice 1: recvReduceSend chunk 2)");
  });

  it("the broken twin's replay shows the element never written", () => {
    const r = cclab([
      ...["explain", "allreduce", "--algorithm", "sliced_ring_broken", "--algorithm-file", BROKEN],
      ...["-n", "2", "--count", "7", "--segment", "3"],
    ]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^ {2}out\[3\] +\. +\.$/m);
    expect(r.out).toContain("here 2 steps");
  });

  it("verify holds a draft to its cost formula", () => {
    const draft = `examples/algorithms/_draft-${process.pid}.ts`;
    const src = readFileSync(`${ROOT}/${GOOD}`, "utf8")
      .replace('name: "sliced_ring"', 'name: "sliced_ring_draft"')
      .replace(/steps: f\([^\n]*\n/, 'steps: f("2(n-1)", (n) => 2 * (n - 1)),\n');
    expect(src).toContain('steps: f("2(n-1)"');
    writeFileSync(`${ROOT}/${draft}`, src);
    try {
      const r = cclab(["verify", "--algorithm-file", draft, "--seed", "4"]);
      expect(r.code, r.out).toBe(1);
      expect(r.out).toContain(
        "allreduce/sliced_ring_draft (n=2, count=7): cost: header says 2(n-1) = 2 steps at most, the schedule has 4",
      );
    } finally {
      rmSync(`${ROOT}/${draft}`, { force: true });
    }
  });

  it("model compares it with ring and segmented_ring", () => {
    // --algorithm is optional with a file, as in explain: the file's own algorithm.
    for (const named of [["--algorithm", "sliced_ring"], []]) {
      const one = cclab([
        ...["model", "allreduce", ...named, "--algorithm-file", GOOD],
        ...["-n", "8", "--bytes", "64M", "--segment", "524288"],
      ]);
      expect(one.code, one.out).toBe(0);
      expect(one.out).toContain("allreduce/sliced_ring: n = 8");
      expect(one.out).toContain("56 communication steps, 448 messages, busiest rank sends 112 MiB");
      expect(one.out).toMatch(/formula: 4\.98 ms {2}2\(n-1\)·S/);
    }
    const sweep = cclab([
      ...["model", "allreduce", "--algorithm-file", GOOD, "--algorithms", "ring,segmented_ring,sliced_ring"],
      ...["--sweep-n", "2,4,8", "--bytes", "64M", "--gamma", "0.00002", "--segment", "524288"],
    ]);
    expect(sweep.code, sweep.out).toBe(0);
    expect(sweep.out).toContain(
      "allreduce: ring vs segmented_ring vs sliced_ring, S = 64 MiB (nccl-tests' bytes; 16777216 x float32)",
    );
    // With a reduction cost the double-buffered segments hide it; the slices do not.
    for (const n of [2, 4, 8]) expect(sweep.out).toMatch(new RegExp(`^ *${n} .* segmented_ring$`, "m"));
  });

  it("bench on sim runs it beside the built-in rings, one row each, nothing wrong", () => {
    const r = cclab([
      ...["bench", "allreduce", "--backend", "sim", "-n", "4", "--algorithm-file", GOOD],
      ...["--algorithm", "ring,segmented_ring,sliced_ring", "-b", "64K", "-e", "1M", "-f", "16"],
      ...["--segment", "16384", "--no-progress"],
    ]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("# cclab bench: allreduce (ring,segmented_ring,sliced_ring) on 4 ranks, backend sim");
    for (const a of ["ring", "segmented_ring", "sliced_ring"]) {
      expect(r.out).toMatch(new RegExp(`^ +1048576 +262144 +float32 +sum +-1 .* 0 +\\S+ +\\S+ +\\S+ +0 +${a}$`, "m"));
    }
    expect(r.out).toContain("# Out of bounds values : 0 OK");
  });
});
