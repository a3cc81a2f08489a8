/**
 * The mpi backend for ranks that no mpirun started together (torchrun-style variables: RANK,
 * WORLD_SIZE, MASTER_ADDR, MASTER_PORT): each process is an MPI singleton, and they join one
 * communicator through MPI-2's dynamic processes, with the job's store as the rendezvous:
 *
 *   rank 0 opens a port (MPI_Open_port) and publishes it; rank k, in turn, connects
 *   (MPI_Comm_connect) while ranks 0..k-1 accept together (MPI_Comm_accept), and both sides merge
 *   the intercommunicator (MPI_Intercomm_merge), rank k's side high, so it becomes rank k.
 *
 * Open MPI lets singletons connect only through its name server, ompi-server: rank 0 starts one
 * (it stops with rank 0, even a rank 0 killed with -9) and every rank points MPI_Init at it
 * (OMPI_MCA_pmix_server_uri). On one host the server and MPI's TCP stay on loopback.
 *
 * Every step waits on the store under the join deadline, racing the job's abort; the blocking
 * MPI calls (accept, connect, merge) start only once the store says the other side is there,
 * and each runs under `bound` (the rank's watchdog ends it if the call is still blocked).
 *
 * Also here: the session directory each Open MPI job (mpirun, or a singleton) gets of its own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { InvalidArgumentError, TimeoutError, UnavailableError } from "../../core/errors.js";
import { formatDuration } from "../../core/timer.js";
import { type KVStore, ownKey } from "../../kvstore.js";
import type { NativeMpi } from "../../native/types.js";

export interface JoinOptions {
  readonly rank: number;
  readonly size: number;
  /** Ranks on this host (LOCAL_WORLD_SIZE). */
  readonly localSize: number;
  /** Every rank is on this host: the name server and MPI's TCP stay on loopback. */
  readonly singleHost: boolean;
  readonly store: KVStore;
  /** Each step of joining. */
  readonly timeoutMs: number;
  /** Bounds a call that blocks the main thread; returns its disarm (the runtime's watchdog). */
  readonly bound?: (ms: number, why: string) => (() => void) | null;
  /** A line to show while waiting (stderr). */
  readonly notice?: (line: string) => void;
  /** Rejects when the job aborts (a rank failed or died): no step waits past it. */
  readonly aborted?: Promise<never>;
}

const SERVER_KEY = "mpi/ompi-server";
const PORT_KEY = "mpi/port";
const CONNECTING_KEY = "mpi/connecting";
const JOINED_KEY = "mpi/joined";

/** ompi-server's URI file: '<jobid>.<vpid>;tcp://host:port[;tcp6://...]', nothing else. */
const SERVER_URI = /^\d{1,12}\.\d{1,12};tcp6?:\/\/[0-9A-Za-z.:[\]%-]{1,200}(;tcp6?:\/\/[0-9A-Za-z.:[\]%-]{1,200})*$/;
/** Open MPI's and MPICH's port names: printable, no spaces, under MPI_MAX_PORT_NAME (1024). */
const PORT_NAME = /^[\x21-\x7e]{1,1000}$/;

let server: ChildProcess | undefined;

/** Stops the ompi-server this process started (after MPI_Finalize, or at exit). */
export function stopNameServer(): void {
  server?.stdin?.destroy();
  server = undefined;
}

/** Directories sessionBase made, removed when this process exits. */
const sessionBases = new Set<string>();

/**
 * A fresh, empty directory (mkdtemp, 0700) for one Open MPI job's session directory, to pass as
 * orte_tmpdir_base (Open MPI 4.1 takes it as `--mca orte_tmpdir_base` or
 * OMPI_MCA_orte_tmpdir_base). By default every job of a user shares /tmp/ompi.<host>.<uid>, and
 * two jobs starting at once race to create it ("A call to mkdir was unable to create the desired
 * directory … File exists"). Undefined where the user set OMPI_MCA_orte_tmpdir_base: theirs is
 * used. Named by this process's pid: removed when it exits, or, if it was killed, by the first
 * sessionBase of a later process of this user (Open MPI empties it at the job's end).
 */
