/**
 * What the command line writes: a file (--nccl-tuner, -o) and a folder (playground -o). Each is
 * checked before any work and any mkdir, and every failure names the flag and the path: a folder
 * is made one level at a time (never Node's recursive mkdir, which spins when mkdir answers ENOENT
 * under an existing parent, as /proc and FUSE file systems can), and an existing folder that
 * holds other things, or a symbolic link, is named and refused unless --force.
 */
import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { InvalidArgumentError } from "../core/errors.js";
import { escapeControl } from "../core/text.js";

const errno = (e: unknown) => {
  const x = e as NodeJS.ErrnoException;
  return x.code ? `${x.code}: ${x.message.replace(/^[A-Z]+: /, "").replace(/, \w+( '.*')?$/, "")}` : String(e);
};

function statOrNull(path: string, follow: boolean): Stats | null {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** What `st` is when it cannot take the output: a folder, a FIFO, a socket; undefined for a file or a device. */
function unwritable(st: Stats): string | undefined {
  if (st.isDirectory()) return "a folder; give a file name";
  if (st.isFIFO())
    return "a FIFO (named pipe), which would block until read; give a plain file (and copy it from there)";
  if (st.isSocket()) return "a socket; give a plain file";
  return undefined;
}

/** Before the work: `file` can be written (its folder exists and it is not a folder, a FIFO or a socket). */
export function checkOutputFile(cmd: string, flag: string, file: string): void {
  const bad = (detail: string) => new InvalidArgumentError({ op: cmd, arg: flag }, detail);
  if (file === "") throw bad("is an empty path: give a file name");
  const dir = dirname(resolve(file));
  const d = statOrNull(dir, true);
  if (!d) throw bad(`cannot write ${file}: its folder ${dir} does not exist (make it first)`);
  if (!d.isDirectory()) throw bad(`cannot write ${file}: ${dir} is not a folder`);
  const st = statOrNull(file, true);
  const why = st && unwritable(st);
  if (why) throw bad(`cannot write ${file}: it is ${why}`);
}

/**
 * Writes `data` to `file`; a failure (a full disk, a missing folder) names the flag and the file.
 * A file that cannot be opened is left as it was; one this call opened (created or truncated) and
 * could not finish is removed. O_NONBLOCK: a FIFO put there since the check cannot block the open.
 */
export function writeOutputFile(cmd: string, flag: string, file: string, data: string | Uint8Array): void {
  const bad = (detail: string) => new InvalidArgumentError({ op: cmd, arg: flag }, detail);
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK, 0o666);
  } catch (e) {
    // ENXIO: a FIFO no one reads.
    const st = (e as NodeJS.ErrnoException).code === "ENXIO" ? statOrNull(file, true) : null;
    const why = st && unwritable(st);
    throw bad(`cannot write ${file}: ${why ? `it is ${why}` : errno(e)}`);
  }
  try {
    const why = unwritable(fstatSync(fd));
    if (why) throw bad(`cannot write ${file}: it is ${why}`);
    writeFileSync(fd, data);
  } catch (e) {
    // What was written of a regular file is not the output: it goes (a device stays).
    let left = "";
    if (fstatSync(fd).isFile()) {
      rmSync(file, { force: true });
      left = "; the incomplete file was removed";
    }
    throw e instanceof InvalidArgumentError ? e : bad(`cannot write ${file}: ${errno(e)}${left}`);
  } finally {
    closeSync(fd);
  }
}

const listed = (entries: readonly Dirent[]) =>
  entries
    .slice(0, 5)
    .map((e) => escapeControl(e.isDirectory() ? `${e.name}/` : e.name))
    .join(", ") + (entries.length > 5 ? `, ... (${entries.length} in all)` : "");

export interface OutputDirOptions {
  /** Write into a non-empty folder, or through a symbolic link, all the same. */
  readonly force?: boolean;
  /**
   * The entries (top-level names) a folder may already hold without --force, each with its type:
   * an earlier output's. A link, or an entry of another type, in their place is refused all the same.
   */
  readonly own?: Readonly<Record<string, "file" | "folder">>;
  /** What goes there, for messages: 'the site'. */
  readonly what: string;
}

