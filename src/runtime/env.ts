/**
 * Where this process sits in a job, read from the environment the way torchrun's env:// does:
 * RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or what mpirun (Open MPI,
 * MPICH's PMI) or Slurm's srun set when they, not cclab, started the job.
 */
import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../core/errors.js";

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
  /** The store token; derived from the job id when an outside launcher gave none. */
  readonly token: string;
  readonly job: string;
  /** The launcher hosts the store; otherwise rank 0 does. */
  readonly storeHosted: boolean;
}

function int(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
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
  let source = "";
  let jobId: string | undefined;
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
    source = "openmpi";
    jobId = env.OMPI_MCA_ess_base_jobid ?? env.OMPI_MCA_orte_ess_jobid;
  } else if (env.PMI_RANK !== undefined) {
    rank = int(env, "PMI_RANK");
    size = int(env, "PMI_SIZE");
    localRank = int(env, "MPI_LOCALRANKID");
    localSize = int(env, "MPI_LOCALNRANKS");
    source = "pmi";
    jobId = env.PMI_ID ?? env.PMI_JOBID;
  } else if (env.SLURM_PROCID !== undefined && env.SLURM_NTASKS !== undefined) {
    rank = int(env, "SLURM_PROCID");
    size = int(env, "SLURM_NTASKS");
    localRank = int(env, "SLURM_LOCALID");
    localSize = int(env, "SLURM_NTASKS_PER_NODE");
    source = "slurm";
    jobId = env.SLURM_JOB_ID && `${env.SLURM_JOB_ID}.${env.SLURM_STEP_ID ?? ""}`;
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
  const masterAddr = env.MASTER_ADDR || "127.0.0.1";
  const masterPort = int(env, "MASTER_PORT") ?? DEFAULT_MASTER_PORT;
  const job = env.CCLAB_JOB_ID || jobId || `${masterAddr}:${masterPort}`;
  let token = env.CCLAB_STORE_TOKEN;
  if (!token) {
    if (!jobId) {
      throw new InvalidArgumentError(
        { rank, op: "init", arg: "CCLAB_STORE_TOKEN" },
        "no store token: export CCLAB_STORE_TOKEN=$(openssl rand -hex 16) to every rank (cclab run sets it)",
      );
    }
    // Started by mpirun/srun without cclab run: every rank derives the same token from the job id.
    token = createHash("sha256").update(`cclab-store:${jobId}`).digest("hex").slice(0, 32);
  }
  return {
    rank,
    size,
    localRank: localRank ?? rank,
    localSize: localSize ?? size,
    source,
    masterAddr,
    masterPort,
    token,
    job,
    storeHosted: env.CCLAB_STORE_HOSTED === "1",
  };
}

/** True for addresses of this machine only, where the store need not listen beyond loopback. */
export function isLoopback(addr: string): boolean {
  return addr === "localhost" || addr === "::1" || addr.startsWith("127.");
}
