/**
 * `cclab calibrate` and `cclab model --machine`: the machine file holds this machine's measured
 * alpha, beta and gamma (from MPI's floors), the model takes them unless a flag overrides one,
 * and a file that is not a machine file is refused naming it and --machine. Needs Open MPI for
 * the measuring part (skipped without it, as every MPI test). May write only in its own temporary
 * directory.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { machineParams, pointOf, readMachineFile } from "../src/model/calibrate.js";
import { modelTime } from "../src/schedule/model.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";
import { mpiSkipReason } from "./support/mpi.js";

const dir = mkdtempSync(join(tmpdir(), "cclab-calibrate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (args: string[]) =>
  execFileSync(process.execPath, ["src/cli/bin.js", ...args], { encoding: "utf8", stdio: "pipe", timeout: 120_000 });
const fails = (args: string[]) => {
  try {
    cli(args);
    return "";
  } catch (e) {
    return String((e as { stderr: string }).stderr);
  }
};

describe.skipIf(mpiSkipReason("test/calibrate.test.ts") !== "")("cclab calibrate", () => {
  it("writes a machine file that model --machine reads", () => {
    const file = join(dir, "m.json");
    const said = cli(["calibrate", "--bytes", "1M", "--reps", "3", "-o", file]);
    expect(said).toMatch(/^floors \(C, 2 ranks, median of 3\): ping-pong [\d.]+ us/);
    expect(said).toMatch(/by buffer size \(GB\/s\)/);
    const m = readMachineFile(file);
    const measured = m.measured as NonNullable<typeof m.measured>;
    // --bytes 1M: the default sizes up to it, then 1M itself; the scalars are the largest size's.
    expect(m.bySize?.map((q) => q.bytes)).toEqual([1024, 8192, 65536, 524288, 1048576]);
    expect(measured.floorsBySize?.map((f) => f.bytes)).toEqual([1024, 8192, 65536, 524288, 1048576]);
    expect(m.bySize).toEqual(measured.floorsBySize?.map(pointOf));
    expect(m.beta).toBe(m.bySize?.[4]?.beta);
    expect(m.gamma).toBeCloseTo(1 / (measured.floors.sumFloat32GBps * 1e3), 12);
    expect(m.alpha).toBeGreaterThan(measured.overheadUs);
    const model = cli(["model", "allreduce", "--algorithm", "ring", "-n", "4", "--machine", file]);
    expect(model).toContain(`alpha ${Number(m.alpha.toPrecision(4))} µs`);
    const own = cli(["model", "allreduce", "--algorithm", "ring", "-n", "4", "--machine", file, "--alpha", "7"]);
    expect(own).toMatch(/alpha 7 µs/);
  });
});

/** A version 2 machine file: in cache (up to 64 KiB) 10 GB/s, from memory (32 MiB) 2 GB/s. */
const sized = (over: Record<string, unknown> = {}) => ({
  cclab: "machine",
  version: 2,
  alpha: 2,
  beta: 5e-4,
  gamma: 1e-4,
  copy: 1e-4,
  bySize: [
    { bytes: 1 << 16, beta: 1e-4, gamma: 5e-5, copy: 2e-5 },
    { bytes: 1 << 25, beta: 5e-4, gamma: 1e-4, copy: 1e-4 },
  ],
  measured: { cores: 2 },
  ...over,
});

