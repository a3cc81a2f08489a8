/**
 * Whether the MPI tests can run here: "" if they can, else why not (printed). CI sets
 * CCLAB_REQUIRE_MPI=1 (.ci/run), so there a missing MPI fails the suite instead of skipping it.
 */
import { spawnSync } from "node:child_process";
import { mpiAvailable } from "../../src/backends/mpi/index.js";

function reason(): string {
  const avail = mpiAvailable();
  if (!avail.ok) return `${avail.reason} (${avail.hint})`;
  if (spawnSync("mpirun", ["--version"]).status !== 0) return "mpirun is not on PATH";
  return "";
}

/** "" where MPI and mpirun work; otherwise the reason, after warning `what` is skipped. */
export function mpiSkipReason(what: string): string {
  const why = reason();
  if (why && process.env.CCLAB_REQUIRE_MPI === "1") {
    throw new Error(`${what}: CCLAB_REQUIRE_MPI=1 but MPI cannot run here: ${why}`);
  }
  if (why) console.warn(`${what} skipped: ${why}`);
  return why;
}
