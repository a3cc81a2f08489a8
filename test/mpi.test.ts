/**
 * The mpi backend under a real mpirun: one launch per size (2..5), each worker running every
 * point-to-point case (test/fixtures/mpi/p2p.ts). Skips, saying why, where MPI is not available.
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { mpiAvailable, mpirunCommand } from "../src/backends/mpi/index.js";
import { missingOks } from "./support/check.js";
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
  it("gives every launch a fresh, empty session directory of its own, unless the user set one", () => {
    const base = (args: string[]) => args[args.indexOf("orte_tmpdir_base") + 1] as string;
    const a = mpirunCommand(2, ["node", "w.js"]).args;
    const b = mpirunCommand(2, ["node", "w.js"]).args;
    expect(a.indexOf("--mca")).toBeGreaterThan(0);
    expect(base(a).startsWith(`${tmpdir()}/cclab-ompi-session-${process.pid}-`)).toBe(true);
    expect(base(a)).not.toBe(base(b));
    expect(readdirSync(base(a))).toEqual([]);
    expect(statSync(base(a)).mode & 0o777).toBe(0o700);
    process.env.OMPI_MCA_orte_tmpdir_base = "/somewhere/mine";
    try {
      expect(mpirunCommand(2, ["node", "w.js"]).args).not.toContain("orte_tmpdir_base");
    } finally {
      delete process.env.OMPI_MCA_orte_tmpdir_base;
    }
    // Across nodes the path would not exist on the others: Open MPI's default there.
    expect(mpirunCommand(2, ["node", "w.js"], { hostfile: "hosts" }).args).not.toContain("orte_tmpdir_base");
  });
  it.skipIf(skip)("jobs started at once each keep their session under their own directory", async () => {
    const jobs = Array.from({ length: 4 }, () => {
      const { cmd, args } = mpirunCommand(2, ["/bin/sh", "-c", 'echo "session $OMPI_MCA_orte_jobfam_session_dir"']);
      const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
      });
      child.stderr.on("data", (d) => {
        out += d;
      });
      return new Promise<{ base: string; out: string; code: number | null }>((resolve) =>
        child.on("close", (code) => resolve({ base: args[args.indexOf("orte_tmpdir_base") + 1] as string, out, code })),
      );
    });
    for (const { base, out, code } of await Promise.all(jobs)) {
      expect(code, out).toBe(0);
      const sessions = [...out.matchAll(/^session (.*)$/gm)].map((m) => m[1]);
      expect(sessions, out).toHaveLength(2);
      for (const s of sessions) expect(s?.startsWith(`${base}/ompi.`), out).toBe(true);
    }
  });
  it("mpiAvailable gives a reason and a hint when it says no", () => {
    const a = mpiAvailable();
    if (!a.ok) {
      expect(a.reason.length).toBeGreaterThan(0);
      expect(a.hint).toMatch(/apt-get install openmpi-bin libopenmpi-dev/);
    } else expect(a).toEqual({ ok: true });
  });
});

describe("missingOks: a fixture's output held to the cases it announced", () => {
  const out = ['cases 0/2 ["a","b"]', 'cases 1/2 ["a","b"]', "ok 0/2 a", "ok 1/2 a", "ok 0/2 b"].join("\n");
  it("names each ok line a rank owes and did not print", () => {
    expect(missingOks(out, 2)).toEqual({ cases: ["a", "b"], missing: ["ok 1/2 b"] });
    expect(missingOks(`${out}\nok 1/2 b`, 2).missing).toEqual([]);
  });
  it("refuses a rank that announced nothing, or other cases", () => {
    expect(() => missingOks('cases 0/3 ["a"]\ncases 1/3 ["a"]', 3)).toThrow("rank 2/3 announced no cases");
    expect(() => missingOks(out.replace('cases 1/2 ["a","b"]', 'cases 1/2 ["a"]'), 2)).toThrow(
      "rank 1 announced other cases: a",
    );
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

/** Every rank passed every case its fixture lists (runCases announces them): no count kept by hand. */
function expectEveryCase(out: string, np: number): void {
  const { cases, missing } = missingOks(out, np);
  expect(cases.length, out).toBeGreaterThan(0);
  expect(missing, out).toEqual([]);
}

describe.skipIf(skip)("mpi backend point-to-point under mpirun", () => {
  for (const np of [2, 3, 4, 5]) {
    it(`np=${np}: blocking, non-overtaking, groups, isend/irecv, mismatches, split, builtin, timeouts`, () => {
      const out = runFixture(np, "p2p.ts");
      for (let rank = 0; rank < np; rank++) expect(out).toContain(`done ${rank}/${np}`);
      expectEveryCase(out, np);
    });
  }
});

describe.skipIf(skip)("mpi backend's fast path for whole plans under mpirun", () => {
  for (const np of [2, 3]) {
    it(`np=${np}: mixed with the per-operation path, apart from user messages, mismatches named, runs reused per comm, timeouts named`, () => {
      const out = runFixture(np, "plan.ts");
      expectEveryCase(out, np);
    });
  }
});
