/**
 * cclab run end to end, as child processes: env vars and rank prefixes, a failing rank named and
 * the rest stopped, a killed rank noticed by the others, a timeout, checked mode through the
 * launcher, and no rank process left behind. Process ranks use the real mpi backend where MPI is
 * available; the env/exit cases use a stand-in backend whose transfers never complete
 * (test/fixtures/runtime/stub-backend.ts), since they test the launcher, not the transport.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { underLoad } from "./support/load.js";
import { mpiSkipReason } from "./support/mpi.js";

const mpiOk = mpiSkipReason("cclab run --backend mpi tests") === "";
const STUB = { CCLAB_BACKEND_MODULE: "test/fixtures/runtime/stub-backend.ts" };

interface Run {
  code: number | null;
  out: string;
  err: string;
  seconds: number;
}

/** Runs `cclab run ...args` and resolves when it exits (no sleeps: the exit event). */
function cclabRun(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", "tsx", "test/fixtures/runtime/cli.ts", "run", ...args], {
      env: { ...process.env, ...env },
    });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("close", (code) => resolve({ code, out, err, seconds: (Date.now() - t0) / 1000 }));
  });
}

function pids(out: string): number[] {
  return [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
}

/** Running (a zombie has exited: where PID 1 does not reap, orphans stay zombies, still dead). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}

describe("cclab run: process ranks", () => {
  it("sets torchrun's variables and the token, prefixes every line with its rank, passes args", async () => {
    const r = await cclabRun(["-n", "3", "--backend", "nccl", "test/fixtures/runtime/env.ts", "a", "--b"], STUB);
    expect(r.code, r.err).toBe(0);
    for (let rank = 0; rank < 3; rank++) {
      expect(r.out).toMatch(
        new RegExp(
          `^\\[rank ${rank}\\] env RANK=${rank} WORLD_SIZE=3 LOCAL_RANK=${rank} LOCAL_WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=\\d+ token=32 comm=${rank}/3$`,
          "m",
        ),
      );
      expect(r.out).toContain(`[rank ${rank}] args ["a","--b"]`);
      expect(r.err).toContain(`[rank ${rank}] to stderr, no newline at the end\n`);
    }
    expect(r.out.split("\n").filter((l) => l && !l.startsWith("[rank "))).toEqual([]);
    expect(pids(r.out).filter(alive)).toEqual([]);
  });

  it("a rank that exits 1 is named; the ranks blocked on it are stopped; no process is left", async () => {
    const r = await cclabRun(["-n", "3", "--backend", "nccl", "test/fixtures/runtime/exit1.ts", "2"], STUB);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^cclab run: rank 2 failed first: .*\(exit code 1\)$/m);
    expect(r.err).toMatch(/\[rank 0\] AbortError: rank 0: recv from peer 1 at 'test\/ring step 0': aborted: rank 2/);
    expect(r.err).toMatch(/\[rank 1\] AbortError: rank 1: recv from peer 2 at 'test\/ring step 0': aborted: rank 2/);
    const ps = pids(r.out);
    expect(ps).toHaveLength(3);
    expect(ps.filter(alive)).toEqual([]);
  });
});

describe.skipIf(!mpiOk)("cclab run --backend mpi: real process faults", () => {
  it("runs a ring to completion", async () => {
    const r = await cclabRun(["-n", "3", "--backend", "mpi", "test/fixtures/runtime/ring.ts", "2"]);
    expect(r.code, r.err).toBe(0);
    for (let rank = 0; rank < 3; rank++) expect(r.out).toContain(`[rank ${rank}] done 1`);
  });

  it("a rank SIGKILLed mid-communication: the others fail naming it within 10 s", async () => {
    const r = await cclabRun([
      "-n",
      "3",
      "--backend",
      "mpi",
      "--fault",
      "kill:rank=1,at=2",
      "test/fixtures/runtime/ring.ts",
      "3",
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^cclab run: rank 1 failed first: died/m);
    expect(r.err).toMatch(/\[rank [02]\] AbortError: rank [02]: recv from peer [12] .*aborted: rank 1 died/);
    expect(r.seconds).toBeLessThan(underLoad(10));
    console.log(`kill: job ended ${r.seconds} s after launch`);
    expect(pids(r.out).filter(alive)).toEqual([]);
  });

  it("a timeout: TimeoutError on the blocked rank, AbortError naming it on the others, fast", async () => {
    const r = await cclabRun([
      "-n",
      "3",
      "--backend",
      "mpi",
      "--timeout",
      "2",
      "--fault",
      "delay:rank=1,ms=30000",
      "test/fixtures/runtime/ring.ts",
      "2",
    ]);
    expect(r.code).toBe(1);
    // Every rank of the ring is blocked from the start, so several may time out at once; each rank
    // fails with its own TimeoutError or an AbortError naming a rank that timed out.
    const timedOut = [
      ...r.err.matchAll(
        /\[rank (\d)\] TimeoutError: rank \1: recv from peer \d at 'ring round 0 recv' timed out after 2 s/g,
      ),
    ].map((x) => Number(x[1]));
    expect(timedOut.length, r.err).toBeGreaterThan(0);
    for (const o of [0, 1, 2].filter((x) => !timedOut.includes(x))) {
      expect(r.err).toMatch(
        new RegExp(`\\[rank ${o}\\] AbortError: rank ${o}: .*aborted: rank [${timedOut.join("")}]: recv .* timed out`),
      );
    }
    const first = Number(
      r.err.match(/^cclab run: rank (\d) failed first: recv from peer \d at 'ring round 0 recv' timed out/m)?.[1],
    );
    expect(timedOut).toContain(first);
    // The delay is 30 s: ending well before it shows the 2 s timeout ended the job. Starting three
    // ranks (node, tsx, MPI_Init) takes 3-9 s of this on a loaded 2-core machine.
    expect(r.seconds).toBeLessThan(underLoad(20));
    console.log(`timeout 2 s: job ended ${r.seconds} s after launch`);
    expect(pids(r.out).filter(alive)).toEqual([]);
  });
});

describe("cclab run --backend sim", () => {
  it("prefixes each simulated rank's lines (async-local context) and passes", async () => {
    const r = await cclabRun(["-n", "3", "test/fixtures/runtime/ring.ts", "2"]);
    expect(r.code, r.err).toBe(0);
    for (let rank = 0; rank < 3; rank++) expect(r.out).toContain(`[rank ${rank}] done 1`);
  });

  it("checked mode catches one rank's count fault on every rank, before data moves", async () => {
    const r = await cclabRun([
      "-n",
      "3",
      "--check",
      "--fault",
      "count:rank=2,delta=1",
      "test/fixtures/runtime/checked.ts",
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^cclab run: rank \d failed first: .*count \(ranks 0, 1: 1024; rank 2: 1025\)/m);
    for (let rank = 0; rank < 3; rank++) {
      expect(r.err).toContain(
        `[rank ${rank}] MismatchError: rank ${rank}: allreduce #0: checked mode: ranks disagree on the call, no data moved: count (ranks 0, 1: 1024; rank 2: 1025)`,
      );
    }
    expect(r.out).not.toContain("checked ok");
  });

  it("kill fault: the rank throws, the launcher names it", async () => {
    const r = await cclabRun(["-n", "3", "--fault", "kill:rank=1,at=2", "test/fixtures/runtime/ring.ts", "2"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^cclab run: rank 1 failed first: .*injected fault: rank 1 killed at its operation 2/m);
  });
});
