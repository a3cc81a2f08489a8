/**
 * `cclab verify` at the n asked for: `-n N` runs the static proof at N (not only the property
 * tests), the property cases past 17 ranks use counts that fill every chunk, and a schedule wrong
 * only above some n is rejected there with a counterexample and a replay. The two fixtures are
 * rings that send only non-empty chunks (test/fixtures/verify/): one whose last rank stops its
 * all-gather early above 256 ranks (a deadlock once chunks 0 and 1 hold data), one whose rank 5
 * overwrites an output element above 500 ranks (same messages, wrong data).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkAlgorithm } from "../src/schedule/check.js";
import { makeCall } from "../src/specs/index.js";
import { loadAlgorithmFile } from "../src/verify/load.js";
import { checkCases } from "../src/verify/matrix.js";
import { caseArb } from "../src/verify/property.js";
import { propertyCheck } from "../src/verify/run.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const EARLY = "test/fixtures/verify/ring_early_stop.ts";
const DATA = "test/fixtures/verify/ring_data_bug.ts";
const BROKEN = "examples/algorithms/sliced_ring_broken.ts";

function cclab(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

type Alg = Awaited<ReturnType<typeof loadAlgorithmFile>>[number];
const loaded = new Map<string, Promise<Alg>>();
/** The file's algorithm, loaded (and registered) once. */
function load(file: string): Promise<Alg> {
  let a = loaded.get(file);
  if (!a) loaded.set(file, (a = loadAlgorithmFile(`${ROOT}/${file}`).then((x) => x[0] as Alg)));
  return a;
}

