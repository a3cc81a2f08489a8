/**
 * The argument checks every backend makes at its boundary (sim, mpi, nccl), so a bad peer, view
 * or split gets the same message, naming the rank, the operation and the argument, everywhere.
 */

import type { P2POp } from "./comm.js";
import { type HostBuffer, isHostBuffer, isView, type View } from "./core/buffer.js";
import { isDType } from "./core/dtype.js";
import { InvalidArgumentError } from "./core/errors.js";

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

/** `v` as a View of a known dtype whose elements lie inside its buffer (wherever that memory is). */
export function checkView(rank: number, v: unknown, op: string, arg = "view"): View {
  const site = { rank, op, arg };
  if (!isView(v)) throw new InvalidArgumentError(site, "expected a View (see view() in core/buffer)");
  if (!isDType(v.buffer.dtype)) throw new InvalidArgumentError(site, `unknown dtype ${String(v.buffer.dtype)}`);
  const { offset, count } = v;
  if (!Number.isInteger(offset) || !Number.isInteger(count) || offset < 0 || count < 0) {
    throw new InvalidArgumentError(site, `offset ${offset} and count ${count} must be non-negative integers`);
  }
  if (offset + count > v.buffer.count) {
    throw new InvalidArgumentError(
      site,
      `view [${offset}, ${offset + count}) is outside its buffer of ${v.buffer.count} elements`,
    );
  }
  // A transferred ArrayBuffer (postMessage, structuredClone, ArrayBuffer.prototype.transfer) leaves
  // the typed array empty while the buffer still claims its count: reading it gives undefined/NaN.
  if (isHostBuffer(v.buffer) && v.buffer.data.length !== v.buffer.count) {
    throw new InvalidArgumentError(
      site,
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
