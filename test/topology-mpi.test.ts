/**
 * `--topology` on MPI's verify, bench and trace: every rank binds the algorithms to the machine's shape
 * (CCLAB_TOPOLOGY), and the schedule is checked against MPI's built-in all-reduce as the mpi
 * differential does. test/fixtures/verify/torus-only.ts is Swing declaring that it needs a torus,
 * so it runs only where the shape reached it, and refuses by name where it did not. Skips, saying
 * why, where MPI is not available; a bad spec is refused before mpirun starts either way.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mpiSkipReason } from "./support/mpi.js";

const mpiOk = mpiSkipReason("--topology on mpi tests") === "";
const TORUS_ONLY = "test/fixtures/verify/torus-only.ts";
const runs = Number(process.env.CCLAB_MPI_RUNS ?? 6);
const seed = Number(process.env.CCLAB_MPI_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** `cclab ...args`, resolved when it exits; stdout and stderr together, and stdout alone. */
function cclab(args: string[]): Promise<{ code: number | null; out: string; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["src/cli/bin.js", ...args], {
      env: { ...process.env, CCLAB_TIMEOUT: "60" },
    });
    let out = "";
    let stdout = "";
    p.stdout.on("data", (d) => {
      out += d;
      stdout += d;
    });
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => resolve({ code, out, stdout }));
  });
}

const verifyMpi = (...args: string[]) =>
  cclab(["verify", "--backend", "mpi", "--seed", String(seed), "--runs", String(runs), ...args]);

describe("--topology on mpi: bad input is refused before mpirun starts", () => {
  it("verify and bench name the command and --topology", async () => {
    const [v, b] = await Promise.all([
      cclab(["verify", "--backend", "mpi", "--topology", "torus:2xq", "--algorithm", "ring"]),
      cclab(["bench", "allreduce", "--backend", "mpi", "-n", "4", "--topology", "torus:2xq"]),
    ]);
    expect(v.code).not.toBe(0);
    expect(v.out).toContain("verify: argument '--topology'");
    expect(v.out).toContain("'torus:2xq'");
    expect(v.out).not.toContain("mpirun");
    expect(b.code).not.toBe(0);
    expect(b.out).toContain("bench: argument '--topology'");
    const link = await cclab(["bench", "allreduce", "--backend", "mpi", "--topology", "torus:2x2", "--link", "1GB/s"]);
    expect(link.code).not.toBe(0);
    expect(link.out).toContain("bench: argument '--link': sets the network model, which times --backend sim");
  }, 60_000);
});

describe.skipIf(!mpiOk)("--topology on mpi: the shape reaches every rank's schedule", () => {
  it(`verify: an algorithm that needs a torus agrees with MPI on torus:2x2, and refuses by name without one (${runs} cases)`, async () => {
    const [torus, none, mesh] = await Promise.all([
      verifyMpi("--topology", "torus:2x2", "--algorithm-file", TORUS_ONLY),
      verifyMpi("-n", "4", "--algorithm-file", TORUS_ONLY),
      verifyMpi("--topology", "mesh:2x2", "--algorithm-file", TORUS_ONLY),
    ]);
    expect(torus.code, torus.out).toBe(0);
    expect(torus.out).toContain("np = 4 on torus:2x2");
    expect(torus.out).toContain(`ok np=4 allreduce/swing_torus_only: ${runs} cases agree with MPI's built-in`);
    expect(none.code, none.out).toBe(1);
    expect(none.out).toContain(
      "FAIL np=4 allreduce/swing_torus_only: rank 0: allreduce/swing_torus_only: argument '--topology': needs the machine's shape (torus), got none: pass --topology torus:",
    );
    expect(mesh.code, mesh.out).toBe(1);
    expect(mesh.out).toContain("got 'mesh:2x2' (mesh), which it cannot use");
    // The replay names the machine, so it replays the same schedule.
    expect(mesh.out).toContain("replay: cclab verify --backend mpi -n 4 --topology mesh:2x2 --collective allreduce");
  }, 240_000);

  it(`verify: swing_bandwidth on torus:3x2 (a dimension folded) agrees with MPI at np=6 (${runs} cases)`, async () => {
    const r = await verifyMpi("--topology", "torus:3x2", "--algorithm", "swing_bandwidth");
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`ok np=6 allreduce/swing_bandwidth: ${runs} cases agree with MPI's built-in`);
  }, 240_000);

  it("trace: every MPI rank runs swing_latency bound to torus:2x2 (rank 0 sends to 1 and 2; flat, to 1 and 3)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-trace-topology-"));
    try {
      const r = await cclab([
        ...["trace", "allreduce", "--algorithm", "swing_latency", "-n", "4", "--topology", "torus:2x2"],
        ...["--backend", "mpi", "--json", "-o", join(dir, "t.html")],
      ]);
      expect(r.code, r.out).toBe(0);
      const json = JSON.parse(r.stdout) as {
        events: { kind: string; rank: number; peer?: number }[];
      };
      const peers = new Set(json.events.filter((e) => e.kind === "send" && e.rank === 0).map((e) => e.peer));
      expect([...peers].sort()).toEqual([1, 2]);
      expect(existsSync(join(dir, "t.html"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it("bench: the torus-only algorithm runs with no wrong element on torus:2x2, and refuses without it", async () => {
    const bench = (...args: string[]) =>
      cclab([
        "bench",
        "allreduce",
        "--backend",
        "mpi",
        "-n",
        "4",
        "--algorithm-file",
        TORUS_ONLY,
        "-b",
        "64",
        "-e",
        "256",
        "--iters",
        "2",
        "--warmup_iters",
        "1",
        ...args,
      ]);
    const [torus, none] = await Promise.all([bench("--topology", "torus:2x2"), bench()]);
    expect(torus.code, torus.out).toBe(0);
    expect(torus.out).toContain("# cclab bench: allreduce (swing_torus_only) on 4 ranks, backend mpi on torus:2x2");
    expect(torus.out).toContain("# Out of bounds values : 0 OK");
    expect(none.code).not.toBe(0);
    expect(none.out).toContain(
      "allreduce/swing_torus_only: argument '--topology': needs the machine's shape (torus), got none",
    );
  }, 240_000);
});
