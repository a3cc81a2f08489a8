/**
 * The argument checks every backend makes at its boundary (sim, mpi, nccl), so a bad peer, view
 * or split gets the same message, naming the rank, the operation and the argument, everywhere.
 */

import type { P2POp } from "./comm.js";
import { type DataBuffer, HostBuffer, isHostBuffer, isView, type View } from "./core/buffer.js";
import { type DType, isDType, type TypedArray } from "./core/dtype.js";
import { type ErrorSite, InvalidArgumentError } from "./core/errors.js";

export type HostView = View & { readonly buffer: HostBuffer };

/** `peer` as a rank of a comm of `size`, or an error on `rank`'s `op`. */
export function checkPeer(rank: number, size: number, peer: unknown, op: string): number {
  if (typeof peer !== "number" || !Number.isInteger(peer) || peer < 0 || peer >= size) {
    throw new InvalidArgumentError(
      { rank, op, arg: "peer" },
      `peer ${String(peer)} is not a rank of this communicator (ranks 0..${size - 1})`,
    );
  }
  return peer;
}

const ARRAY_DTYPES: ReadonlyMap<unknown, DType> = new Map<unknown, DType>([
  [Float32Array, "float32"],
  [Float64Array, "float64"],
  [Int8Array, "int8"],
  [Uint8Array, "uint8"],
  [Int32Array, "int32"],
  [Uint32Array, "uint32"],
  [BigInt64Array, "int64"],
  [BigUint64Array, "uint64"],
]);

function isBuffer(x: unknown): x is DataBuffer {
  return typeof x === "object" && x !== null && "dtype" in x && "count" in x && "location" in x;
}

/**
 * What a transfer or a collective takes as data, as a view of all of it: a typed array of a cclab
 * dtype (wrapped, no copy), a cclab buffer, or a view as it is. Anything else is returned as
 * given, for checkView to name (layers that look at a view before the backend checks it use this).
 */
export function dataView(x: unknown): unknown {
  if (isView(x)) return x;
  if (ArrayBuffer.isView(x)) {
    const dtype = ARRAY_DTYPES.get(x.constructor);
    return dtype ? { buffer: new HostBuffer(dtype, x as TypedArray), offset: 0, count: (x as TypedArray).length } : x;
  }
  return isBuffer(x) ? { buffer: x, offset: 0, count: x.count } : x;
}

function describe(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x === "object") return x.constructor?.name ?? "object";
  return `${typeof x} ${JSON.stringify(x)}`;
}

/** An error's site, made only where there is an error (checkView runs on every argument of every call). */
function siteOf(rank: number, op: string, arg: string): ErrorSite {
  return { rank, op, arg };
}

/**
 * `data` (a typed array, a cclab buffer or a view: dataView) as a View of a known dtype whose
 * elements lie inside its buffer (wherever that memory is).
 */
export function checkView(rank: number, data: unknown, op: string, arg = "view"): View {
  const v = dataView(data);
  if (!isView(v)) {
    if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
      const why =
        data instanceof Uint16Array
          ? "a Uint16Array could hold float16 or bfloat16 bits: wrap it as new HostBuffer('float16', array) or tensor('bfloat16', values)"
          : `${data.constructor.name} has no cclab dtype`;
      throw new InvalidArgumentError(siteOf(rank, op, arg), why);
    }
    throw new InvalidArgumentError(
      siteOf(rank, op, arg),
      `expected a typed array (Float32Array, Int32Array, ...), a cclab buffer or a view, got ${describe(data)}`,
    );
  }
  if (!isDType(v.buffer.dtype))
    throw new InvalidArgumentError(siteOf(rank, op, arg), `unknown dtype ${String(v.buffer.dtype)}`);
  const { offset, count } = v;
  if (!Number.isInteger(offset) || !Number.isInteger(count) || offset < 0 || count < 0) {
    throw new InvalidArgumentError(
      siteOf(rank, op, arg),
      `offset ${offset} and count ${count} must be non-negative integers`,
    );
  }
  if (offset + count > v.buffer.count) {
    throw new InvalidArgumentError(
      siteOf(rank, op, arg),
      `view [${offset}, ${offset + count}) is outside its buffer of ${v.buffer.count} elements`,
    );
  }
  // A transferred ArrayBuffer (postMessage, structuredClone, ArrayBuffer.prototype.transfer) leaves
  // the typed array empty while the buffer still claims its count: reading it gives undefined/NaN.
  if (isHostBuffer(v.buffer) && v.buffer.data.length !== v.buffer.count) {
    throw new InvalidArgumentError(
      siteOf(rank, op, arg),
      `its memory was detached (the ArrayBuffer was transferred, e.g. to a worker or with ArrayBuffer.prototype.transfer): ` +
        `the ${v.buffer.dtype} buffer of ${v.buffer.count} elements now has ${v.buffer.data.length}`,
    );
  }
  return v;
}