describe("the machine's costs by buffer size", () => {
  const rd = findAlgorithm("allreduce", "recursive_doubling", { op: "test" });
  // n = 2: one exchange of the whole buffer, then one reduction of it: alpha + (beta + gamma) · S.
  const time = (file: string, bytes: number) =>
    modelTime(
      rd,
      makeCall({ collective: "allreduce", size: 2, count: bytes / 4, dtype: "float32" }, rd),
      machineParams(readMachineFile(file)),
    ).time;
  const file = join(dir, "sized.json");
  writeFileSync(file, JSON.stringify(sized()));

  it("beta and gamma are the file's at the call's size, interpolated in log2(size) between sizes", () => {
    expect(time(file, 1 << 16)).toBeCloseTo(2 + (1e-4 + 5e-5) * (1 << 16), 9);
    expect(time(file, 1 << 25)).toBeCloseTo(2 + (5e-4 + 1e-4) * (1 << 25), 9);
    // Held at the ends: 1 KiB takes 64 KiB's costs, 64 MiB 32 MiB's.
    expect(time(file, 1 << 10)).toBeCloseTo(2 + (1e-4 + 5e-5) * (1 << 10), 9);
    expect(time(file, 1 << 26)).toBeCloseTo(2 + (5e-4 + 1e-4) * (1 << 26), 9);
    // 2 MiB is 5 of log2's 9 steps from 64 KiB to 32 MiB.
    const t = 5 / 9;
    const beta = 1e-4 + t * 4e-4;
    const gamma = 5e-5 + t * 5e-5;
    expect(time(file, 1 << 21)).toBeCloseTo(2 + (beta + gamma) * (1 << 21), 9);
    // One beta for every size (version 1, the largest size's) predicts the in-cache call 4x slower in its bytes.
    const flat = join(dir, "flat.json");
    writeFileSync(flat, JSON.stringify({ cclab: "machine", version: 1, alpha: 2, beta: 5e-4, gamma: 1e-4 }));
    expect(time(flat, 1 << 16)).toBeCloseTo(2 + (5e-4 + 1e-4) * (1 << 16), 9);
  });

  it("cclab model --machine uses them, a flag given wins, and copies are charged", () => {
    const json = (args: string[]) =>
      JSON.parse(cli(["model", "allreduce", "-n", "2", "--bytes", "64K", "--machine", file, "--json", ...args])) as {
        modelUs: number;
      };
    expect(json(["--algorithm", "recursive_doubling"]).modelUs).toBeCloseTo(2 + 1.5e-4 * 65536, 6);
    // --beta given: the file's beta by size goes too; its gamma by size stays.
    expect(json(["--algorithm", "recursive_doubling", "--beta", "0.001"]).modelUs).toBeCloseTo(
      2 + (1e-3 + 5e-5) * 65536,
      6,
    );
    // Rabenseifner out of place first copies its input into the output: the copy cost shows.
    const rab = json(["--algorithm", "rabenseifner"]).modelUs;
    writeFileSync(
      join(dir, "nocopy.json"),
      JSON.stringify(sized({ copy: 0, bySize: sized().bySize.map((q) => ({ ...q, copy: 0 })) })),
    );
    const free = JSON.parse(
      cli([
        "model",
        "allreduce",
        "-n",
        "2",
        "--bytes",
        "64K",
        "--algorithm",
        "rabenseifner",
        "--json",
        "--machine",
        join(dir, "nocopy.json"),
      ]),
    ) as { modelUs: number };
    expect(rab).toBeGreaterThan(free.modelUs);
    expect(cli(["model", "allreduce", "-n", "2", "--bytes", "64K", "--algorithm", "ring", "--machine", file])).toMatch(
      /beta 0\.0001 µs\/B \(10 GB\/s\), gamma 0\.00005 µs\/B, copy 0\.00002 µs\/B, at 64 KiB from the machine's sizes/,
    );
  });

  it("more ranks than the cores it was measured on: a note says the model does not charge it", () => {
    const run = (n: string) =>
      execFileSync(
        "sh",
        [
          "-c",
          `"${process.execPath}" src/cli/bin.js model allreduce --algorithm ring -n ${n} --machine "${file}" 2>&1 >/dev/null`,
        ],
        { encoding: "utf8" },
      );
    expect(run("4")).toMatch(/note: 4 ranks on the 2 cores .*sized.json was measured on: ranks share cores/);
    expect(run("2")).toBe("");
  });
});

describe("a machine file is checked", () => {
  it.each([
    ["not JSON", "{", /m1.json: not JSON .* make one with cclab calibrate -o FILE/],
    ["another JSON", '{"alpha": 1}', /not a cclab machine file/],
    [
      "a negative beta",
      '{"cclab":"machine","version":1,"alpha":1,"beta":-1,"gamma":0}',
      /'beta' must be a finite non-negative number, got -1/,
    ],
    ["an unknown version", JSON.stringify(sized({ version: 3 })), /m1.json: 'version' must be 1 or 2, got 3/],
    [
      "version 2 without sizes",
      JSON.stringify(sized({ bySize: undefined })),
      /m1.json: 'bySize' must be a list of 1 to 64/,
    ],
    [
      "version 2 without copy",
      JSON.stringify(sized({ copy: "fast" })),
      /m1.json: 'copy' must be a finite non-negative number, got "fast"/,
    ],
    [
      "sizes out of order",
      JSON.stringify(sized({ bySize: [sized().bySize[1], sized().bySize[0]] })),
      /m1.json: 'bySize\[1\].bytes' must be a whole number of bytes above the size before it \(33554432\), got 65536: sizes increase/,
    ],
    [
      "a size's cost missing",
      JSON.stringify(sized({ bySize: [{ bytes: 1024, beta: 1e-4, gamma: 1e-4 }] })),
      /m1.json: 'bySize\[0\].copy' must be a finite non-negative number, got undefined/,
    ],
    [
      "a size not an object",
      JSON.stringify(sized({ bySize: [7] })),
      /m1.json: 'bySize\[0\]' must be an object \{bytes, beta, gamma, copy\}, got 7/,
    ],
    [
      "no cores",
      JSON.stringify(sized({ measured: { cores: 0 } })),
      /m1.json: 'measured.cores' must be a whole number of cores >= 1, got 0/,
    ],
  ])("%s", (_what, text, message) => {
    const file = join(dir, "m1.json");
    writeFileSync(file, text);
    expect(() => readMachineFile(file)).toThrow(message);
    expect(fails(["model", "allreduce", "--algorithm", "ring", "-n", "4", "--machine", file])).toMatch(
      /model: argument '--machine'/,
    );
  });
  it("a directory, and --machine with --topology", () => {
    expect(() => readMachineFile(dir)).toThrow(/not a regular file/);
    const file = join(dir, "m2.json");
    writeFileSync(file, '{"cclab":"machine","version":1,"alpha":1,"beta":0.001,"gamma":0}');
    expect(readFileSync(file, "utf8")).toContain("machine");
    expect(
      fails(["model", "allreduce", "--algorithm", "ring", "-n", "4", "--machine", file, "--topology", "torus:2x2"]),
    ).toMatch(/--machine': sets the alpha-beta model's parameters; with --topology/);
  });
});
