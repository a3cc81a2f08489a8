/**
 * What the command line writes: a file (--nccl-tuner, -o) and a folder (playground -o). Each is
 * checked before any work and any mkdir, and every failure names the flag and the path: a folder
 * is made one level at a time (never Node's recursive mkdir, which spins when mkdir answers ENOENT
 * under an existing parent, as /proc and FUSE file systems can), and an existing folder that
 * holds other things, or a symbolic link, is named and refused unless --force.
 */
import {
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, resolve } from "node:path";
import { InvalidArgumentError } from "../core/errors.js";

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

/** Before the work: `file` can be written (its folder exists and it is not a folder itself). */
export function checkOutputFile(cmd: string, flag: string, file: string): void {
  const bad = (detail: string) => new InvalidArgumentError({ op: cmd, arg: flag }, detail);
  if (file === "") throw bad("is an empty path: give a file name");
  const dir = dirname(resolve(file));
  const d = statOrNull(dir, true);
  if (!d) throw bad(`cannot write ${file}: its folder ${dir} does not exist (make it first)`);
  if (!d.isDirectory()) throw bad(`cannot write ${file}: ${dir} is not a folder`);
  if (statOrNull(file, true)?.isDirectory()) throw bad(`cannot write ${file}: it is a folder; give a file name`);
}

/** Writes `data` to `file`; a failure (a full disk, a missing folder) names the flag and the file. */
export function writeOutputFile(cmd: string, flag: string, file: string, data: string | Uint8Array): void {
  try {
    writeFileSync(file, data);
  } catch (e) {
    // What was written of a regular file is not the output: it goes (a device stays).
    let left = "";
    if (statOrNull(file, false)?.isFile()) {
      rmSync(file, { force: true });
      left = "; the incomplete file was removed";
    }
    throw new InvalidArgumentError({ op: cmd, arg: flag }, `cannot write ${file}: ${errno(e)}${left}`);
  }
}

const listed = (entries: readonly Dirent[]) =>
  entries
    .slice(0, 5)
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .join(", ") + (entries.length > 5 ? `, ... (${entries.length} in all)` : "");

export interface OutputDirOptions {
  /** Write into a non-empty folder, or through a symbolic link, all the same. */
  readonly force?: boolean;
  /** The entries (top-level names) a folder may already hold without --force: an earlier output's. */
  readonly own?: readonly string[];
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
    const target = readlinkSync(abs);
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
    const others = entries.filter((e) => !o.own?.includes(e.name));
    if (others.length > 0 && !o.force)
      throw bad(
        `${abs} is not empty: it holds ${listed(others)}; give an empty or new folder, or --force to write ${o.what} beside what is there`,
      );
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
