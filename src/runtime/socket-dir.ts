/**
 * Where ranks on one host without CCLAB_STORE_TOKEN meet: a Unix-domain socket in a directory
 * made fresh for the job (mkdtemp: a random name, mode 0700) by the rank that hosts the store,
 * under $XDG_RUNTIME_DIR when that is this user's private directory, else under $TMPDIR. No path
 * is fixed in advance, so no other user can take it first: the other ranks look for the job's
 * directory by its prefix, cclab-<uid>-<MASTER_PORT>-, and take only a real directory (not a
 * link) owned by this user and open to nobody else, holding a socket. One another user makes
 * with that prefix is passed over, and stops nothing.
 *
 * Two jobs of this user at one port: once listening, the host claims the port (claimJobSocket) as
 * in Lamport's bakery: its directory, there since before, takes a ticket (CLOCK_MONOTONIC ns,
 * appended to its name: .<ticket>) and the host then waits for any directory still without one;
 * the smallest live ticket goes on, every other host refuses. A dead job's directory (its socket
 * refuses connections, made before this job's) is removed on the way. Ranks take the smallest.
 */
import { lstatSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { InvalidArgumentError } from "../core/errors.js";

const SOCKET = "store.sock";
const uid = () => (typeof process.getuid === "function" ? process.getuid() : 0);

/** A directory this user owns, not a link, open to nobody else. */
function isPrivateDir(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === uid() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** Where the job's directory goes: $XDG_RUNTIME_DIR when it is this user's own, else $TMPDIR. */
export function socketBase(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && isAbsolute(xdg) && isPrivateDir(xdg)) return xdg;
  return env.TMPDIR || tmpdir();
}

const prefix = (port: number) => `cclab-${uid()}-${port}-`;

/** The pattern the ranks look for, for messages. */
export function socketPattern(base: string, port: number): string {
  return join(base, `${prefix(port)}*`, SOCKET);
}

/** The store host: a fresh directory (0700, a random name) for this job's socket; its path. */
export function makeJobSocket(base: string, port: number, rank?: number): string {
  let dir: string;
  try {
    dir = mkdtempSync(join(base, prefix(port)));
  } catch (e) {
    throw new InvalidArgumentError(
      { rank, op: "init", arg: "MASTER_PORT" },
      `cannot make the one-host store's directory under ${base}: ${(e as Error).message}; set TMPDIR to a directory of yours, or CCLAB_STORE_TOKEN (the store then uses TCP)`,
    );
  }
  if (!isPrivateDir(dir)) {
    rmSync(dir, { recursive: true, force: true });
    throw new InvalidArgumentError(
      { rank, op: "init", arg: "MASTER_PORT" },
      `the one-host store's directory ${dir} was not made private to this user (mode 0700); set TMPDIR to a directory of yours`,
    );
  }
  return join(dir, SOCKET);
}

/** Removes the job's directory (its socket already gone with the server). */
export function removeJobSocket(path: string): void {
  rmSync(dirname(path), { recursive: true, force: true });
}

/** A job's directory at a port: its ticket once it has claimed the port, and its socket's state. */
interface JobDir {
  readonly dir: string;
  readonly ticket?: bigint;
  readonly made: number;
  readonly socket: boolean;
}

/** This user's private job directories at `port` under `base`. */
function jobDirs(base: string, port: number): JobDir[] {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  const p = prefix(port);
  const found: JobDir[] = [];
  for (const name of names) {
    if (!name.startsWith(p)) continue;
    const dir = join(base, name);
    let made: number;
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || st.uid !== uid() || (st.mode & 0o077) !== 0) continue;
      made = st.ctimeMs;
    } catch {
      continue;
    }
    let socket = false;
    try {
      socket = lstatSync(join(dir, SOCKET)).isSocket();
    } catch {}
    const t = /\.(\d+)$/.exec(name)?.[1];
    found.push({ dir, made, socket, ...(t !== undefined ? { ticket: BigInt(t) } : {}) });
  }
  return found;
}

/**
 * The sockets of this user's jobs at `port` under `base`, the one that claimed the port first
 * (smallest ticket) first, then those not yet claimed: only real directories of this user, open to
 * nobody else, that hold a socket. A job that died leaves one that refuses.
 */
export function findJobSockets(base: string, port: number): string[] {
  const order = (d: JobDir) => d.ticket ?? BigInt(Number.MAX_SAFE_INTEGER) ** 2n;
  return jobDirs(base, port)
    .filter((d) => d.socket)
    .sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : b.made - a.made))
    .map((d) => join(d.dir, SOCKET));
}

/** Whether a store answers at the socket `path`: false only when the connection is refused (or nothing is there). */
function answers(path: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = connect(path, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code !== "ECONNREFUSED" && e.code !== "ENOENT"));
  });
}

/** True when a store of this user's already answers at `port` under `base` (another job). */
export async function anotherStoreAnswers(base: string, port: number): Promise<string | undefined> {
  for (const path of findJobSockets(base, port)) if (await answers(path)) return path;
  return undefined;
}

/**
 * The store host, listening at `path` (made by makeJobSocket): claims `port` for its job and
 * returns the socket's path from now on; refuses, naming MASTER_PORT, when another job of this user
 * claimed it first (or stays unclaimed for `waitMs`), its directory removed: the caller then closes its store.
 */
export async function claimJobSocket(path: string, port: number, rank?: number, waitMs = 5000): Promise<string> {
  const base = dirname(dirname(path));
  const ticket = process.hrtime.bigint();
  const dir = `${dirname(path)}.${ticket}`;
  const refuse = (detail: string) =>
    new InvalidArgumentError(
      { rank, op: "init", arg: "MASTER_PORT" },
      `could not host the store: ${detail} (a job of this user with the same MASTER_PORT ${port}?); give this job another MASTER_PORT`,
    );
  try {
    renameSync(dirname(path), dir);
  } catch (e) {
    throw refuse(`its directory ${dirname(path)} was taken away (${(e as Error).message})`);
  }
  const made = lstatSync(dir).ctimeMs;
  const end = Date.now() + waitMs;
  for (;;) {
    let waiting: string | undefined;
    for (const d of jobDirs(base, port)) {
      if (d.dir === dir) continue;
      const live = d.socket && (await answers(join(d.dir, SOCKET)));
      if (!live && (d.ticket !== undefined || d.socket || d.made < made - waitMs)) {
        // A dead job's (its socket refuses, or it never listened), from before this one: removed.
        if (d.made <= made) rmSync(d.dir, { recursive: true, force: true });
        continue;
      }
      if (d.ticket === undefined) waiting = d.dir;
      else if (d.ticket < ticket || (d.ticket === ticket && basename(d.dir) < basename(dir))) {
        // Unreachable at once: no rank of either job joins this store.
        rmSync(dir, { recursive: true, force: true });
        throw refuse(`another store already listens at ${join(d.dir, SOCKET)}`);
      }
    }
    if (waiting === undefined) return join(dir, SOCKET);
    if (Date.now() > end) {
      rmSync(dir, { recursive: true, force: true });
      throw refuse(`another job starting at ${waiting} did not claim the port in ${waitMs / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
