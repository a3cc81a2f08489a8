/**
 * Reading a file a user names on the command line (a topology, a placement): bounded while it is
 * read, never by stat()'s size (0 for /dev/zero and /proc files), and only a regular file. The
 * file is opened with O_NONBLOCK, so a FIFO cannot block open(), then fstat()ed: a FIFO, a device,
 * a directory or a socket is refused by its type, naming the file. The text must be UTF-8; a
 * leading byte-order mark is dropped.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

export interface InputFileOptions {
  /** What the file is, for messages: 'topology file'. */
  readonly what: string;
  /** The most bytes the file may have. */
  readonly maxBytes: number;
  /** Makes the error to throw from a message (the caller's error class and flag). */
  readonly fail: (detail: string) => Error;
}

function kindOf(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

const mib = (b: number) => `${b / 2 ** 20} MiB`;

/** The text of the regular file `path`, read up to `maxBytes`; anything else is refused by `fail`. */
export function readInputFile(path: string, o: InputFileOptions): string {
  const refuse = (kind: string) =>
    o.fail(`${path} is ${kind}, not a regular file: a ${o.what} is read from a plain file (copy it into one)`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch (e) {
    // A Unix-domain socket cannot be opened at all.
    if ((e as NodeJS.ErrnoException).code === "ENXIO") throw refuse("a socket");
    throw o.fail(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const kind = kindOf(fstatSync(fd));
    if (kind !== undefined) throw refuse(kind);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, o.maxBytes + 1 - total));
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        throw o.fail(`cannot read ${path}: ${(e as Error).message}`);
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
