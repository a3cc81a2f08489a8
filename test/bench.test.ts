/**
 * cclab bench: nccl-tests' bandwidth arithmetic (checked against rows nccl-tests printed), size
 * parsing and semantics, the sim backend end to end (table layout, #wrong, JSON, SVG), a
 * deliberately broken algorithm failing the run, and (where MPI is installed) a tiny mpi run.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { countWrong, expectedOutput, fillPeriodic, PERIOD, patterns } from "../src/bench/data.js";
import { floorsLine, parseFloors } from "../src/bench/floors.js";
import {
  algBandwidth,
  benchChartSvg,
  busBandwidth,
  busFactor,
  parseBytes,
  runBench,
  shapeOf,
  sizeSweep,
} from "../src/bench/index.js";
import type { BenchOptions, BenchResult } from "../src/bench/types.js";
import { benchOptions } from "./support/bench-options.js";
import { mpiSkipReason } from "./support/mpi.js";

const BROKEN = "test/fixtures/bench/broken_allreduce.ts";

const options = benchOptions;

async function capture(o: BenchOptions): Promise<{ code: number; lines: string[]; err: string[] }> {
  const lines: string[] = [];
  const err: string[] = [];
  const code = await runBench(o, { out: (l) => lines.push(l), err: (l) => err.push(l) });
  return { code, lines, err };
}

/** Rows of the table: lines that start with a space and a number. */
const rowsOf = (lines: string[]) => lines.filter((l) => /^ +\d/.test(l)).map((l) => l.trim().split(/\s+/));

describe("bus bandwidth, as nccl-tests' doc/PERFORMANCE.md defines it", () => {
  const n = [2, 3, 4, 8, 16];
  const formulas: Record<string, (n: number) => number> = {
    allreduce: (k) => (2 * (k - 1)) / k,
    reducescatter: (k) => (k - 1) / k,
    allgather: (k) => (k - 1) / k,
    alltoall: (k) => (k - 1) / k,
    gather: (k) => (k - 1) / k,
    scatter: (k) => (k - 1) / k,
    broadcast: () => 1,
    reduce: () => 1,
  };
  for (const [c, f] of Object.entries(formulas)) {
    it(`${c}: factor ${f(4)} at n = 4`, () => {
      for (const k of n) expect(busFactor(c as BenchOptions["collective"], k)).toBeCloseTo(f(k), 12);
    });
  }

  // Rows nccl-tests printed (size B, time us, algbw, busbw, ranks), from published logs.
  const published = [
    { c: "allreduce", size: 8589934592, us: 85820, algbw: 100.09, busbw: 187.67, n: 16 },
    { c: "allreduce", size: 4294967296, us: 42381, algbw: 101.34, busbw: 190.02, n: 16 },
    { c: "allgather", size: 8589934592, us: 21012.9, algbw: 408.79, busbw: 357.69, n: 8 },
    { c: "allgather", size: 67108864, us: 250.55, algbw: 267.85, busbw: 234.37, n: 8 },
  ] as const;
  for (const p of published) {
    it(`${p.c} ${p.size} B in ${p.us} us on ${p.n} ranks: algbw ${p.algbw}, busbw ${p.busbw}`, () => {
      expect(algBandwidth(p.size, p.us)).toBeCloseTo(p.algbw, 1);
      expect(busBandwidth(p.c, p.n, p.size, p.us)).toBeCloseTo(p.busbw, 1);
    });
  }

  it("an empty or instant call has zero bandwidth, not NaN or Infinity", () => {
    expect(algBandwidth(0, 5)).toBe(0);
    expect(algBandwidth(1024, 0)).toBe(0);
    expect(busBandwidth("allreduce", 1, 1024, 10)).toBe(0);
  });
});

