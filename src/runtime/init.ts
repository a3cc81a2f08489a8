/**
 * env:// initialisation (torch.distributed.init_process_group's default): a process started as
 * one rank (by cclab run, torchrun-style variables, mpirun or srun) joins its job and gets a Comm
 * that times out, aborts and notices dead ranks:
 *
 *   const comm = await init({ backend: "mpi" });
 *   ... collectives ...
 *   await finalize(comm);
 *
 * The order matters: first the store (connect, AUTH, then a rendezvous of every rank, each step
 * under the timeout and saying who it waits for), then the backend. So a rank hosting the store
 * never blocks in MPI_Init while others still need it. Under a plain mpirun the mpi backend needs
 * no store at all: MPI is the rendezvous, mpirun notices dead ranks, and a failure ends the job
 * through MPI_Abort.
 */

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { useTopology } from "../collectives/plans.js";
import type { Comm } from "../comm.js";
import {
  AbortError,
  CclabError,
  InvalidArgumentError,
  MismatchError,
  TimeoutError,
  UnavailableError,
} from "../core/errors.js";
import { checkTimeoutMs, formatDuration } from "../core/timer.js";
import { joinedKey, type KVStore, ownKey } from "../kvstore.js";
import { checkedFromEnv, withChecks } from "./checked.js";
import { type JobEnv, mpiLaunched, readJobEnv, storeEndpoint } from "./env.js";
import { checkFaultRanks, type Fault, faultsFromEnv, withFaults } from "./faults.js";
import { AbortWatch, defaultTimeoutMs, GuardedComm, joinTimeoutMs } from "./guard.js";
import { claimJobSocket, findJobSockets, makeJobSocket, removeJobSocket, socketPattern } from "./socket-dir.js";
import { type HostedStore, hostStore } from "./store/hosted.js";
import { StoreClient } from "./store/index.js";
import { importUserModule } from "./user-module.js";
import {
  allowBlocking,
  blockingDeadline,
  eventLoopBound,
  HELD_THREAD,
  MIN_BLOCKED_MS,
  startWatchdog,
} from "./watchdog.js";

export interface InitOptions {
  /** 'mpi' or 'nccl' (process backends; sim runs inside cclab run). Default CCLAB_BACKEND or 'mpi'. */
  backend?: string;
  /** Per blocking call, and for every step of joining; default CCLAB_TIMEOUT seconds or 300 s. */
  timeoutMs?: number;
  /** Checked mode; default CCLAB_CHECK. */
  check?: boolean;
  /** Default CCLAB_FAULT. */
  faults?: readonly Fault[];
  env?: NodeJS.ProcessEnv;
}

/** What finalize needs besides the comm: the store (if any), the server if this rank hosts it, the backend's own ends. */
interface Hosting {
  readonly job: JobEnv;
  readonly store: StoreClient | null;
  readonly server: HostedStore | null;
  readonly watch: AbortWatch;
  readonly timeoutMs: number;
  readonly backend: BackendEnds;
}

const hosting = new WeakMap<Comm, Hosting>();

/** A module named by CCLAB_BACKEND_MODULE: the user's own backend. */
interface CustomBackend {
  createComm?: (job: JobEnv, store: KVStore | null) => Promise<Comm> | Comm;
}

/** How a backend ends: after every rank is done, and when this rank fails with no store to tell. */
interface BackendEnds {
  /** Messages that reached this rank and were never received (asked once every rank is done). */
  unreceived(): string[];
  finalize(): void;
  abort(): void;
}

const noEnds: BackendEnds = { unreceived: () => [], finalize() {}, abort() {} };

/** Loads a backend, naming it when it cannot be (no MPI or NCCL here, a broken addon). */
async function importBackend<T>(load: () => Promise<T>, what: string): Promise<T> {
  try {
    return await load();
  } catch (e) {
    throw new UnavailableError(`backend ${what} could not be loaded: ${(e as Error).message}`);
  }
}