/**
 * checkView, and the memory must be the host's (the sim and mpi backends). `shared: false` for
 * engines that cannot address a SharedArrayBuffer (Node-API gives native code no pointer to one).
 */
export function checkHostView(
  rank: number,
  v: unknown,
  op: string,
  arg: string,
  backend: string,
  options: { shared?: boolean } = {},
): HostView {
  const checked = checkView(rank, v, op, arg);
  if (!isHostBuffer(checked.buffer)) {
    throw new InvalidArgumentError(
      { rank, op, arg },
      `the ${backend} backend works on host memory; this buffer is on ${checked.buffer.location}`,
    );
  }
  if (options.shared === false && isShared(checked.buffer.data.buffer)) {
    throw new InvalidArgumentError(
      { rank, op, arg },
      `the ${backend} backend cannot hand memory of a SharedArrayBuffer to its engine (Node-API gives native code ` +
        `no pointer to one); copy it into an ordinary buffer first, e.g. tensor(dtype, sharedArray)`,
    );
  }
  return checked as HostView;
}

function isShared(b: ArrayBufferLike): boolean {
  return typeof SharedArrayBuffer !== "undefined" && b instanceof SharedArrayBuffer;
}

/** Validates split's `ranks` on `rank` of a comm of `size`: non-empty, in range, no repeats. */
export function checkSplitRanks(rank: number, size: number, ranks: readonly number[]): void {
  const site = { rank, op: "split", arg: "ranks" };
  if (!Array.isArray(ranks) || ranks.length === 0) {
    throw new InvalidArgumentError(site, "expected a non-empty array of ranks");
  }
  const seen = new Set<number>();
  for (const r of ranks) {
    if (typeof r !== "number" || !Number.isInteger(r) || r < 0 || r >= size) {
      throw new InvalidArgumentError(
        site,
        `${String(r)} in [${ranks.join(", ")}] is not a rank of this communicator (ranks 0..${size - 1})`,
      );
    }
    if (seen.has(r)) throw new InvalidArgumentError(site, `rank ${r} appears twice in [${ranks.join(", ")}]`);
    seen.add(r);
  }
}

/** Two ranks passed different lists to the same split call (sim and mpi say it the same way). */
export function splitMismatch(
  rank: number,
  ranks: readonly number[],
  otherRank: number,
  otherRanks: readonly number[],
): InvalidArgumentError {
  const list = (xs: readonly number[]) => `[${xs.join(", ")}]`;
  return new InvalidArgumentError(
    { rank, op: "split", arg: "ranks" },
    `rank ${rank} passed ${list(ranks)} but rank ${otherRank} passed ${list(otherRanks)} to the same split call; ` +
      `every rank must pass the same list, in the same order of calls (torch.distributed.new_group)`,
  );
}

/** group's `ops`: an array whose every entry is a send or a recv (peers and views are checked per op). */
export function checkP2POps(rank: number, ops: unknown): readonly P2POp[] {
  if (!Array.isArray(ops)) {
    throw new InvalidArgumentError({ rank, op: "group", arg: "ops" }, "expected an array of P2POp");
  }
  ops.forEach((o: unknown, i) => {
    const kind = (o as { kind?: unknown } | null)?.kind;
    if (o === null || typeof o !== "object" || (kind !== "send" && kind !== "recv")) {
      throw new InvalidArgumentError(
        { rank, op: "group", arg: `ops[${i}].kind` },
        `expected 'send' or 'recv', got ${JSON.stringify(kind)}`,
      );
    }
  });
  return ops as readonly P2POp[];
}