/**
 * Makes sure `dir` is a folder to write into, and returns its absolute path: a missing folder is
 * made (one level at a time, 0777 less the umask); a folder holding only `own` names (an earlier
 * output) is used as is; a non-empty one, a symbolic link, or anything else there is refused,
 * naming what is there (`force` writes into the folder, or where the link leads, all the same).
 */
export function prepareOutputDir(cmd: string, flag: string, dir: string, o: OutputDirOptions): string {
  const bad = (detail: string) => new InvalidArgumentError({ op: cmd, arg: flag }, detail);
  if (dir === "") throw bad("is an empty path: give a folder, e.g. site");
  const abs = resolve(dir);
  let st: Stats | null;
  try {
    st = statOrNull(abs, false);
  } catch (e) {
    throw bad(`cannot look at ${abs}: ${errno(e)}`);
  }
  if (st?.isSymbolicLink()) {
    const target = escapeControl(readlinkSync(abs));
    if (!o.force)
      throw bad(
        `${abs} is a symbolic link (to ${target}); give a folder, or --force to write ${o.what} where it leads`,
      );
    st = statOrNull(abs, true);
    if (!st) throw bad(`${abs} is a symbolic link to ${target}, which does not exist`);
  }
  if (st) {
    if (!st.isDirectory())
      throw bad(`${abs} is ${st.isFile() ? "a file" : "not a folder"}; give a folder for ${o.what}`);
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch (e) {
      throw bad(`cannot read the folder ${abs}: ${errno(e)}`);
    }
    const own = o.own ?? {};
    const others = entries.filter((e) => !Object.hasOwn(own, e.name));
    if (others.length > 0 && !o.force)
      throw bad(
        `${abs} is not empty: it holds ${listed(others)}; give an empty or new folder, or --force to write ${o.what} beside what is there`,
      );
    // An earlier output's names, each of its own type: never a link (writing would follow it), even with --force.
    for (const e of entries) {
      const want = own[e.name];
      if (want === undefined) continue;
      const at = join(abs, e.name);
      const shown = escapeControl(at);
      if (e.isSymbolicLink()) {
        let target = "";
        try {
          target = ` (to ${escapeControl(readlinkSync(at))})`;
        } catch {}
        throw bad(
          `${shown} is a symbolic link${target}; ${o.what} is not written through links: remove it, or give another folder`,
        );
      }
      if (want === "file" ? !e.isFile() : !e.isDirectory())
        throw bad(
          `${shown} is ${e.isDirectory() ? "a folder" : e.isFile() ? "a file" : "not a plain file"} where ${o.what} has ${want === "file" ? "a file" : "a folder"}: remove it, or give another folder`,
        );
    }
    return abs;
  }
  // Missing: the nearest existing ancestor must be a folder; then each level is made in turn.
  const missing: string[] = [];
  let at = abs;
  for (;;) {
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    let p: Stats | null;
    try {
      p = statOrNull(parent, true);
    } catch (e) {
      throw bad(`cannot make ${abs}: cannot look at ${parent}: ${errno(e)}`);
    }
    if (p) {
      if (!p.isDirectory()) throw bad(`cannot make ${abs}: ${parent} is not a folder`);
      break;
    }
    at = parent;
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (e) {
      // Made meanwhile by someone else: a folder all the same.
      if ((e as NodeJS.ErrnoException).code === "EEXIST" && statOrNull(level, true)?.isDirectory()) continue;
      const why =
        (e as NodeJS.ErrnoException).code === "ENOENT"
          ? ` (${dirname(level)} exists but cannot hold a folder: a pseudo or FUSE file system?)`
          : "";
      throw bad(`cannot make the folder ${level}: ${errno(e)}${why}; give another place for ${o.what}`);
    }
  }
  return abs;
}
