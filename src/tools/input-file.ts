/**
 * Reading a file a user names on the command line (a topology, a placement): bounded while it is
 * read, never by stat()'s size (0 for /dev/zero and /proc files), and only a regular file. Its
 * type is checked by stat() BEFORE it is opened (opening a device can act: /dev/watchdog), so a
 * FIFO, a device, a directory or a socket is refused by its type, naming the file; it is then
 * opened with O_NONBLOCK (a FIFO put there meanwhile cannot block open()) and fstat()ed: another
 * file than the one checked (swapped in between) is refused. The text must be UTF-8; a leading
 * byte-order mark is dropped.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from "node:fs";

export interface InputFileOptions {
  /** What the file is, for messages: 'topology file'. */
  readonly what: string;
  /** The most bytes the file may have. */
  readonly maxBytes: number;
  /** Makes the error to throw from a message (the caller's error class and flag). */
  readonly fail: (detail: string) => Error;
}

/** What `st` is when not a regular file, and what to do instead; undefined for a regular file. */
function kindOf(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return "a directory, not a regular file: give the JSON file inside it";
  if (st.isFIFO()) return "a FIFO (named pipe), not a regular file: save it to a file first";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device, not a regular file: copy it into one";
  if (st.isSocket()) return "a socket, not a regular file: copy what it serves into one";
  return "not a regular file: copy it into one";
}

const mib = (b: number) => (b >= 2 ** 20 ? `${b / 2 ** 20} MiB` : `${b} bytes`);

/** The text of the regular file `path`, read up to `maxBytes`; anything else is refused by `fail`. */
export function readInputFile(path: string, o: InputFileOptions): string {
  const refuse = (kind: string) => o.fail(`${path} is ${kind}`);
  const cannot = (e: unknown) => o.fail(`cannot read ${path}: ${(e as Error).message}`);
  let first: Stats;
  try {
    // Following links, as open() will.
    first = statSync(path);
  } catch (e) {
    throw cannot(e);
  }
  const kind = kindOf(first);
  if (kind !== undefined) throw refuse(kind);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch (e) {
    throw cannot(e);
  }
  try {
    const st = fstatSync(fd);
    if (st.dev !== first.dev || st.ino !== first.ino)
      throw o.fail(`${path} changed while it was opened (another file took its place); run again once it is written`);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, o.maxBytes + 1 - total));
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        throw cannot(e);
      }
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > o.maxBytes) {
        throw o.fail(`${path} is larger than the ${mib(o.maxBytes)} a ${o.what} may have`);
      }
    }
    try {
      // TextDecoder drops a leading byte-order mark.
      return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks, total));
    } catch {
      throw o.fail(`${path} is not UTF-8 text: save the ${o.what} as UTF-8`);
    }
  } finally {
    closeSync(fd);
  }
}
