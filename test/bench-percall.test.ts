/**
 * cclab bench's per-call timing (issue 26): the p99 by nearest rank, the per-call mean that a
 * single stall moves, each time taken across ranks as nccl-tests' -a says (on the fake NCCL
 * engine's ranks, in process), and on MPI the table's p99 column, the header's -a and --json's
 * per-call series for sizes up to 1 MiB (none above).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readDevice, writeDevice } from "../src/backends/nccl/index.js";
import { benchCommOf, measure } from "../src/bench/measure.js";
import { checkOptions, NO_PROGRESS } from "../src/bench/plan.js";
import { headLines } from "../src/bench/report.js";
import { resultOf } from "../src/bench/run.js";
import { AVERAGES, type Average, perCall, quantile, ratios, SERIES_MAX_BYTES } from "../src/bench/stats.js";
import type { BenchComm, BenchOptions, BenchResult } from "../src/bench/types.js";
import { InvalidArgumentError } from "../src/core/errors.js";
import { benchOptions } from "./support/bench-options.js";
import { mpiSkipReason } from "./support/mpi.js";
import { runFakeRanks } from "./support/nccl-fake.js";

describe("per-call figures", () => {
  // 199 calls of 8 µs and one that waited 4 ms on a descheduled peer.
  const us = [...new Array(199).fill(8), 4000];

  it("one stall moves the mean and the max, not the median or the p99", () => {
    const pc = perCall(us);
    expect(pc).toMatchObject({ min: 8, median: 8, p99: 8, max: 4000, calls: 200 });
    expect(pc.mean).toBeCloseTo((199 * 8 + 4000) / 200, 9);
  });

  it("p99 is by nearest rank: the 99th of 100 values, the 990th of 1000", () => {
    const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(hundred, 0.99)).toBe(99);
    expect(quantile(hundred, 0.5)).toBe(50);
    const thousand = Float64Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(quantile(thousand, 0.99)).toBe(990);
    expect(quantile([7], 0.99)).toBe(7);
    expect(() => quantile([], 0.99)).toThrow(RangeError);
    expect(() => perCall([])).toThrow(RangeError);
  });

  it("perCall sorts a copy, not the caller's series", () => {
    const series = Float64Array.from([3, 1, 2]);
    expect(perCall(series).median).toBe(2);
    expect(Array.from(series)).toEqual([3, 1, 2]);
  });

  it("the ratio compares per-call medians, and nccl-tests' means beside", () => {
    expect(ratios({ median: 8, mean: 27.96 }, { median: 4, mean: 4.2 })).toEqual({ median: 0.5, mean: 4.2 / 27.96 });
  });
});

describe("across ranks, as nccl-tests' -a", () => {
  it("0 rank 0's, 1 the mean, 2 the minimum, 3 the maximum, element by element", async () => {
    // Rank r's times: call 0 took 10 + r µs, call 1 40 - 10 r (rank 3: 10), call 2 -5 on rank 2 only.
    const mine = (r: number) => Float64Array.from([10 + r, 40 - 10 * r, r === 2 ? -5 : 7]);
    const got = await runFakeRanks(4, async (c) => {
      const bc = benchCommOf(c, "NCCL", { write: (d, s) => writeDevice(d, s), read: (v) => readDevice(v) });
      const out: number[][] = [];
      for (const a of AVERAGES) out.push(Array.from(await bc.acrossRanks(mine(c.rank), a)));
      return out;
    });
    for (const perRank of got) {
      expect(perRank).toEqual([
        [10, 40, 7],
        [11.5, 25, (7 * 3 - 5) / 4],
        [10, 10, -5],
        [13, 40, 7],
      ]);
    }
  });

  // Two ranks of the fake engine, one 1 KiB size, three calls a variant.
  const options = (over: Partial<BenchOptions>): BenchOptions =>
    benchOptions({ backend: "nccl", nranks: 2, maxBytes: 1024, iters: 3, warmupIters: 1, ...over });

  it("the sweep takes every round's time across ranks as its -a says, and the header says which", async () => {
    const wants: Record<Average, string> = {
      0: "rank 0's, as nccl-tests' -a 0",
      1: "the mean over ranks, as nccl-tests' -a 1",
      2: "the minimum over ranks, as nccl-tests' -a 2",
      3: "the maximum over ranks, as nccl-tests' -a 3",
    };
    for (const a of AVERAGES) {
      const o = options({ average: a });
      const asked = await runFakeRanks(2, async (c) => {
        const bc = benchCommOf(c, "NCCL", { write: (d, s) => writeDevice(d, s), read: (v) => readDevice(v) });
        const hows: Average[] = [];
        const spy: BenchComm = {
          ...bc,
          acrossRanks: (xs, how) => {
            hows.push(how);
            return bc.acrossRanks(xs, how);
          },
        };
        const run = await measure(spy, o, NO_PROGRESS);
        expect(run.rows[0]?.outOfPlace.wrong).toBe(0);
        return hows;
      });
      // Three variants (out of place, in place, built-in), each its rounds once, on both ranks.
      for (const hows of asked) expect(hows).toEqual([a, a, a]);
      const head = headLines(resultOf(o, [], { builtinName: "ncclAllReduce" }), { min: 1024, max: 1024, factor: 2 });
      expect(head.find((l) => l.startsWith("# time:"))).toContain(`(each round's time ${wants[a]})`);
      expect(resultOf(o, [], { builtinName: null }).average).toBe(a);
    }
    // Without -a: the mean, as nccl-tests.
    expect(resultOf(options({}), [], { builtinName: null }).average).toBe(1);
  });

  it("a library caller's -a outside 0 - 3, or on sim, is refused", () => {
    expect(() => checkOptions(options({ average: 4 as Average }))).toThrow(InvalidArgumentError);
    expect(() => checkOptions(options({ average: 4 as Average }))).toThrow(
      /bench: argument '-a\/--average': must be 0 .* got 4/,
    );
    expect(() => checkOptions(options({ average: 3, backend: "sim" }))).toThrow(
      /argument '-a\/--average': takes measured times across ranks .* sim's times are modelled/,
    );
    expect(() => checkOptions(options({ average: 3 }))).not.toThrow();
  });

  it("a library caller's root outside the ranks is refused, naming the operation and the flag", () => {
    for (const root of [-1, 2, 0.5]) {
      expect(() => checkOptions(options({ root }))).toThrow(InvalidArgumentError);
      expect(() => checkOptions(options({ root }))).toThrow(
        new RegExp(`bench: argument '-r/--root': must be a rank in \\[0, 2\\), got ${root}`),
      );
    }
    expect(() => checkOptions(options({ root: 1 }))).not.toThrow();
  });

  it("-a outside 0 - 3 is refused, naming the flag", () => {
    const r = spawnSync(process.execPath, ["src/cli/bin.js", "bench", "-a", "4"], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/argument '-a': must be an integer in \[0, 3\], got 4/);
    // On sim there is nothing to take across ranks: said, not ignored.
    const sim = spawnSync(process.execPath, ["src/cli/bin.js", "bench", "-a", "3", "--no-progress"], {
      encoding: "utf8",
    });
    expect(sim.status).not.toBe(0);
    expect(sim.stderr).toMatch(
      /argument '-a\/--average': takes measured times across ranks .* sim's times are modelled/,
    );
  });
});

const noMpi = mpiSkipReason("cclab bench per-call test");

describe.skipIf(noMpi !== "")("cclab bench --backend mpi: p99 and the per-call series", () => {
  it("prints p99 between median and max, -a 3 in the header and --json, and every call's time up to 1 MiB only", () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-percall-"));
    const json = join(dir, "bench.json");
    const iters = 12;
    const r = spawnSync(
      process.execPath,
      [
        "src/cli/bin.js",
        "bench",
        "--backend",
        "mpi",
        "-n",
        "2",
        "--algorithm",
        "ring",
        "-b",
        "512K",
        "-e",
        "2M",
        "-f",
        "4",
        "--iters",
        String(iters),
        "-w",
        "1",
        "-o",
        json,
        "--no-progress",
        "-a",
        "3",
      ],
      { encoding: "utf8", timeout: 120_000 },
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/#.*\bmin +median +p99 +max\b/);
    expect(r.stdout).toMatch(/each call's time the maximum over ranks, as nccl-tests' -a 3/);
    const result = JSON.parse(readFileSync(json, "utf8")) as BenchResult;
    expect(result.average).toBe(3);
    expect(result.rows.map((row) => row.size)).toEqual([512 * 1024, 2 * 1024 * 1024]);
    for (const row of result.rows) {
      for (const m of [row.outOfPlace, row.inPlace, row.builtin]) {
        const pc = m?.perCall;
        expect(pc?.calls).toBe(iters);
        expect(pc && pc.min <= pc.median && pc.median <= pc.p99 && pc.p99 <= pc.max).toBe(true);
        if (row.size <= SERIES_MAX_BYTES) {
          expect(m?.series).toHaveLength(iters);
          expect(Math.max(...(m?.series ?? []))).toBeCloseTo(pc?.max ?? -1, 2);
        } else expect(m?.series).toBeUndefined();
      }
    }
  });
});
