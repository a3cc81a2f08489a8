/**
 * env:// initialisation (torch.distributed.init_process_group's default): a process started as
 * one rank (by cclab run, torchrun-style variables, mpirun or srun) joins the rendezvous store,
 * starts its backend and gets a Comm that times out, aborts and notices dead ranks:
 *
 *   const comm = await init({ backend: "mpi" });
 *   ... collectives ...
 *   await finalize(comm);
 *
 * `runProgram` is the same for a cclab program module (export main(comm, args)), as the worker runs it.
 */

import { hostname } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Comm } from "../comm.js";
import { AbortError, CclabError, InvalidArgumentError, UnavailableError } from "../core/errors.js";
import { checkedFromEnv, withChecks } from "./checked.js";
import { isLoopback, type JobEnv, readJobEnv } from "./env.js";
import { type Fault, faultsFromEnv, withFaults } from "./faults.js";
import { type AbortInfo, AbortWatch, abortKey, defaultTimeoutMs, GuardedComm, publishAbort } from "./guard.js";
import { type KVStore, StoreClient, StoreServer } from "./store.js";

export interface InitOptions {
  /** 'mpi' or 'nccl' (process backends; sim runs inside cclab run). Default CCLAB_BACKEND or 'mpi'. */
  backend?: string;
  /** Per blocking call; default CCLAB_TIMEOUT seconds or 300 s. */
  timeoutMs?: number;
  /** Checked mode; default CCLAB_CHECK. */
  check?: boolean;
  /** Default CCLAB_FAULT. */
  faults?: readonly Fault[];
  env?: NodeJS.ProcessEnv;
}

/** What finalize needs besides the comm: the connection, and the server if this rank hosts it. */
interface Hosting {
  readonly job: JobEnv;
  readonly store: StoreClient;
  readonly server: StoreServer | null;
  readonly watch: AbortWatch;
}

const hosting = new WeakMap<Comm, Hosting>();

interface BackendModule {
  initMpi?: (...a: unknown[]) => Promise<Comm> | Comm;
  initNccl?: (...a: unknown[]) => Promise<Comm> | Comm;
  createComm?: (job: JobEnv, store: KVStore) => Promise<Comm> | Comm;
}

async function importBackend(path: string, what: string): Promise<BackendModule> {
  try {
    return (await import(path)) as BackendModule;
  } catch (e) {
    throw new UnavailableError(`backend ${what} could not be loaded from ${path}: ${(e as Error).message}`);
  }
}

