/**
 * The differential tests on the mpi backend (issue 4): `cclab verify --backend mpi` launches
 * mpirun once per size (np = 2, 3, 4, 5) and every registered algorithm runs fast-check cases
 * against MPI's own collective on the same inputs (src/verify/mpi-cases.ts). A
 * deliberately broken ring all-reduce (test/fixtures/mpi/broken-ring.ts) must be caught, with a
 * replay command that reproduces the failure. Skips, saying why, where MPI is not available.
 *
 * CCLAB_MPI_RUNS (default 20) sets the cases per algorithm; CCLAB_MPI_SEED fixes the seed
 * (default: a new one per run, printed in the output and in every replay line).
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { allAlgorithms } from "../src/schedule/registry.js";
import { mpiSizes } from "../src/verify/mpi.js";
import { agrees } from "../src/verify/mpi-cases.js";
import { mpiSkipReason } from "./support/mpi.js";

const skip = mpiSkipReason("mpi differential tests") !== "";

const runs = Number(process.env.CCLAB_MPI_RUNS ?? 20);
const seed = Number(process.env.CCLAB_MPI_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** `cclab verify --backend mpi -n <np> ...`, as a user runs it. */
function cclabVerify(np: string, args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ["src/cli/bin.js", "verify", "--backend", "mpi", "-n", np, ...args], {
    encoding: "utf8",
    timeout: 170_000,
    env: { ...process.env, CCLAB_TIMEOUT: "30" },
  });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

describe("comparison and sizes (no MPI needed)", () => {
  it("integers and integer-valued floats compare exactly; other floats within 2 eps relative", () => {
    expect(agrees("int32", 3, 3)).toBe(true);
    expect(agrees("int64", 3n, 4n)).toBe(false);
    expect(agrees("float32", 6.000001, 6)).toBe(false);
    expect(agrees("float32", 7 / 3 + 2 ** -22, 7 / 3)).toBe(true);
    expect(agrees("float32", 7 / 3 + 2 ** -20, 7 / 3)).toBe(false);
    expect(agrees("float16", 2.3359375, 7 / 3)).toBe(true);
    expect(agrees("float64", Number.NaN, Number.NaN)).toBe(true);
  });
  it("sizes: 2..5 by default, else -n / CCLAB_MPI_NP", () => {
    expect(mpiSizes({}, {})).toEqual([2, 3, 4, 5]);
    expect(mpiSizes({}, { CCLAB_MPI_NP: "3" })).toEqual([3]);
    expect(mpiSizes({ np: 4 }, { CCLAB_MPI_NP: "3" })).toEqual([4]);
    expect(() => mpiSizes({}, { CCLAB_MPI_NP: "two" })).toThrow(/CCLAB_MPI_NP/);
  });
});

describe.skipIf(skip)("hand-rolled algorithms vs MPI's built-in collectives under mpirun", () => {
  const algs = allAlgorithms();
  for (const np of [2, 3, 4, 5]) {
    it(`np=${np}: every registered algorithm agrees with MPI (${runs} cases each)`, () => {
      const { status, out } = cclabVerify(String(np), ["--seed", String(seed), "--runs", String(runs)]);
      expect(out, out).not.toMatch(/FAIL/);
      expect(status, out).toBe(0);
      for (const a of algs) {
        expect(out, `${a.collective}/${a.name} at np=${np}`).toContain(
          `ok np=${np} ${a.collective}/${a.name}: ${runs} cases agree with MPI's built-in`,
        );
      }
      expect(out).toContain(`np=${np}: ${algs.length} algorithms agree with MPI's built-in`);
      expect(out).toContain(`all sizes passed`);
    });
  }

  it("catches a ring all-reduce that skips a step, and prints a replay command that reproduces it", () => {
    const file = "test/fixtures/mpi/broken-ring.ts";
    const args = ["--algorithm-file", file, "--seed", String(seed), "--runs", "20"];
    const { status, out } = cclabVerify("4", args);
    expect(status, out).toBe(1);
    const fail = out.match(
      /^FAIL np=4 allreduce\/ring_skips_step: differs from MPI's built-in; minimal case after \d+ shrinks: allreduce\/ring_skips_step, n=\d+, count=\d+, .*: rank \d+ \(world \d+\): output\[\d+\] = .*, (MPI's built-in|the sequential oracle) gives .*$/m,
    );
    expect(fail, out).not.toBeNull();
    const replay = `cclab verify --backend mpi -n 4 --collective allreduce --algorithm ring_skips_step --algorithm-file ${file} --seed ${seed} --runs 20`;
    expect(out).toContain(`replay: ${replay}`);
    expect(out).toMatch(/1 of 1 sizes failed/);
    // The replay line, run as printed, fails the same way on the same minimal case.
    const again = cclabVerify("4", replay.split(" ").slice(6));
    expect(again.status, again.out).toBe(1);
    expect(again.out).toContain(fail?.[0]);
  });
});
