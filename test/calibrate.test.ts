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
import { readMachineFile } from "../src/model/calibrate.js";
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
    const m = readMachineFile(file);
    expect(m.alpha).toBeCloseTo(m.measured.floors.pingPongUs + m.measured.overheadUs, 9);
    expect(m.beta).toBeCloseTo(1 / (m.measured.floors.sendrecvGBps * 1e3), 12);
    const model = cli(["model", "allreduce", "--algorithm", "ring", "-n", "4", "--machine", file]);
    expect(model).toContain(`alpha ${Number(m.alpha.toFixed(3))}`);
    const own = cli(["model", "allreduce", "--algorithm", "ring", "-n", "4", "--machine", file, "--alpha", "7"]);
    expect(own).toMatch(/alpha 7 µs/);
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