describe("sizes", () => {
  it.each([
    ["8", 8],
    ["1K", 1024],
    ["1k", 1024],
    ["64M", 64 * 1024 ** 2],
    ["1G", 1024 ** 3],
    ["1.5K", 1536],
    ["4KB", 4096],
    ["2MiB", 2 * 1024 ** 2],
  ])("parseBytes(%s) = %d", (s, b) => {
    expect(parseBytes(s)).toBe(b);
  });
  it.each(["", "K", "1X", "-1", "1.2.3M"])("parseBytes(%j) throws", (s) => {
    expect(() => parseBytes(s)).toThrow(/size/);
  });
  it("sweeps like nccl-tests -b -e -f", () => {
    expect(sizeSweep(1024, 8192, 2)).toEqual([1024, 2048, 4096, 8192]);
    expect(sizeSweep(8, 1024, 4)).toEqual([8, 32, 128, 512]);
    expect(sizeSweep(1024, 1024, 2)).toEqual([1024]);
    expect(() => sizeSweep(1024, 8, 2)).toThrow();
    expect(() => sizeSweep(8, 1024, 1)).toThrow();
  });
  it("per-rank collectives count per rank and report the whole array, rounded to a multiple of n", () => {
    expect(shapeOf("allreduce", 4, 1024, "float32")).toEqual({ count: 256, size: 1024 });
    expect(shapeOf("allgather", 4, 1024, "float32")).toEqual({ count: 64, size: 1024 });
    expect(shapeOf("reducescatter", 3, 1024, "float32")).toEqual({ count: 85, size: 1020 });
    expect(shapeOf("alltoall", 4, 8, "float64")).toEqual({ count: 0, size: 0 });
    expect(shapeOf("broadcast", 4, 1000, "float64")).toEqual({ count: 125, size: 1000 });
    expect(shapeOf("gather", 8, 1 << 20, "float16")).toEqual({ count: 65536, size: 1 << 20 });
  });
});

describe("the exact-input oracle", () => {
  it("counts every element that differs, including one flipped in a long buffer", () => {
    const p = patterns("float32", { name: "sum" }, 4);
    const [e] = expectedOutput("allreduce", p, 0, 4, 5000, 0);
    const got = new Float32Array(5000);
    fillPeriodic(got, p.reduced);
    expect(countWrong(got, e!.table, e!.start)).toBe(0);
    got[4321] = (got[4321] as number) + 1;
    got[PERIOD] = Number.NaN;
    expect(countWrong(got, e!.table, e!.start)).toBe(2);
  });
});