/** Starts the backend's comm for this rank. CCLAB_BACKEND_MODULE (exporting createComm) overrides. */
async function startBackend(
  backend: string,
  job: JobEnv,
  store: KVStore | null,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  joinMs: number,
  watch: AbortWatch,
): Promise<{ comm: Comm; ends: BackendEnds }> {
  const custom = env.CCLAB_BACKEND_MODULE;
  if (custom) {
    const url = pathToFileURL(resolve(custom)).href;
    const m = await importBackend(() => import(url) as Promise<CustomBackend>, custom);
    if (typeof m.createComm !== "function") {
      throw new InvalidArgumentError({ op: "init", arg: "CCLAB_BACKEND_MODULE" }, `${custom} exports no createComm`);
    }
    return { comm: await m.createComm(job, store), ends: noEnds };
  }
  if (backend === "mpi") {
    const m = await importBackend(() => import("../backends/mpi/index.js"), "mpi");
    // This rank finalises MPI itself once every rank is done; any other exit must not block in MPI_Finalize.
    m.finalizeExplicitly();
    // The guard's deadline (timeoutMs) governs; MPI's own, which ends in MPI_Abort, is only a backstop.
    const mpiOptions = { timeoutMs: timeoutMs + 10_000 };
    let comm: Comm;
    if (!mpiLaunched(env) && job.size > 1) {
      // Started one by one (torchrun-style): the singletons join one MPI job through the store.
      if (!store) {
        throw new UnavailableError("ranks started without mpirun join MPI through the store, and this job has none");
      }
      const allowed = allowBlocking(joinMs);
      comm = await m
        .joinMpi({
          ...mpiOptions,
          rank: job.rank,
          size: job.size,
          localSize: job.localSize,
          singleHost: job.singleHost,
          store,
          timeoutMs: joinMs,
          bound: blockingDeadline,
          notice: (line: string) => process.stderr.write(`cclab: ${line}\n`),
          aborted: abortOf(watch, `rank ${job.rank}: init: joining MPI`),
        })
        .finally(allowed);
    } else {
      // MPI_Init blocks the main thread while mpirun gathers every rank: part of joining, under its deadline.
      const allowed = allowBlocking(joinMs);
      try {
        comm = await m.initMpi(mpiOptions);
      } finally {
        allowed();
      }
    }
    if (comm.size !== job.size) {
      throw new InvalidArgumentError(
        { rank: job.rank, op: "init", arg: "WORLD_SIZE" },
        `the environment says ${job.size} ranks (${job.source}) but MPI started ${comm.size}: ` +
          "start every rank with one mpirun (or srun), or only with torchrun-style variables",
      );
    }
    const ends: BackendEnds = {
      unreceived: () => m.unreceivedMessages(),
      finalize: () => m.finalizeMpi(),
      abort: () => m.abortMpi(1),
    };
    return { comm, ends };
  }
  if (backend === "nccl") {
    const m = await importBackend(() => import("../backends/nccl/index.js"), "nccl");
    // NCCL exchanges its unique id through the store, as torch's ProcessGroupNCCL does (init always opens one for nccl).
    if (!store)
      throw new UnavailableError(
        "the nccl backend exchanges NCCL's unique id through the store, and this job has none",
      );
    const comm = await m.initNccl({ rank: job.rank, size: job.size, localRank: job.localRank, store });
    return { comm, ends: noEnds };
  }
  throw new InvalidArgumentError(
    { rank: job.rank, op: "init", arg: "backend" },
    `unknown process backend ${JSON.stringify(backend)}; expected mpi or nccl (sim runs in cclab run)`,
  );
}

/** Rejects (with AbortError) when the job aborts; never resolves. */
function abortOf(watch: AbortWatch, what: string): Promise<never> {
  const p = new Promise<never>((_, reject) => {
    watch.on((info) => reject(new AbortError(`${what}: aborted: ${info.reason}`)));
  });
  p.catch(() => {});
  return p;
}

