/**
 * The mpi backend under a real mpirun: one launch per size (2..5), each worker running every
 * point-to-point case (test/fixtures/mpi/p2p.ts). Skips, saying why, where MPI is not available.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { mpiAvailable, mpirunCommand } from "../src/backends/mpi/index.js";
import { mpiSkipReason } from "./support/mpi.js";

const skip = mpiSkipReason("mpi tests") !== "";

describe("mpirunCommand", () => {
  it("oversubscribes, and allows root only when running as root", () => {
    const { cmd, args } = mpirunCommand(4, ["node", "w.js"]);
    expect(cmd).toBe("mpirun");
    expect(args.slice(0, 3)).toEqual(["-np", "4", "--oversubscribe"]);
    expect(args.includes("--allow-run-as-root")).toBe(process.getuid?.() === 0);
    expect(args.slice(-2)).toEqual(["node", "w.js"]);
  });
  it("mpiAvailable gives a reason and a hint when it says no", () => {
    const a = mpiAvailable();
    if (!a.ok) {
      expect(a.reason.length).toBeGreaterThan(0);
      expect(a.hint).toMatch(/apt-get install openmpi-bin libopenmpi-dev/);
    } else expect(a).toEqual({ ok: true });
  });
});

/** Runs test/fixtures/mpi/<file> on np ranks; no case failed and the job exited 0. Its output. */
function runFixture(np: number, file: string): string {
  const { cmd, args } = mpirunCommand(np, [process.execPath, "--import", "tsx", `test/fixtures/mpi/${file}`]);
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 60_000, env: { ...process.env, CCLAB_TIMEOUT: "30" } });
  const out = `${r.stdout}\n${r.stderr}`;
  expect(out, out).not.toMatch(/FAIL/);
  expect(r.status, out).toBe(0);
  return out;
}

describe.skipIf(skip)("mpi backend point-to-point under mpirun", () => {
  for (const np of [2, 3, 4, 5]) {
    it(`np=${np}: blocking, non-overtaking, groups, isend/irecv, mismatches, split, builtin, timeouts`, () => {
      const out = runFixture(np, "p2p.ts");
      for (let rank = 0; rank < np; rank++) expect(out).toContain(`done ${rank}/${np}`);
      expect(out.match(/^ok /gm)?.length).toBe(np * 10);
    });
  }
});

describe.skipIf(skip)("mpi backend's fast path for whole plans under mpirun", () => {
  for (const np of [2, 3]) {
    it(`np=${np}: mixed with the per-operation path, apart from user messages, mismatches named, runs reused per comm, timeouts named`, () => {
      const out = runFixture(np, "plan.ts");
      expect(out.match(/^ok /gm)?.length, out).toBe(np * 6);
    });
  }
});
