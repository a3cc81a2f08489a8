/**
 * What every launcher of `cclab run` shares (launch.ts checks the options and picks one;
 * launch-sim.ts and launch-procs.ts run the job): the options, the result, the job's fault specs
 * and the one-line summary. Its own module, so the launchers need not import launch.ts, which
 * imports them.
 */
import { resolve } from "node:path";
import type { SimOptions } from "../sim/index.js";
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
  /**
   * The machine the ranks run on, in the model's syntax (torus:4x4, mesh:2x4x2, rail:2x4, ...), and
   * how ranks sit on its hosts (block, round-robin, file:PATH): the world comm's collectives give
   * their algorithms its shape (useTopology, src/collectives/plans.ts). Process ranks get them as
   * CCLAB_TOPOLOGY and CCLAB_PLACEMENT.
   */
  topology?: string;
  placement?: string;
  /** Fault specs (see faults.ts). */
  faults?: readonly string[];
  /** After the first failure, how long the other ranks get to fail on their own before SIGTERM, then SIGKILL. */
  graceMs?: number;
  /** Extra environment for process ranks. */
  env?: NodeJS.ProcessEnv;
  /** Extra environment for one rank (nccl: ranks sharing a GPU get their own NCCL_HOSTID by default). */
  rankEnv?: (rank: number, localRank: number) => NodeJS.ProcessEnv;
  /** sim only: passed to spawn (seed, semantics, trace: cclab run --seed/--semantics/--trace). */
  sim?: { seed?: number; semantics?: string; trace?: SimOptions["trace"] };
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

/** The job's fault specs: CCLAB_FAULT (of o.env, else this process) and --fault. */
export function faultSpecs(o: LaunchOptions): string[] {
  const fromEnv = o.env?.CCLAB_FAULT ?? process.env.CCLAB_FAULT;
  return [...(fromEnv ? [fromEnv] : []), ...(o.faults ?? [])];
}

/**
 * The job's machine: --topology and --placement, else CCLAB_TOPOLOGY and CCLAB_PLACEMENT (of o.env,
 * else this process), as a process rank reads them.
 */
export function jobTopology(o: LaunchOptions): { topology?: string; placement?: string } {
  const topology = o.topology ?? (o.env?.CCLAB_TOPOLOGY || process.env.CCLAB_TOPOLOGY || undefined);
  const how =
    o.topology !== undefined
      ? o.placement
      : (o.placement ?? (o.env?.CCLAB_PLACEMENT || process.env.CCLAB_PLACEMENT || undefined));
  // A placement file is read by every rank, wherever it starts: its path made absolute here.
  const placement = how?.startsWith("file:") ? `file:${resolve(how.slice(5))}` : how;
  return { ...(topology !== undefined ? { topology } : {}), ...(placement !== undefined ? { placement } : {}) };
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
