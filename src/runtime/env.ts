/**
 * Where this process sits in a job, read from the environment the way torchrun's env:// does:
 * RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or what mpirun (Open MPI,
 * MPICH's PMI) or Slurm's srun set when they, not cclab, started the job. The store token comes
 * only from CCLAB_STORE_TOKEN (cclab run hands its ranks a random one); nothing is derived from
 * job ids, which other users can read. Ranks on one host with no token meet at a Unix-domain
 * socket in a directory made fresh for the job, only their user can enter (storeEndpoint,
 * socket-dir.ts), never at a TCP port with a token anyone could know.
 */
import { hostname, networkInterfaces } from "node:os";
import { InvalidArgumentError } from "../core/errors.js";
import { socketBase } from "./socket-dir.js";

/** torch's default rendezvous port. */
export const DEFAULT_MASTER_PORT = 29500;

export interface JobEnv {
  readonly rank: number;
  readonly size: number;
  readonly localRank: number;
  readonly localSize: number;
  /** Which variables said so: 'cclab', 'torchrun', 'openmpi', 'pmi' or 'slurm'. */
  readonly source: string;
  readonly masterAddr: string;
  readonly masterPort: number;
  /** MASTER_ADDR or MASTER_PORT was set: the job asked for a store (rank 0 hosts it without a launcher). */
  readonly masterGiven: boolean;
  /**
   * Every rank runs on this host: MASTER_ADDR is loopback, or names this host and
   * LOCAL_WORLD_SIZE equals WORLD_SIZE. The store then listens on loopback only, or (no token) on a
   * Unix-domain socket only this user can reach.
   */
  readonly singleHost: boolean;
  /** Where the store listens and ranks connect: 127.0.0.1 on a single host, else MASTER_ADDR. */
  readonly storeAddr: string;
  /** CCLAB_STORE_TOKEN, if set. */
  readonly token: string | undefined;
  /** cclab run started this rank and hosts the store. */
  readonly storeHosted: boolean;
  /** The cclab launcher's pid (CCLAB_LAUNCHER_PID): the rank does not outlive it. */
  readonly launcherPid: number | undefined;
}

/**
 * The token presented on the one-host socket (storeEndpoint). It is no secret and needs none: the
 * socket lies in a directory only this user can enter, so whoever reaches it is this user already.
 */
export const SOCKET_TOKEN = "cclab-user-socket-access-is-the-secret";

function int(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === "") return undefined;
  const n = /^\d{1,9}$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < 0) {
    throw new InvalidArgumentError(
      { op: "init", arg: name },
      `must be a non-negative integer, got ${JSON.stringify(v)}`,
    );
  }
  return n;
}

/** True when some launcher already made this process one rank of a job. */
export function insideJob(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    (env.RANK !== undefined && env.WORLD_SIZE !== undefined) ||
    env.OMPI_COMM_WORLD_RANK !== undefined ||
    env.PMI_RANK !== undefined ||
    (env.SLURM_PROCID !== undefined && env.SLURM_NTASKS !== undefined)
  );
}

