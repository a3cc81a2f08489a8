/**
 * The launcher behind `cclab run` (torchrun's job): starts N ranks of a cclab program (a module
 * exporting main(comm, args)) on sim (one process: launch-sim.ts), or mpi (through mpirun) and
 * nccl (N processes): launch-procs.ts, which hosts the rendezvous store, prefixes every output
 * line with its rank, and when any rank fails, stops the others and reports the first failure.
 * This file holds what both share: the options and their checks, and the one-line summary.
 */
import { readFileSync, statSync } from "node:fs";
import { InvalidArgumentError } from "../core/errors.js";
import { checkTimeoutMs } from "../core/timer.js";
import { checkFaultRanks, parseFaults } from "./faults.js";
import type { AbortInfo } from "./guard.js";

export const BACKENDS = ["sim", "mpi", "nccl"] as const;
export type LaunchBackend = (typeof BACKENDS)[number];

/** The most ranks one launch starts: simulated ranks share this process; process ranks one node's cores. */
export const MAX_RANKS: Record<LaunchBackend, number> = { sim: 4096, mpi: 256, nccl: 256 };

export interface LaunchOptions {
  /** Ranks per node (torchrun's --nproc-per-node). */
  nprocs: number;
  backend: LaunchBackend;
  program: string;
  args?: readonly string[];
  nnodes?: number;
  nodeRank?: number;
  masterAddr?: string;
  /** Default: a free port for one node, 29500 across nodes. */
  masterPort?: number;
  /**
   * mpi: mpirun's hostfile. One cclab run (node rank 0) then starts every node's ranks through
   * mpirun (nprocs per node with nnodes > 1), and the store listens on --master-addr (default:
   * this host's name), reachable from the other nodes.
   */
  hostfile?: string;
  /** Per blocking call; default CCLAB_TIMEOUT or 300 s. */
  timeoutMs?: number;
  check?: boolean;
  /** Fault specs (see faults.ts). */
  faults?: readonly string[];
  /** After the first failure, how long the other ranks get to fail on their own before SIGTERM, then SIGKILL. */
  graceMs?: number;
  /** Extra environment for process ranks. */
  env?: NodeJS.ProcessEnv;
  /** Extra environment for one rank (nccl: ranks sharing a GPU get their own NCCL_HOSTID by default). */
  rankEnv?: (rank: number, localRank: number) => NodeJS.ProcessEnv;
  /** sim only: passed to spawn (seed, semantics, trace: cclab run --seed/--semantics/--trace). */
  sim?: { seed?: number; semantics?: string; trace?: unknown };
  /** Where prefixed output goes (default: this process's stdout/stderr). */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

export interface RankExit {
  /** -1 for mpirun. */
  readonly rank: number;
  readonly pid: number | undefined;
  readonly code: number | null;
  readonly signal: string | null;
}

export interface LaunchResult {
  readonly exitCode: number;
  /** The first rank that failed and why (from the store's abort, else the first bad exit). */
  readonly failure?: AbortInfo;
  /** One line per failure, for the user. */
  readonly summary: string;
  /** Process ranks' pids and exits (empty for sim). */
  readonly exits: readonly RankExit[];
  /** Seconds from launch to the last rank's exit. */
  readonly seconds: number;
}

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

/** The job's fault specs: CCLAB_FAULT (of o.env, else this process) and --fault. */
export function faultSpecs(o: LaunchOptions): string[] {
  const fromEnv = o.env?.CCLAB_FAULT ?? process.env.CCLAB_FAULT;
  return [...(fromEnv ? [fromEnv] : []), ...(o.faults ?? [])];
}

/** Runs the job to completion; never throws for a rank's failure (that is in the result). */
export async function launch(options: LaunchOptions): Promise<LaunchResult> {
  checkOptions(options);
  if (options.backend === "sim") {
    const { launchSim } = await import("./launch-sim.js");
    return launchSim(options);
  }
  const { launchProcesses } = await import("./launch-procs.js");
  return launchProcesses(options);
}

/** The result and its summary: 'cclab run: rank k failed first: <why>', then one line per process. */
export function finish(
  failure: AbortInfo | undefined,
  exits: readonly RankExit[],
  started: number,
  o: LaunchOptions,
): LaunchResult {
  const seconds = (Date.now() - started) / 1000;
  const bad = exits.filter((e) => e.code !== 0 || e.signal);
  if (!failure && bad.length === 0) return { exitCode: 0, summary: "", exits, seconds };
  const first = failure ?? { rank: bad[0]!.rank, reason: `exited with code ${bad[0]!.code}` };
  const own = first.rank >= 0 ? exits.find((e) => e.rank === first.rank) : undefined;
  const exit = own ? ` (${own.signal ? `killed by ${own.signal}` : `exit code ${own.code}`})` : "";
  const who = first.rank >= 0 ? `rank ${first.rank} failed first` : "the job failed";
  const lines = [`cclab run: ${who}: ${first.reason.replace(/^rank \d+:? (failed: )?/, "")}${exit}`];
  for (const e of exits) {
    if (e.rank < 0) continue;
    const how = e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`;
    lines.push(`  rank ${e.rank} (pid ${e.pid}): ${how}`);
  }
  const mpirun = exits.find((e) => e.rank < 0);
  if (o.backend === "mpi" && mpirun) {
    lines.push(`  mpirun: ${mpirun.signal ? `killed by ${mpirun.signal}` : `exit code ${mpirun.code}`}`);
  }
  return { exitCode: 1, failure: first, summary: lines.join("\n"), exits, seconds };
}