describe("verify -n N proves at N", () => {
  it("the static cases cover each -n beside 1..--max-n, with counts 0, n - 1 and n + 3", async () => {
    const alg = await load(EARLY);
    const cases = checkCases(alg, 4, [300]);
    expect([...new Set(cases.map((c) => c.size))]).toEqual([1, 2, 3, 4, 300]);
    expect(cases.filter((c) => c.size === 300).map((c) => c.count)).toEqual([0, 299, 303]);
  });

  it("an n asked for on its own also meets segment 1 on its full chunks, where the sweep meets every segment", async () => {
    const alg = await load(BROKEN);
    const at = (n: number) =>
      checkCases(alg, 4, [n])
        .filter((c) => c.size === n)
        .map((c) => `${c.count}/${c.segment}${c.inPlace ? " in place" : ""}`);
    // 130 % 3 = 1: segment 2 for every count, and 133 at segment 1 besides; 300 has segment 1 already.
    expect(at(130)).toEqual([
      "0/2",
      "0/2 in place",
      "129/2",
      "129/2 in place",
      "133/2",
      "133/2 in place",
      "133/1",
      "133/1 in place",
    ]);
    expect(at(300)).toEqual(["0/1", "0/1 in place", "299/1", "299/1 in place", "303/1", "303/1 in place"]);
    // In the sweep, each n keeps its one segment: the neighbours cover 1, 2 and 3.
    expect(new Set(checkCases(alg, 4).map((c) => `${c.size}/${c.segment}`))).toEqual(
      new Set(["1/2", "2/3", "3/1", "4/2"]),
    );
  });

  it("cclab verify -n 130 rejects the examples' broken twin, whose bug needs a chunk one segment longer", () => {
    const r = cclab(["verify", "--algorithm-file", BROKEN, "-n", "130", "--max-n", "1", "--runs", "1", "--seed", "1"]);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/sliced_ring_broken \(n=130, count=133\): rank \d+: output\[\d+\] was never written/);
    expect(r.out).toContain(
      `replay: cclab explain allreduce --algorithm sliced_ring_broken --algorithm-file ${BROKEN} -n 130 --count 133 --segment 1`,
    );
  });

  it("below 257 ranks the early-stopping ring is right; at 300 the proof finds the deadlock", async () => {
    const alg = await load(EARLY);
    const call = (size: number, count: number) => makeCall({ collective: "allreduce", size, count, segment: 1 });
    expect(checkAlgorithm(alg, call(256, 259)).errors).toEqual([]);
    // count < n - 1 leaves chunks 0 and 1 empty: the dropped step moves nothing.
    expect(checkAlgorithm(alg, call(300, 200)).errors).toEqual([]);
    expect(checkAlgorithm(alg, call(300, 303)).errors.join("\n")).toMatch(
      /ring_early_stop \(n=300, count=303\): deadlock under rendezvous semantics: rank 0, step \d+ \('all-gather chunk 1'\) waits in .*recv\(from 299/,
    );
  });

  it("cclab verify -n 300 rejects it with the failing call and a replay", { timeout: 900_000 }, () => {
    const r = cclab(["verify", "--algorithm-file", EARLY, "-n", "300", "--runs", "2", "--seed", "1"]);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain("static proof for n = 1..16 and 300");
    expect(r.out).toMatch(/ring_early_stop \(n=300, count=299\): deadlock under rendezvous semantics/);
    expect(r.out).toContain(
      `replay: cclab explain allreduce --algorithm ring_early_stop --algorithm-file ${EARLY} -n 300 --count 299 --segment 1`,
    );
  });

  it("cclab verify -n 600 names the element rank 5 gets wrong, shortly, with a replay", { timeout: 900_000 }, () => {
    const r = cclab(["verify", "--algorithm-file", DATA, "-n", "600", "--runs", "2", "--seed", "1"]);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain(
      "ring_data_bug (n=600, count=599): rank 5: output[1] holds [0:0..599:0] but allreduce needs [0..599]",
    );
    // A difference over 600 ranks is summed up, not listed.
    expect(r.out).toMatch(/rank 0's element 0 does not belong; .*; and \d+ more\)/);
    expect(r.out).toContain(
      `replay: cclab explain allreduce --algorithm ring_data_bug --algorithm-file ${DATA} -n 600 --count 599 --segment 1`,
    );
  });
});

describe("verify -n past what the proof is held to", () => {
  it("is refused with the reason, before any work", () => {
    const r = cclab(["verify", "-n", "4,20000", "--runs", "0"]);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(
      "verify: argument '-n': takes at most 16384 ranks, got 20000: past 1024 the proof turns rank 0's plan onto every rank",
    );
  });
});

describe("verify -n past 1,024 ranks: the proof by rotation, in workers", () => {
  it("proves the ring at n = 1,100 (count n, in and out of place) and says the property tests stop at 1,024", () => {
    const r = cclab([
      "verify",
      "--collective",
      "allreduce",
      "--algorithm",
      "ring",
      "-n",
      "1100",
      "--max-n",
      "1",
      "--runs",
      "0",
    ]);
    expect(r.out).toContain("static proof for n = 1..1 and 1100 (past 1024 ranks by rotation");
    expect(r.out).toContain("no property cases; none at n = 1100, past the 1024 ranks the sim runs");
    expect(r.out).toMatch(/│ allreduce\s+│ ring\s+│ 10\s+│ 0\s+│ ok/);
    expect(r.code).toBe(0);
  });

  it("rejects the early-stopping ring there, naming the rank, with verify's own replay", () => {
    const r = cclab(["verify", "--algorithm-file", EARLY, "-n", "1100", "--max-n", "1", "--runs", "0"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /allreduce\/ring_early_stop \(n=1100, count=1100\): not proved by rotation: rank 1099 has \d+ steps, rank 0 2198/,
    );
    expect(r.out).toContain(
      `replay: cclab verify --collective allreduce --algorithm ring_early_stop --algorithm-file ${EARLY} -n 1100 --max-n 1 --runs 0`,
    );
  });
});

describe("property cases past 17 ranks", () => {
  it("mostly fill every chunk with a count n does not divide", async () => {
    const alg = await load(EARLY);
    const counts = fc.sample(caseArb(alg, { worldSize: 300, subgroups: false }), { numRuns: 200, seed: 7 });
    const filling = counts.filter((c) => c.count >= 300 && c.count % 300 !== 0).length;
    expect(filling).toBeGreaterThan(120);
    // The edge counts stay: some below n, some multiples of n.
    expect(counts.some((c) => c.count < 300)).toBe(true);
    expect(counts.some((c) => c.count > 0 && c.count % 300 === 0)).toBe(true);
    // No n × n split matrix is drawn for a collective that takes none.
    expect(counts.every((c) => c.splits === undefined)).toBe(true);
  });
});

describe("a property failure always ends with a counterexample", () => {
  it("shrinking cut short by its time limit still reports the failing case", async () => {
    const alg = await load(BROKEN);
    const r = await propertyCheck(alg, { runs: 300, shrinkSeconds: 0.001 }, 4);
    expect(r.failure).toMatch(/counterexample .*: allreduce\/sliced_ring_broken, n=\d+, count=\d+/);
    const none = await propertyCheck(alg, { runs: 300, shrinkSeconds: 0 }, 4);
    expect(none.failure).toMatch(/^counterexample \(not shrunk\): allreduce\/sliced_ring_broken, n=\d+/);
  });
});