/** Reads the job from the environment; throws (naming the variables) when this is not a rank of one. */
export function readJobEnv(env: NodeJS.ProcessEnv = process.env): JobEnv {
  let rank: number | undefined;
  let size: number | undefined;
  let localRank: number | undefined;
  let localSize: number | undefined;
  // The variables the local rank and size came from, for messages.
  let localNames = ["LOCAL_RANK", "LOCAL_WORLD_SIZE"];
  let source = "";
  if (env.RANK !== undefined && env.WORLD_SIZE !== undefined) {
    rank = int(env, "RANK");
    size = int(env, "WORLD_SIZE");
    localRank = int(env, "LOCAL_RANK");
    localSize = int(env, "LOCAL_WORLD_SIZE");
    source = env.CCLAB_STORE_TOKEN && env.CCLAB_JOB_ID ? "cclab" : "torchrun";
  } else if (env.OMPI_COMM_WORLD_RANK !== undefined) {
    rank = int(env, "OMPI_COMM_WORLD_RANK");
    size = int(env, "OMPI_COMM_WORLD_SIZE");
    localRank = int(env, "OMPI_COMM_WORLD_LOCAL_RANK");
    localSize = int(env, "OMPI_COMM_WORLD_LOCAL_SIZE");
    localNames = ["OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"];
    source = "openmpi";
  } else if (env.PMI_RANK !== undefined) {
    rank = int(env, "PMI_RANK");
    size = int(env, "PMI_SIZE");
    localRank = int(env, "MPI_LOCALRANKID");
    localSize = int(env, "MPI_LOCALNRANKS");
    localNames = ["MPI_LOCALRANKID", "MPI_LOCALNRANKS"];
    source = "pmi";
  } else if (env.SLURM_PROCID !== undefined && env.SLURM_NTASKS !== undefined) {
    rank = int(env, "SLURM_PROCID");
    size = int(env, "SLURM_NTASKS");
    localRank = int(env, "SLURM_LOCALID");
    localSize = int(env, "SLURM_NTASKS_PER_NODE");
    localNames = ["SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"];
    source = "slurm";
  }
  if (rank === undefined || size === undefined) {
    throw new InvalidArgumentError(
      { op: "init", arg: "env" },
      "this process is not a rank of a job: set RANK and WORLD_SIZE (and MASTER_ADDR, MASTER_PORT), " +
        "or start it with cclab run, mpirun or srun",
    );
  }
  if (size < 1 || rank >= size) {
    throw new InvalidArgumentError({ op: "init", arg: "RANK" }, `rank ${rank} is outside a world of ${size}`);
  }
  const [localRankName, localSizeName] = localNames as [string, string];
  // Slurm's SLURM_NTASKS_PER_NODE is what was asked per node, which a short last node may not hold.
  const exact = source !== "slurm";
  if (localSize !== undefined && (localSize < 1 || (exact && localSize > size))) {
    throw new InvalidArgumentError(
      { rank, op: "init", arg: localSizeName },
      `must be the number of ranks on this host, 1 to the world's ${size}, got ${localSize}; ` +
        `set it as the launcher does (torchrun's --nproc_per_node) or leave it unset`,
    );
  }
  if (exact && localRank !== undefined && localRank >= (localSize ?? size)) {
    throw new InvalidArgumentError(
      { rank, op: "init", arg: localRankName },
      `local rank ${localRank} is outside the ${localSize ?? size} ranks on this host (${localSize !== undefined ? localSizeName : "the world's size"})`,
    );
  }
  const masterAddr = env.MASTER_ADDR || "127.0.0.1";
  const masterPort = int(env, "MASTER_PORT") ?? DEFAULT_MASTER_PORT;
  if (masterPort > 65535) {
    throw new InvalidArgumentError(
      { rank, op: "init", arg: "MASTER_PORT" },
      `must be a port number, got ${masterPort}`,
    );
  }
  const launcherPid = int(env, "CCLAB_LAUNCHER_PID");
  const singleHost = isLoopback(masterAddr) || (isThisHost(masterAddr) && localSize === size);
  // The launcher's pid means something only on the launcher's host (mpirun may start ranks elsewhere).
  const launcherHere = !env.CCLAB_LAUNCHER_HOST || env.CCLAB_LAUNCHER_HOST === hostname();
  return {
    rank,
    size,
    localRank: localRank ?? rank,
    localSize: localSize ?? size,
    source,
    masterAddr,
    masterPort,
    masterGiven: Boolean(env.MASTER_ADDR || env.MASTER_PORT),
    singleHost,
    storeAddr: singleHost ? "127.0.0.1" : masterAddr,
    token: env.CCLAB_STORE_TOKEN || undefined,
    storeHosted: env.CCLAB_STORE_HOSTED === "1",
    launcherPid: launcherPid && launcherPid > 1 && launcherHere ? launcherPid : undefined,
  };
}

/** Where a rank's store is and what it presents there. */
export interface StoreEndpoint {
  readonly host: string;
  readonly port: number;
  /**
   * Ranks on one host without CCLAB_STORE_TOKEN: a Unix-domain socket in place of host:port, in a
   * directory the store's host makes fresh for the job under this one (socket-dir.ts).
   */
  readonly socketBase?: string;
  readonly token: string;
}

/**
 * Where the store is and the token a rank presents: CCLAB_STORE_TOKEN over TCP (cclab run hands
 * its ranks a random one; across hosts the user exports one). With no token and every rank on
 * this host (torchrun's single host), a Unix-domain socket in a directory made fresh for the job
 * that only this user can enter (socket-dir.ts): other users cannot connect at all, so none can
 * squat on a rank's place or read its keys, nor take the directory's name first. A store reachable from the network needs a token.
 */
export function storeEndpoint(job: JobEnv, env: NodeJS.ProcessEnv = process.env): StoreEndpoint {
  const tcp = { host: job.storeAddr, port: job.masterPort };
  if (job.token) return { ...tcp, token: job.token };
  if (job.singleHost && !job.storeHosted) {
    return { ...tcp, socketBase: socketBase(env), token: SOCKET_TOKEN };
  }
  throw new InvalidArgumentError(
    { rank: job.rank, op: "init", arg: "CCLAB_STORE_TOKEN" },
    job.storeHosted
      ? "cclab run hosts the store but gave this rank no token (CCLAB_STORE_TOKEN is unset)"
      : `ranks on several hosts share a store at ${job.masterAddr}:${job.masterPort}, reachable from the network, so it needs a token: ` +
          "export CCLAB_STORE_TOKEN=$(openssl rand -hex 16) with the same value to every rank (on one host, set " +
          "MASTER_ADDR=127.0.0.1, or LOCAL_WORLD_SIZE equal to WORLD_SIZE, and none is needed)",
  );
}

/** True for addresses of this machine only, where the store need not listen beyond loopback. */
export function isLoopback(addr: string): boolean {
  return addr === "localhost" || addr === "::1" || addr.startsWith("127.");
}

/** True when `addr` is this host's name or one of its interfaces' addresses (no DNS asked). */
export function isThisHost(addr: string): boolean {
  if (isLoopback(addr) || addr === hostname()) return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address === addr));
}

/**
 * True when an MPI launcher (mpirun, mpiexec, srun) started this process as one rank of an MPI
 * job; false for ranks started one by one with torchrun-style variables, which are MPI singletons.
 */
export function mpiLaunched(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    env.OMPI_COMM_WORLD_SIZE !== undefined ||
    env.PMI_SIZE !== undefined ||
    env.PMIX_RANK !== undefined ||
    (env.RANK === undefined && env.SLURM_PROCID !== undefined)
  );
}