function rankList(ranks: readonly number[]): string {
  const shown = ranks.length > 8 ? `${ranks.slice(0, 8).join(", ")}, ...` : ranks.join(", ");
  return ranks.length === 1 ? `rank ${shown}` : `ranks ${shown}`;
}

/** Ranks whose key `key(r)` is missing. */
async function missing(store: KVStore, size: number, key: (r: number) => string): Promise<number[]> {
  const out: number[] = [];
  for (let r = 0; r < size; r++) if (!(await store.check([key(r)]))) out.push(r);
  return out;
}

/**
 * Waits until every rank's key exists, racing the job's abort (Infinity: no deadline but the
 * abort's); says who it waits for every `noticeMs` on stderr, and in the TimeoutError: 'waiting
 * for ranks 2, 3 to join the store at host:port (2 of 4 ranks arrived)'.
 */
async function waitForAll(
  store: KVStore,
  watch: AbortWatch,
  size: number,
  key: (r: number) => string,
  what: { who: string; doing: string; timeoutMs: number; noticeMs: number },
): Promise<void> {
  const keys = Array.from({ length: size }, (_, r) => key(r));
  const end = Date.now() + what.timeoutMs;
  let off = () => {};
  const aborted = new Promise<never>((_, reject) => {
    off = watch.on((info) => reject(new AbortError(`${what.who}: ${what.doing}: aborted: ${info.reason}`)));
  });
  aborted.catch(() => {});
  try {
    for (;;) {
      const slice = Math.min(what.noticeMs, end - Date.now());
      try {
        await Promise.race([store.wait(keys, Math.max(1, slice)), aborted]);
        return;
      } catch (e) {
        if (!(e instanceof TimeoutError)) throw e;
      }
      const gone = await missing(store, size, key);
      const status = `waiting for ${rankList(gone)} ${what.doing} (${size - gone.length} of ${size} ranks arrived)`;
      if (Date.now() >= end) {
        throw new TimeoutError(`${what.who}: ${status}: timed out after ${formatDuration(what.timeoutMs)}`);
      }
      process.stderr.write(`cclab: ${what.who}: ${status}\n`);
    }
  } finally {
    off();
  }
}