describe("cclab bench --backend sim", () => {
  it("prints nccl-tests' table with the model's times, #wrong 0, and the closing lines", async () => {
    const { code, lines } = await capture(options());
    const text = lines.join("\n");
    expect(code).toBe(0);
    expect(text).toContain("sim: times from the alpha-beta model, not measured");
    const header = lines.find((l) => /^#\s+size\s/.test(l))!;
    expect(header.split(/\s+/).filter(Boolean)).toEqual([
      "#",
      "size",
      "count",
      "type",
      "redop",
      "root",
      "time",
      "algbw",
      "busbw",
      "#wrong",
      "time",
      "algbw",
      "busbw",
      "#wrong",
    ]);
    expect(text).toMatch(/^# +out-of-place +in-place$/m);
    const rows = rowsOf(lines);
    expect(rows.map((r) => Number(r[0]))).toEqual([1024, 2048, 4096, 8192, 16384, 32768, 65536]);
    for (const r of rows) {
      expect(r).toHaveLength(13);
      expect(r.slice(2, 5)).toEqual(["float32", "sum", "-1"]);
      expect(r[8]).toBe("0");
      expect(r[12]).toBe("0");
      // busbw = algbw · 2(n-1)/n at n = 4 (to the printed precision).
      expect(Number(r[7])).toBeCloseTo(Number(r[6]) * 1.5, 1);
    }
    expect(lines).toContain("# Out of bounds values : 0 OK");
    expect(text).toMatch(/^# Avg bus bandwidth {4}: \d+(\.\d+)?$/m);
  });

  it("every collective, dtype and op checks clean, rooted ones at a non-zero root", async () => {
    const cases: Partial<BenchOptions>[] = [
      { collective: "allgather", algorithm: "auto", dtype: "float16" },
      { collective: "reducescatter", algorithm: "auto", dtype: "int8", op: { name: "max" } },
      { collective: "alltoall", algorithm: "auto", nranks: 3 },
      { collective: "broadcast", algorithm: "auto", root: 2, dtype: "uint64" },
      { collective: "reduce", algorithm: "auto", root: 1, dtype: "bfloat16", op: { name: "avg" } },
      { collective: "gather", algorithm: "auto", root: 3, nranks: 5 },
      { collective: "scatter", algorithm: "auto", root: 1, dtype: "int32" },
      { collective: "allreduce", algorithm: "double_binary_tree", dtype: "float64", op: { name: "prod" } },
    ];
    for (const c of cases) {
      const { code, lines } = await capture(options({ minBytes: 8, maxBytes: 16 * 1024, stepFactor: 8, ...c }));
      expect(lines, JSON.stringify(c)).toContain("# Out of bounds values : 0 OK");
      expect(code).toBe(0);
    }
  });

  it("sizes above --sim-max-bytes are modelled only: #wrong N/A, and the header says so", async () => {
    const { code, lines } = await capture(options({ simMaxBytes: 4096, maxBytes: 16384 }));
    expect(code).toBe(0);
    expect(lines.join("\n")).toContain("up to 4 KiB is executed once");
    const rows = rowsOf(lines);
    expect(rows.map((r) => r[8])).toEqual(["0", "0", "0", "N/A", "N/A"]);
  });

  it("--json writes every row, the totals and the model's parameters", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-bench-"));
    const json = join(dir, "bench.json");
    const { code } = await capture(options({ json, maxBytes: 4096 }));
    expect(code).toBe(0);
    const r = JSON.parse(readFileSync(json, "utf8")) as BenchResult;
    expect(r).toMatchObject({
      tool: "cclab bench",
      collective: "allreduce",
      algorithm: "ring",
      backend: "sim",
      nranks: 4,
      dtype: "float32",
      op: "sum",
      timing: "model",
      builtinName: null,
      outOfBounds: 0,
      model: { alpha: 5, gamma: 0 },
    });
    expect(r.rows).toHaveLength(3);
    const row = r.rows[0]!;
    expect(Object.keys(row).sort()).toEqual(
      ["size", "count", "type", "redop", "root", "algorithm", "outOfPlace", "inPlace", "builtin", "ratio"].sort(),
    );
    expect(Object.keys(row.outOfPlace).sort()).toEqual(["algbw", "busbw", "timeUs", "wrong"]);
    expect(row).toMatchObject({ size: 1024, count: 256, root: -1, builtin: null, ratio: null });
    expect(r.avgBusBw).toBeGreaterThan(0);
  });

  it("--chart draws busbw against size: the algorithm's line and the link's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-bench-"));
    const chart = join(dir, "bench.svg");
    await capture(options({ chart, maxBytes: 1 << 20 }));
    const svg = readFileSync(chart, "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    const lines = [...svg.matchAll(/<g class="line" data-name="([^"]+)">\s*<polyline points="([^"]+)"/g)];
    expect(lines.map((m) => m[1])).toEqual(["allreduce/ring (hand-rolled, model)", "link bandwidth 1/beta"]);
    for (const m of lines) expect(m[2]!.split(" ")).toHaveLength(11);
    expect(svg).toContain("busbw (GB/s)");
    expect(svg).toMatch(/class="xtick"[^>]*>1 KiB</);
    expect(svg).toMatch(/class="xtick"[^>]*>1 MiB</);
  });

  it("the chart has a built-in line when the result has one", () => {
    const base: BenchResult = {
      tool: "cclab bench",
      collective: "allreduce",
      algorithm: "ring",
      backend: "mpi",
      nranks: 4,
      dtype: "float32",
      op: "sum",
      root: 0,
      iters: 20,
      warmupIters: 5,
      timing: "measured",
      builtinName: "MPI_Allreduce",
      rows: [1024, 2048].map((size) => ({
        size,
        count: size / 4,
        type: "float32",
        redop: "sum",
        root: -1,
        algorithm: "ring",
        outOfPlace: { timeUs: 10, algbw: 0.1, busbw: 0.15, wrong: 0 },
        inPlace: { timeUs: 10, algbw: 0.1, busbw: 0.15, wrong: 0 },
        builtin: { timeUs: 5, algbw: 0.2, busbw: 0.3, wrong: 0 },
        ratio: { median: 0.5, mean: 0.5 },
      })),
      outOfBounds: 0,
      builtinWrong: 0,
      avgBusBw: 0.15,
    };
    const names = [...benchChartSvg(base).matchAll(/data-name="([^"]+)"/g)].map((m) => m[1]);
    expect(names).toEqual(["allreduce/ring (hand-rolled)", "MPI_Allreduce (built-in)"]);
  });

  it("a broken algorithm's wrong results make #wrong non-zero, FAILED, and exit 1", async () => {
    const { code, lines } = await capture(options({ algorithmFile: BROKEN, algorithm: "broken_ring", maxBytes: 2048 }));
    expect(code).toBe(1);
    const rows = rowsOf(lines);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(Number(r[8])).toBeGreaterThan(0);
    expect(lines.find((l) => l.startsWith("# Out of bounds values"))).toMatch(/: [1-9]\d* FAILED$/);
  });

  it("the command exits non-zero for the broken algorithm", () => {
    const r = spawnSync(
      process.execPath,
      [
        "src/cli/bin.js",
        "bench",
        "--algorithm-file",
        BROKEN,
        "--algorithm",
        "broken_ring",
        "-b",
        "1K",
        "-e",
        "1K",
        "--no-progress",
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(r.stdout).toMatch(/FAILED/);
    expect(r.status).toBe(1);
  });
});

describe("cclab bench --backend nccl", () => {
  it("where NCCL cannot run, says why and how to get it, and exits 2", async (ctx) => {
    const { ncclStatus } = await import("../src/bench/nccl.js");
    if ((await ncclStatus()).ok) ctx.skip();
    const { code, lines, err } = await capture(options({ backend: "nccl", nranks: 2 }));
    expect(code).toBe(2);
    expect(lines).toEqual([]);
    expect(err[0]).toMatch(/^nccl backend (unavailable|not built): /);
    expect(err.at(-1)).toMatch(/^to get it: /);
  });
});

const noMpi = mpiSkipReason("cclab bench mpi test");

describe("--floors' output is checked before it is printed", () => {
  const good = { bytes: 4096, reps: 20, pingPongUs: 0.4, sendrecvGBps: 7, memcpyGBps: 50, sumFloat32GBps: 8 };
  it("a well-formed line is read, whatever the program printed before it", () => {
    expect(parseFloors(`noise\n${JSON.stringify(good)}\n`)).toEqual(good);
    expect(floorsLine(good)).toBe(
      "# floors (C on this machine, 2 ranks, median of 20): MPI ping-pong 0.40 us (half round trip, 8 B); at 4096 B: MPI_Sendrecv 7.00 GB/s, memcpy 50.00 GB/s, float32 sum 8.00 GB/s",
    );
  });
  it.each([
    ["no JSON", "MPI_Init failed", /printed no JSON line \(got 'MPI_Init failed'\)/],
    ["a negative figure", JSON.stringify({ ...good, memcpyGBps: -1 }), /memcpyGBps is -1, not a positive number/],
    ["a missing figure", JSON.stringify({ ...good, pingPongUs: undefined }), /pingPongUs is undefined/],
    ["infinity as text", JSON.stringify({ ...good, sumFloat32GBps: "inf" }), /sumFloat32GBps is "inf"/],
  ])("%s is refused", (_what, text, message) => {
    expect(() => parseFloors(text)).toThrow(message);
  });
});

describe.skipIf(noMpi !== "")("cclab bench --backend mpi", () => {
  it("-n 2 -b 1K -e 4K --floors relaunches under mpirun and prints the C floors, hand-rolled and MPI_Allreduce side by side", () => {
    const r = spawnSync(
      process.execPath,
      [
        "src/cli/bin.js",
        "bench",
        "allreduce",
        "--backend",
        "mpi",
        "-n",
        "2",
        "--algorithm",
        "ring",
        "-b",
        "1K",
        "-e",
        "4K",
        "--iters",
        "5",
        "-w",
        "1",
        "--floors",
        "--no-progress",
      ],
      { encoding: "utf8", timeout: 90_000 },
    );
    const out = `${r.stdout}\n${r.stderr}`;
    expect(r.status, out).toBe(0);
    expect(out).toMatch(/MPI_Allreduce \(built-in\)/);
    expect(r.stdout).toMatch(
      /# floors \(C on this machine, 2 ranks, median of 20\): MPI ping-pong \d+\.\d+ us .* at 4096 B: MPI_Sendrecv \d+\.\d+ GB\/s, memcpy \d+\.\d+ GB\/s, float32 sum \d+\.\d+ GB\/s/,
    );
    const rows = rowsOf(r.stdout.split("\n"));
    expect(rows.map((x) => x[0])).toEqual(["1024", "2048", "4096"]);
    for (const x of rows) {
      // nccl-tests' 13 columns, the built-in's time and busbw, the per-call min/median/p99/max,
      // the built-in's median and the ratio by median and by mean.
      expect(x).toHaveLength(22);
      expect([x[8], x[12]]).toEqual(["0", "0"]);
      expect(Number(x[13])).toBeGreaterThan(0);
      const [min, median, p99, max] = [x[15], x[16], x[17], x[18]].map(Number) as [number, number, number, number];
      expect(min).toBeLessThanOrEqual(median);
      expect(median).toBeLessThanOrEqual(p99);
      expect(p99).toBeLessThanOrEqual(max);
      expect(Number(x[20])).toBeGreaterThan(0);
      expect(Number(x[21])).toBeGreaterThan(0);
    }
    expect(out).toContain("# Out of bounds values : 0 OK");
    expect(out).toMatch(/# Peak memory per rank at 4 KiB/);
  });
});
