/**
 * The mpi backend's entry points: mpiAvailable() (and why not, with how to get it), initMpi()
 * (the world communicator of a process started by mpirun) and mpirunCommand() for launchers.
 * MPI is initialised on first use with MPI_THREAD_FUNNELED (only the main thread calls MPI). It is
 * finalised at a clean process exit, never after a failure: MPI_Finalize waits for every rank, so
 * a rank that failed (or called process.exit mid-job) would hang there instead of dying, and the
 * others would not learn it died. The runtime finalises explicitly (finalizeMpi) once every rank is done.
 */
import { userInfo } from "node:os";
import type { Comm } from "../../comm.js";
import { UnavailableError } from "../../core/errors.js";
import { engineCall, loadNative } from "../../native/load.js";
import { buildCommand } from "../../native/root.js";
import type { NativeMpi } from "../../native/types.js";
import { defaultTimeoutMs, MpiComm, type MpiCommOptions, type MpiProcess } from "./comm.js";
import { type JoinOptions, joinSingletons, prepareSingletons, sessionBase, stopNameServer } from "./join.js";
import { Progress, ranksOutnumberCores } from "./progress.js";
import { countBitsFit } from "./tag.js";

export { MPI_BUILTINS, type MpiBuiltin, MpiEngine, mpiBuiltin } from "./builtin.js";
export { MpiComm, type MpiCommOptions, type MpiProcess, NonMemberComm } from "./comm.js";

export const MPI_HINT = `apt-get install openmpi-bin libopenmpi-dev (or mpich libmpich-dev), then ${buildCommand()}`;

export type MpiAvailability = { ok: true } | { ok: false; reason: string; hint: string };

function nativeMpi(): { mpi: NativeMpi } | { reason: string } {
  const l = loadNative();
  if (!l.ok) return { reason: l.reason };
  if (!l.addon.mpi)
    return {
      reason: `the native addon (${l.path}) was built without MPI (CMake did not find it, or CCLAB_NO_MPI was set)`,
    };
  return { mpi: l.addon.mpi };
}

/** Whether the mpi backend can run here, and if not why and how to get it. */
export function mpiAvailable(): MpiAvailability {
  const n = nativeMpi();
  if ("reason" in n) return { ok: false, reason: n.reason, hint: MPI_HINT };
  return { ok: true };
}

let proc: MpiProcess | undefined;
let world: MpiComm | undefined;
/** Whether a process exit may call MPI_Finalize: not after a failure, nor once the runtime took it over. */
let finalizeAtExit = true;

/**
 * For the runtime: this process finalises MPI itself (finalizeMpi) after a clean end; any other
 * exit is a failure and leaves without MPI_Finalize, so the rank dies and the job learns it.
 */
export function finalizeExplicitly(): void {
  finalizeAtExit = false;
}

/** MPI_Finalize, once, if MPI was started (every rank of the job must call it). */
export function finalizeMpi(): void {
  const mpi = proc?.mpi;
  if (mpi?.initialized() && !mpi.finalized()) mpi.finalize();
  stopNameServer();
}

/** Messages that reached this rank and were never received, on any live communicator (see MpiComm.unreceived). */
export function unreceivedMessages(): string[] {
  return proc ? [...proc.comms].flatMap((c) => c.unreceived()) : [];
}

/** MPI_Abort on the world: mpirun ends every rank of the job (the store-less way to fail a job). */
export function abortMpi(code: number): void {
  finalizeAtExit = false;
  const mpi = proc?.mpi;
  if (mpi?.initialized() && !mpi.finalized()) mpi.abort(abortHandle ?? mpi.commWorld(), code);
}

function mpiOrThrow(): NativeMpi {
  const n = nativeMpi();
  if ("reason" in n) throw new UnavailableError(`mpi backend unavailable: ${n.reason}; to get it: ${MPI_HINT}`);
  return n.mpi;
}

/** The communicator MPI_Abort ends: the world, or the one the ranks joined (joinMpi). */
let abortHandle: number | undefined;

function startMpi(options: MpiCommOptions, rank?: number): MpiProcess {
  if (proc) return proc;
  const mpi = mpiOrThrow();
  engineCall("initMpi", () => mpi.init(mpi.threadLevels().funneled));
  const worldRank = rank ?? mpi.rank(mpi.commWorld());
  const p: MpiProcess = {
    mpi,
    progress: new Progress(mpi, ranksOutnumberCores(mpi.size(mpi.commWorld()))),
    worldRank,
    comms: new Set(),
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs(),
    countTags: countBitsFit(mpi.tagUpperBound()),
    onAbort: (error) => {
      finalizeAtExit = false;
      process.stderr.write(`cclab: rank ${worldRank}: ${error.message}; calling MPI_Abort\n`);
      mpi.abort(abortHandle ?? mpi.commWorld(), 3);
    },
  };
  process.on("exit", (code) => {
    if (finalizeAtExit && code === 0) finalizeMpi();
  });
  proc = p;
  return p;
}

/** The world communicator of this mpirun-started process (MPI_Init on first call). */
export async function initMpi(options: MpiCommOptions = {}): Promise<MpiComm> {
  if (world) return world;
  const p = startMpi(options);
  const handle = p.mpi.commWorld();
  const size = p.mpi.size(handle);
  world = new MpiComm(
    p,
    handle,
    Array.from({ length: size }, (_, i) => i),
  );
  return world;
}

/**
 * The job's communicator for ranks that no mpirun started together (torchrun-style variables):
 * each process starts as an MPI singleton and they join through MPI_Comm_accept/connect, with
 * the job's store as the rendezvous (join.ts). Ranks keep the environment's RANK order.
 */
export async function joinMpi(options: MpiCommOptions & JoinOptions): Promise<MpiComm> {
  if (world) return world;
  const mpi = mpiOrThrow();
  await prepareSingletons(mpi, options);
  const p = startMpi(options, options.rank);
  const handle = await joinSingletons(p.mpi, options);
  abortHandle = handle;
  world = new MpiComm(
    p,
    handle,
    Array.from({ length: options.size }, (_, i) => i),
  );
  return world;
}

/** The type every backend factory returns. */
export type { Comm };

export interface MpirunOptions {
  /** mpirun's --hostfile: the nodes to start ranks on. */
  readonly hostfile?: string;
  /** Ranks per node (--map-by ppr:N:node), with a hostfile across nodes. */
  readonly perNode?: number;
  /** Variables to export to every rank (-x NAME), which mpirun passes only on this node by itself. */
  readonly exportEnv?: readonly string[];
}

/**
 * mpirun's command line for np processes running argv: --oversubscribe, --allow-run-as-root as
 * root (CI), and a fresh session directory (sessionBase) so that jobs started at once never race.
 */
export function mpirunCommand(
  np: number,
  argv: readonly string[],
  options: MpirunOptions = {},
): { cmd: string; args: string[] } {
  const args = ["-np", String(np), "--oversubscribe"];
  let root = false;
  try {
    root = typeof process.getuid === "function" ? process.getuid() === 0 : userInfo().uid === 0;
  } catch {
    root = false;
  }
  if (root) args.push("--allow-run-as-root");
  if (options.hostfile) args.push("--hostfile", options.hostfile);
  // A session directory of this job's own on this node (not across nodes, where the path may not exist).
  const base = options.hostfile ? undefined : sessionBase();
  if (base !== undefined) args.push("--mca", "orte_tmpdir_base", base);
  if (options.perNode) args.push("--map-by", `ppr:${options.perNode}:node`);
  for (const name of options.exportEnv ?? []) args.push("-x", name);
  return { cmd: "mpirun", args: [...args, ...argv] };
}
