/**
 * Where ranks on one host without CCLAB_STORE_TOKEN meet: a Unix-domain socket in a directory
 * made fresh for the job (mkdtemp: a random name, mode 0700) by the rank that hosts the store,
 * under $XDG_RUNTIME_DIR when that is this user's private directory, else under $TMPDIR. No path
 * is fixed in advance, so no other user can take it first: the other ranks look for the job's
 * directory by its prefix, cclab-<uid>-<MASTER_PORT>-, and take only a real directory (not a
 * link) owned by this user and open to nobody else, holding a socket. One another user makes
 * with that prefix is passed over, and stops nothing.
 */
import { lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
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

/**
 * The sockets of this user's jobs at `port` under `base`, newest first: only real directories of
 * this user, open to nobody else, that hold a socket. A job that died leaves one that refuses.
 */
export function findJobSockets(base: string, port: number): string[] {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  const p = prefix(port);
  const found: { path: string; t: number }[] = [];
  for (const name of names) {
    if (!name.startsWith(p)) continue;
    const dir = join(base, name);
    if (!isPrivateDir(dir)) continue;
    try {
      const st = lstatSync(join(dir, SOCKET));
      if (st.isSocket()) found.push({ path: join(dir, SOCKET), t: st.mtimeMs });
    } catch {}
  }
  return found.sort((a, b) => b.t - a.t).map((f) => f.path);
}

/** True when a store of this user's already answers at `port` under `base` (another job). */
export async function anotherStoreAnswers(base: string, port: number): Promise<string | undefined> {
  for (const path of findJobSockets(base, port)) {
    const live = await new Promise<boolean>((resolve) => {
      const s = connect(path, () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (live) return path;
  }
  return undefined;
}
