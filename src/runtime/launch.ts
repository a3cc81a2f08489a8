/**
 * The launcher behind `cclab run` (torchrun's job): starts N ranks of a cclab program (a module
 * exporting main(comm, args)) on sim (one process: launch-sim.ts), or mpi (through mpirun) and
 * nccl (N processes): launch-procs.ts, which hosts the rendezvous store, prefixes every output
 * line with its rank, and when any rank fails, stops the others and reports the first failure.
 * This file checks the options and picks the launcher; what both launchers share (the options,
 * the result, the one-line summary) is in launch-common.ts, so neither imports this file back.
 */
import { readFileSync, statSync } from "node:fs";
import { InvalidArgumentError } from "../core/errors.js";
import { checkTimeoutMs } from "../core/timer.js";
import { checkFaultRanks, parseFaults } from "./faults.js";
import {
  BACKENDS,
  faultSpecs,
  jobTopology,
  type LaunchOptions,
  type LaunchResult,
  MAX_RANKS,
} from "./launch-common.js";

export {
  BACKENDS,
  faultSpecs,
  finish,
  type LaunchBackend,
  type LaunchOptions,
  type LaunchResult,
  MAX_RANKS,
  type RankExit,
} from "./launch-common.js";

function checkOptions(o: LaunchOptions): void {
  const bad = (arg: string, detail: string) => new InvalidArgumentError({ op: "run", arg }, detail);
  if (!(BACKENDS as readonly string[]).includes(o.backend)) {
    throw bad("--backend", `unknown backend ${JSON.stringify(o.backend)}; expected one of ${BACKENDS.join(", ")}`);
  }
  const max = MAX_RANKS[o.backend];
  if (!Number.isInteger(o.nprocs) || o.nprocs < 1 || o.nprocs > max) {
    throw bad("-n", `must be an integer in [1, ${max}] for the ${o.backend} backend, got ${o.nprocs}`);
  }
  const nnodes = o.nnodes ?? 1;
  const nodeRank = o.nodeRank ?? 0;
  if (!Number.isInteger(nnodes) || nnodes < 1 || nnodes > 1024) {
    throw bad("--nnodes", `must be an integer in [1, 1024], got ${nnodes}`);
  }
  if (!Number.isInteger(nodeRank) || nodeRank < 0 || nodeRank >= nnodes) {
    throw bad("--node-rank", `must be in [0, ${nnodes}), got ${nodeRank}`);
  }
  if (o.hostfile !== undefined && o.backend !== "mpi") {
    throw bad("--hostfile", `is mpirun's, for --backend mpi (nccl: start cclab run on every node with --node-rank)`);
  }
  if (o.hostfile !== undefined) checkHostfile(o.hostfile);
  if (nnodes > 1 && o.backend === "sim") {
    throw bad("--nnodes", "sim runs every rank in this process, on one node");
  }
  // mpi across nodes: one cclab run with --hostfile (mpirun starts every node's ranks), or one
  // cclab run per node (as torchrun) whose ranks join one MPI job through the store.
  if (o.hostfile !== undefined && nodeRank !== 0) {
    throw bad(
      "--node-rank",
      "with --hostfile, mpirun starts every node's ranks from one cclab run: run it on one node only",
    );
  }
  if (o.masterPort !== undefined && (!Number.isInteger(o.masterPort) || o.masterPort < 0 || o.masterPort > 65535)) {
    throw bad("--master-port", `must be a port number, got ${o.masterPort}`);
  }
  if (o.timeoutMs !== undefined) checkTimeoutMs(o.timeoutMs, { op: "run", arg: "--timeout" });
  if (o.graceMs !== undefined) checkTimeoutMs(o.graceMs, { op: "run", arg: "--grace" });
  checkFaultRanks(parseFaults(faultSpecs(o)), o.nprocs * nnodes);
  if (o.placement !== undefined && jobTopology(o).topology === undefined)
    throw bad("--placement", "places ranks on a topology's hosts: give --topology too (e.g. --topology torus:4x4)");
}

/** The most a hostfile may hold: one line per host, so a few hundred kilobytes at the most. */
const MAX_HOSTFILE_BYTES = 1 << 20;

/**
 * mpirun's hostfile must be a readable file of host lines: anything else (a directory, /dev/zero,
 * an empty file) fails inside mpirun before any rank starts, which the launcher could then only
 * describe as ranks that never joined.
 */
function checkHostfile(file: string): void {
  const bad = (detail: string) => new InvalidArgumentError({ op: "run", arg: "--hostfile" }, `${file} ${detail}`);
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(code === "ENOENT" ? "does not exist" : `cannot be read: ${(e as Error).message}`);
  }
  if (!st.isFile()) throw bad("is not a regular file (mpirun reads one host per line from a file)");
  if (st.size > MAX_HOSTFILE_BYTES) throw bad(`is ${st.size} bytes: a hostfile holds one line per host`);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw bad(`cannot be read: ${(e as Error).message}`);
  }
  const hosts = text.split("\n").filter((l) => l.replace(/#.*/, "").trim() !== "");
  if (hosts.length === 0) throw bad("names no host (one per line: 'node1 slots=4')");
  if (/\0/.test(text)) throw bad("is not text (it holds NUL bytes)");
}

/** Runs the job to completion; never throws for a rank's failure (that is in the result). */
export async function launch(options: LaunchOptions): Promise<LaunchResult> {
  checkOptions(options);
  const { topology, placement } = jobTopology(options);
  if (topology !== undefined) {
    // Checked here, for every rank of the job, before one starts.
    const { shapeOfSpec } = await import("../tools/topology-shape.js");
    const names =
      options.topology === undefined ? { topology: "CCLAB_TOPOLOGY", placement: "CCLAB_PLACEMENT" } : undefined;
    shapeOfSpec(topology, options.nprocs * (options.nnodes ?? 1), placement, { op: "run" }, names);
  }
  if (options.backend === "sim") {
    const { launchSim } = await import("./launch-sim.js");
    return launchSim(options);
  }
  const { launchProcesses } = await import("./launch-procs.js");
  return launchProcesses(options);
}