/** Starts the backend's comm for this rank. CCLAB_BACKEND_MODULE (exporting createComm) overrides. */
async function startBackend(
  backend: string,
  job: JobEnv,
  store: KVStore,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<Comm> {
  const custom = env.CCLAB_BACKEND_MODULE;
  if (custom) {
    const m = await importBackend(pathToFileURL(resolve(custom)).href, custom);
    if (typeof m.createComm !== "function") {
      throw new InvalidArgumentError({ op: "init", arg: "CCLAB_BACKEND_MODULE" }, `${custom} exports no createComm`);
    }
    return m.createComm(job, store);
  }
  if (backend === "mpi") {
    const m = await importBackend(new URL("../backends/mpi/index.js", import.meta.url).href, "mpi");
    if (typeof m.initMpi !== "function") throw new UnavailableError("the mpi backend exports no initMpi()");
    // The guard's deadline (timeoutMs) governs; MPI's own, which ends in MPI_Abort, is only a backstop.
    return m.initMpi({ timeoutMs: timeoutMs + 10_000 });
  }
  if (backend === "nccl") {
    const m = await importBackend(new URL("../backends/nccl/index.js", import.meta.url).href, "nccl");
    if (typeof m.initNccl !== "function") throw new UnavailableError("the nccl backend exports no initNccl()");
    // NCCL exchanges its unique id through the store, as torch's ProcessGroupNCCL does.
    return m.initNccl({ rank: job.rank, size: job.size, localRank: job.localRank, store });
  }
  throw new InvalidArgumentError(
    { rank: job.rank, op: "init", arg: "backend" },
    `unknown process backend ${JSON.stringify(backend)}; expected mpi or nccl (sim runs in cclab run)`,
  );
}

/** Joins the job this process is a rank of and returns its guarded comm. */
export async function init(options: InitOptions = {}): Promise<GuardedComm> {
  const env = options.env ?? process.env;
  const job = readJobEnv(env);
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs(env);
  let server: StoreServer | null = null;
  if (job.rank === 0 && !job.storeHosted) {
    // No cclab launcher: rank 0 hosts the store, as torchrun's c10d rendezvous does on the master.
    server = await StoreServer.start({
      token: job.token,
      host: isLoopback(job.masterAddr) ? "127.0.0.1" : "0.0.0.0",
      port: job.masterPort,
      abortKey: abortKey(job.job),
    });
  }
  const store = await StoreClient.connect({
    host: job.masterAddr,
    port: job.masterPort,
    token: job.token,
    rank: job.rank,
    timeoutMs,
  });
  // The launcher kills whatever is left of this rank at the end (mpirun's ranks are not in its process group).
  await store.set(`pid/${job.rank}`, `${hostname()}:${process.pid}`);
  const watch = new AbortWatch(store, job.job);
  const backend = options.backend ?? env.CCLAB_BACKEND ?? "mpi";
  let inner: Comm;
  try {
    inner = await startBackend(backend, job, store, env, timeoutMs);
  } catch (e) {
    await failRank(store, job, e);
    throw e;
  }
  const faults = options.faults ?? faultsFromEnv(env);
  const checked = withChecks(inner, options.check ?? checkedFromEnv(env), { store, timeoutMs, watch });
  const comm = new GuardedComm(withFaults(checked, faults, { rank: job.rank, mode: "exit" }), {
    store,
    rank: job.rank,
    timeoutMs,
    job: job.job,
    watch,
  });
  hosting.set(comm, { job, store, server, watch });
  return comm;
}

/** Publishes this rank's failure as the job's abort (unless it is itself an abort from elsewhere). */
async function failRank(store: KVStore, job: JobEnv, e: unknown): Promise<AbortInfo> {
  const reason = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return publishAbort(store, job.job, { rank: job.rank, reason: `rank ${job.rank} failed: ${reason}` });
}

/**
 * Leaves the job: says this rank is done and, on the rank hosting the store, keeps it up until
 * every rank is done or the job aborts. `error` marks a failed rank (its abort is published).
 */
export async function finalize(comm: GuardedComm, error?: unknown): Promise<void> {
  const rt = hosting.get(comm);
  if (!rt) return comm.destroy();
  const { store, server, job, watch } = rt;
  try {
    if (error !== undefined) {
      if (!(error instanceof AbortError)) await failRank(store, job, error);
    } else {
      await store.set(`done/${job.rank}`, "1");
      if (server) {
        const keys = Array.from({ length: job.size }, (_, r) => `done/${r}`);
        await new Promise<void>((res) => {
          const off = watch.on(() => res());
          store.wait(keys, Number.POSITIVE_INFINITY).then(
            () => {
              off();
              res();
            },
            () => res(),
          );
        });
      }
    }
  } catch {
    // The store is gone; there is nobody left to tell.
  }
  watch.stop();
  try {
    comm.destroy();
  } catch (e) {
    if (!(e instanceof CclabError)) throw e;
  }
  await store.close();
  await server?.close();
}

export interface ProgramModule {
  main: (comm: Comm, args: string[]) => unknown;
}

/** Imports a cclab program (a module exporting main(comm, args)) and checks its shape. */
export async function loadProgram(path: string): Promise<ProgramModule> {
  const m = (await import(pathToFileURL(resolve(path)).href)) as Partial<ProgramModule>;
  if (typeof m.main !== "function") {
    throw new InvalidArgumentError(
      { op: "run", arg: "program" },
      `${path} does not export main(comm, args); a cclab program is a module with export async function main(comm, args)`,
    );
  }
  return m as ProgramModule;
}
