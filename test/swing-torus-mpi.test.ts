/**
 * Swing on a torus against MPI's built-in all-reduce under mpirun: `cclab verify --backend mpi`
 * with the torus forms bound in test/fixtures/mpi/swing-torus.ts (2x2 at np = 4) and
 * swing-torus-3x2.ts (3x2 at np = 6, a dimension folded). Skips, saying why, where MPI is not available.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { mpiSkipReason } from "./support/mpi.js";

const skip = mpiSkipReason("swing torus mpi tests") !== "";
const runs = Number(process.env.CCLAB_MPI_RUNS ?? 10);
const seed = Number(process.env.CCLAB_MPI_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe.skipIf(skip)("Swing on a torus vs MPI's built-in all-reduce", () => {
  for (const [np, torus, file] of [
    [4, "2x2", "test/fixtures/mpi/swing-torus.ts"],
    [6, "3x2", "test/fixtures/mpi/swing-torus-3x2.ts"],
  ] as const) {
    it(`torus ${torus} at np=${np}: both forms agree with MPI (${runs} cases each)`, () => {
      const r = spawnSync(
        process.execPath,
        [
          "src/cli/bin.js",
          "verify",
          "--backend",
          "mpi",
          "-n",
          String(np),
          "--algorithm-file",
          file,
          "--seed",
          String(seed),
          "--runs",
          String(runs),
        ],
        { encoding: "utf8", timeout: 170_000, env: { ...process.env, CCLAB_TIMEOUT: "30" } },
      );
      const out = `${r.stdout}\n${r.stderr}`;
      for (const name of ["swing_latency", "swing_bandwidth"]) {
        expect(out, out).toContain(
          `ok np=${np} allreduce/${name}_torus${torus}: ${runs} cases agree with MPI's built-in`,
        );
      }
    }, 180_000);
  }
});