export function sessionBase(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.OMPI_MCA_orte_tmpdir_base !== undefined) return undefined;
  if (sessionBases.size === 0) {
    sweepSessionBases();
    process.once("exit", () => {
      for (const d of sessionBases) rmSync(d, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(join(tmpdir(), `${SESSION_PREFIX}${process.pid}-`));
  sessionBases.add(dir);
  return dir;
}

const SESSION_PREFIX = "cclab-ompi-session-";

/** Removes the session bases of this user's processes that are gone (killed before their exit handler ran). */
function sweepSessionBases(): void {
  const uid = process.getuid?.();
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^cclab-ompi-session-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    const dir = join(tmpdir(), name);
    try {
      if (uid === undefined || lstatSync(dir).uid === uid) rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** True where the library is Open MPI (its singletons need ompi-server to connect). */
function isOpenMpi(mpi: NativeMpi): boolean {
  return /open mpi/i.test(mpi.version);
}

/**
 * Starts ompi-server under a shell that stops it when this process's end of its stdin closes
 * (this process exited, however it died), and resolves with its URI.
 */
async function startNameServer(o: JoinOptions): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "cclab-ompi-server-"));
  const file = join(dir, "uri");
  const mca = o.singleHost ? "--mca oob_tcp_if_include lo " : "";
  const script = `ompi-server --no-daemonize ${mca}-r "$1" </dev/null >/dev/null 2>"$1.err" & s=$!; read _; kill $s 2>/dev/null; wait $s`;
  const child = spawn("/bin/sh", ["-c", script, "sh", file], { stdio: ["pipe", "ignore", "ignore"] });
  child.on("error", () => {});
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  server = child;
  process.once("exit", stopNameServer);
  const end = Date.now() + o.timeoutMs;
  try {
    for (;;) {
      let uri = "";
      let err = "";
      try {
        uri = readFileSync(file, "utf8").trim();
      } catch {}
      if (SERVER_URI.test(uri)) return uri;
      try {
        err = readFileSync(`${file}.err`, "utf8").trim();
      } catch {}
      if (child.exitCode !== null || /not found|error/i.test(err) || Date.now() > end) {
        stopNameServer();
        const why =
          /not found/i.test(err) || child.exitCode === 127 ? "ompi-server is not on PATH" : err.split("\n")[0];
        throw new UnavailableError(
          `rank ${o.rank}: init: could not start Open MPI's name server (ompi-server), which ranks started ` +
            `without mpirun need to join one MPI job: ${why || `no URI within ${formatDuration(o.timeoutMs)}`}; ` +
            "start the ranks with mpirun (or cclab run --backend mpi) instead",
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Reads rank `from`'s key, waiting under the deadline (racing the job's abort, saying every 10 s
 * what it waits for), and checks it against `shape` before it is used.
 */
async function published(o: JoinOptions, from: number, key: string, shape: RegExp, what: string): Promise<string> {
  const end = Date.now() + o.timeoutMs;
  let v: string | undefined;
  while (v === undefined) {
    const slice = Math.max(1, Math.min(10_000, end - Date.now()));
    try {
      const got = o.store.get(ownKey(from, key), slice);
      v = (await (o.aborted ? Promise.race([got, o.aborted]) : got)).toString("utf8");
    } catch (e) {
      if (!(e instanceof TimeoutError)) throw e;
      const status = `waiting for rank ${from} to publish ${what} (joining MPI)`;
      if (Date.now() >= end) {
        throw new TimeoutError(`rank ${o.rank}: init: ${status}: timed out after ${formatDuration(o.timeoutMs)}`);
      }
      o.notice?.(`rank ${o.rank}: ${status}`);
    }
  }
  if (!shape.test(v)) {
    throw new InvalidArgumentError(
      { rank: o.rank, op: "init", arg: what },
      `rank ${from} published ${JSON.stringify(v.slice(0, 80))}, which is not ${what}`,
    );
  }
  return v;
}

/** Runs a blocking MPI call under the deadline, naming it if it never returns. */
function blocking<T>(o: JoinOptions, what: string, f: () => T): T {
  const why = `rank ${o.rank}: init: ${what} did not return within ${formatDuration(o.timeoutMs)}`;
  const disarm = o.bound?.(o.timeoutMs, why) ?? null;
  try {
    return f();
  } finally {
    disarm?.();
  }
}

/**
 * Before MPI_Init: where Open MPI is the library, rank 0 starts ompi-server and every rank points
 * MPI at it; on one host, loopback only. Variables the user set are left alone.
 */
export async function prepareSingletons(mpi: NativeMpi, o: JoinOptions): Promise<void> {
  const env = process.env;
  const set = (name: string, value: string) => {
    if (env[name] === undefined) env[name] = value;
  };
  if (isOpenMpi(mpi)) {
    // Before ompi-server starts: it and this singleton take their session directory from it.
    const base = sessionBase(env);
    if (base !== undefined) env.OMPI_MCA_orte_tmpdir_base = base;
    const uri =
      o.rank === 0
        ? await startNameServer(o)
        : await published(o, 0, SERVER_KEY, SERVER_URI, "Open MPI's name server URI");
    if (o.rank === 0) await o.store.set(ownKey(0, SERVER_KEY), uri);
    env.OMPI_MCA_pmix_server_uri = uri;
    if (o.singleHost) {
      set("OMPI_MCA_oob_tcp_if_include", "lo");
      set("OMPI_MCA_btl_tcp_if_include", "lo");
    }
    // Singletons do not know they share cores (mpirun --oversubscribe would say so): yield when idle.
    if (o.localSize > cpus().length) set("OMPI_MCA_mpi_yield_when_idle", "1");
  }
}

/**
 * After MPI_Init: joins the singletons into one intracommunicator of o.size ranks in RANK order
 * and returns its handle.
 */
export async function joinSingletons(mpi: NativeMpi, o: JoinOptions): Promise<number> {
  const { rank, size, store } = o;
  const self = mpi.commSelf();
  let port: string;
  let intra = self;
  let members = 1;
  if (rank === 0) {
    port = mpi.openPort();
    await store.set(ownKey(0, PORT_KEY), port);
  } else {
    port = await published(o, 0, PORT_KEY, PORT_NAME, "the MPI port name");
    // One at a time, in rank order: rank k connects once rank k-1 is in.
    await published(o, rank - 1, JOINED_KEY, /^1$/, "that it joined");
    await store.set(ownKey(rank, CONNECTING_KEY), "1");
    const inter = blocking(o, `MPI_Comm_connect to rank 0's port`, () => mpi.commConnect(port, 0, self));
    intra = blocking(o, "MPI_Intercomm_merge", () => mpi.intercommMerge(inter, true));
    mpi.commDisconnect(inter);
    members = rank + 1;
  }
  await store.set(ownKey(rank, JOINED_KEY), "1");
  while (members < size) {
    const next = members;
    await published(o, next, CONNECTING_KEY, /^1$/, "that it is connecting");
    const inter = blocking(o, `MPI_Comm_accept for rank ${next}`, () => mpi.commAccept(port, 0, intra));
    const merged = blocking(o, "MPI_Intercomm_merge", () => mpi.intercommMerge(inter, false));
    mpi.commDisconnect(inter);
    if (intra !== self) mpi.commFree(intra);
    intra = merged;
    members++;
  }
  if (rank === 0) mpi.closePort(port);
  const r = mpi.rank(intra);
  const s = mpi.size(intra);
  if (r !== rank || s !== size) {
    throw new InvalidArgumentError(
      { rank, op: "init", arg: "RANK" },
      `joining MPI gave rank ${r} of ${s}, but the environment says rank ${rank} of ${size}`,
    );
  }
  return intra;
}