/** Joins the job this process is a rank of and returns its guarded comm. */
export async function init(options: InitOptions = {}): Promise<GuardedComm> {
  const env = options.env ?? process.env;
  const job = readJobEnv(env);
  const who = `rank ${job.rank}`;
  const timeoutMs = checkTimeoutMs(options.timeoutMs ?? defaultTimeoutMs(env), {
    rank: job.rank,
    op: "init",
    arg: "timeoutMs",
  });
  // Ranks start at different times: joining has its own deadline (at least 30 s, CCLAB_JOIN_TIMEOUT).
  const joinMs = joinTimeoutMs(timeoutMs, env);
  const backend = options.backend ?? env.CCLAB_BACKEND ?? "mpi";
  const checked = options.check ?? checkedFromEnv(env);
  const faults = options.faults ?? faultsFromEnv(env);
  checkFaultRanks(faults, job.size, "CCLAB_FAULT");
  // cclab run --topology: the world comm's collectives run on the machine's shape (read before joining).
  const shape = env.CCLAB_TOPOLOGY
    ? (await import("../tools/topology-shape.js")).shapeFromEnv(env, job.size, { rank: job.rank, op: "init" })
    : undefined;
  // This rank dies with its parent (mpirun's daemon, or cclab run) and with the cclab launcher.
  startWatchdog({
    who,
    watched: [
      { pid: process.ppid, what: "the parent process" },
      ...(job.launcherPid ? [{ pid: job.launcherPid, what: "the launcher (cclab run)" }] : []),
    ],
    stoppedMs: timeoutMs,
  });
  // --timeout bounds what the rank's own code does too: a main thread that never comes back to its
  // event loop (a schedule() that never returns, a busy loop) ends the rank, saying so.
  const seconds = formatDuration(timeoutMs);
  eventLoopBound(
    timeoutMs,
    `cclab: ${who}: ${HELD_THREAD} {s} s without a pause, past the job's timeout (${seconds}, at least ${MIN_BLOCKED_MS / 1000} s): ` +
      "a computation that never returns (a loop, a schedule() that never ends)? stopping this rank",
  ).running(job.rank);
  // A store unless MPI, started by a plain mpirun/srun, can do without one (ranks started one by
  // one, torchrun-style, join MPI through it).
  const useStore =
    job.storeHosted ||
    backend !== "mpi" ||
    job.masterGiven ||
    Boolean(env.CCLAB_BACKEND_MODULE) ||
    (!mpiLaunched(env) && job.size > 1);
  if (!useStore && checked) {
    throw new InvalidArgumentError(
      { rank: job.rank, op: "init", arg: "CCLAB_CHECK" },
      "checked mode compares calls through the rendezvous store, and this job has none: start it with cclab run, " +
        "or set MASTER_ADDR and MASTER_PORT (rank 0 then hosts the store)",
    );
  }
  let server: HostedStore | null = null;
  let store: StoreClient | null = null;
  if (useStore) {
    const at = storeEndpoint(job, env);
    // On one host without a token: a socket in a directory made fresh for the job (socket-dir.ts).
    const base = at.socketBase;
    let path: string | undefined;
    if (job.rank === 0 && !job.storeHosted) {
      // No cclab launcher: rank 0 hosts the store, as torchrun's c10d rendezvous does on the master,
      // from a worker thread, so this rank blocking in its backend never stops it answering the others.
      // On one host without a token it listens on a socket only this user can reach.
      if (base !== undefined) path = makeJobSocket(base, at.port, job.rank);
      const hosted = await hostStore({
        token: at.token,
        world: job.size,
        host: at.host,
        port: at.port,
        ...(path !== undefined ? { path } : {}),
      }).catch((e: unknown) => {
        if (path !== undefined) removeJobSocket(path);
        throw e;
      });
      // Listening: claim the port against another job of this user started at the same time.
      if (path !== undefined) {
        const listening = path;
        path = await claimJobSocket(listening, at.port, job.rank).catch(async (e: unknown) => {
          await hosted.closeWhenDone(0);
          removeJobSocket(listening);
          throw e;
        });
      }
      const dir = path;
      server = {
        port: hosted.port,
        closeWhenDone: async (ms) => {
          await hosted.closeWhenDone(ms);
          if (dir !== undefined) removeJobSocket(dir);
        },
      };
    }
    const locate =
      base !== undefined && path === undefined
        ? { find: () => findJobSockets(base, at.port), where: socketPattern(base, at.port) }
        : undefined;
    try {
      store = await StoreClient.connect({
        host: at.host,
        port: at.port,
        token: at.token,
        ...(path !== undefined ? { path } : {}),
        ...(locate ? { locate } : {}),
        role: { rank: job.rank },
        timeoutMs,
        connectTimeoutMs: joinMs,
        notice: (line) => process.stderr.write(`cclab: ${who}: ${line}\n`),
      });
    } catch (e) {
      await server?.closeWhenDone(0);
      if (e instanceof CclabError) e.message = `${who}: init: ${e.message}`;
      throw e;
    }
  }
  const watch = new AbortWatch(store);
  let started: { comm: Comm; ends: BackendEnds };
  try {
    if (store) {
      await waitForAll(store, watch, job.size, joinedKey, {
        who,
        doing: `to join the store at ${store.where}`,
        timeoutMs: joinMs,
        noticeMs: 10_000,
      });
    }
    started = await startBackend(backend, job, store, env, timeoutMs, joinMs, watch);
  } catch (e) {
    if (store) await failRank(store, job, e);
    watch.stop();
    await store?.close();
    await server?.closeWhenDone(timeoutMs);
    throw e;
  }
  // Checked mode needs the store (refused above without one).
  const inner = store ? withChecks(started.comm, checked, { store, timeoutMs, watch }) : started.comm;
  const comm = new GuardedComm(withFaults(inner, faults, { rank: job.rank, mode: "exit" }), {
    store,
    rank: job.rank,
    timeoutMs,
    watch,
  });
  if (shape) useTopology(comm, shape);
  hosting.set(comm, { job, store, server, watch, timeoutMs, backend: started.ends });
  return comm;
}

/** Publishes this rank's failure as the job's abort (unless it is itself an abort from elsewhere). */
async function failRank(store: KVStore, job: JobEnv, e: unknown): Promise<void> {
  if (e instanceof AbortError) return;
  const reason = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  await store.abort(job.rank, `rank ${job.rank} failed: ${reason}`).catch(() => {});
}

/**
 * For an exit that did not go through finalize (process.exit in the middle of the job, or a main
 * that never settled): tells the store why, in the one synchronous write an exit handler allows.
 * The store reports the rank dead anyway when its connection drops; this names the cause.
 */
export function abortOnExit(comm: Comm, reason: string): void {
  const rt = hosting.get(comm);
  rt?.store?.abortNow(rt.job.rank, reason);
}

/**
 * Leaves the job. Without an error: says this rank is done, waits (racing the abort, under the
 * timeout) until every rank is, checks that no message sent to this rank was left unreceived
 * (its data would be lost), waits until every rank has checked, and only then finalises the
 * backend (MPI_Finalize waits for every rank, so it must not start while one may never come).
 * With an error: publishes it as the job's abort (or, with no store, aborts the job: MPI_Abort).
 */
export async function finalize(comm: Comm, error?: unknown): Promise<void> {
  const rt = hosting.get(comm);
  if (!rt) return comm.destroy();
  hosting.delete(comm);
  const { store, server, job, watch, timeoutMs, backend } = rt;
  let clean = error === undefined;
  let failure: unknown;
  if (!clean) {
    if (store) await failRank(store, job, error);
    else backend.abort();
  } else if (store) {
    const who = `rank ${job.rank}`;
    try {
      await store.set(ownKey(job.rank, "done"), "1");
      // Ranks finish their programs at different times: no deadline here but the job's abort (a
      // rank that dies or fails publishes one; a stopped launcher is the watchdog's).
      const until = { who, timeoutMs: Number.POSITIVE_INFINITY, noticeMs: 60_000 };
      await waitForAll(store, watch, job.size, (r) => ownKey(r, "done"), { ...until, doing: "to finish" });
      const lost = backend.unreceived();
      if (lost.length > 0) {
        throw new MismatchError(`${lost.join("; ")}: the job ended with data sent and never received`);
      }
      await store.set(ownKey(job.rank, "clean"), "1");
      await waitForAll(store, watch, job.size, (r) => ownKey(r, "clean"), { ...until, doing: "to check its messages" });
    } catch (e) {
      // This rank lost data, another rank failed, or the store is gone: MPI must not be finalised,
      // and the caller (the worker) fails this rank with the reason.
      clean = false;
      if (!(e instanceof AbortError)) await failRank(store, job, e);
      failure = e;
    }
  }
  watch.stop();
  try {
    comm.destroy();
  } catch (e) {
    if (!(e instanceof CclabError)) throw e;
  }
  if (clean) backend.finalize();
  await store?.close();
  // Keep serving until every other rank has said goodbye (or died), so none loses its store mid-goodbye.
  await server?.closeWhenDone(timeoutMs);
  if (failure !== undefined) throw failure;
}

export interface ProgramModule {
  main: (comm: Comm, args: string[]) => unknown;
}

/** Imports a cclab program (a module exporting main(comm, args)) and checks its shape. */
export async function loadProgram(path: string): Promise<ProgramModule> {
  const m = (await importUserModule(path)) as Partial<ProgramModule>;
  if (typeof m.main !== "function") {
    throw new InvalidArgumentError(
      { op: "run", arg: "program" },
      `${path} does not export main(comm, args); a cclab program is a module with export async function main(comm, args)`,
    );
  }
  return m as ProgramModule;
}
