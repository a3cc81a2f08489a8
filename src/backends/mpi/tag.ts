/**
 * What a cclab message's MPI tag carries, so a receive can tell that its send belongs to another
 * call or disagrees on dtype or count before it trusts the data:
 *   bits 0-3    the dtype's index (DTYPES)
 *   bits 4-14   the collective call, for transfers of a collective (0 for plain p2p): a presence
 *               bit, 3 bits of the collective/algorithm's digest, the op's index (4 bits) and
 *               the root's low 3 bits
 *   bits 15-30  the element count mod 2^16, where the MPI's tag bound allows (MPI_TAG_UB >=
 *               2^31 - 1, as Open MPI's and MPICH's): a receive posted with its size up front
 *               (the plan runner) learns the sender's count even when MPI truncates the message.
 * Bits 0-14 fit the 32767 the MPI standard guarantees.
 */
import type { CallTag } from "../../comm.js";
import { DTYPES, type DType, dtypeInfo } from "../../core/dtype.js";
import { MismatchError } from "../../core/errors.js";
import { OP_NAMES } from "../../core/op.js";

/** MPI_ANY_TAG (-1 in Open MPI and MPICH): receives take any tag and check it themselves. */
export const ANY_TAG = -1;
export const DTYPE_BITS = 0xf;
const CALL_MASK = 0x7ff0;
const COUNT_SHIFT = 15;
const COUNT_MOD = 1 << 16;

export const dtypeTag = (d: DType): number => DTYPES.indexOf(d);

export function callBits(call: CallTag | undefined): number {
  if (!call) return 0;
  // Every message of a call asks for the same tag (one CallTag object per plan): remember the last.
  if (call === last.call) return last.bits;
  const op = (OP_NAMES as readonly string[]).indexOf(call.op) + 1;
  const bits = (1 << 4) | ((fnv(call.collective) & 7) << 5) | ((op & 15) << 8) | ((call.root & 7) << 12);
  last.call = call;
  last.bits = bits;
  return bits;
}
const last: { call?: CallTag; bits: number } = { bits: 0 };

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Whether this MPI's tag bound leaves room for the count bits. */
export const countBitsFit = (tagUpperBound: number): boolean => tagUpperBound >= 0x7fffffff;

/** The tag of a message of `count` elements of `dtype`, sent by `call` (undefined: plain p2p). */
export function encodeTag(dtype: DType, call: CallTag | undefined, count: number, withCount: boolean): number {
  return countTag(dtypeTag(dtype) | callBits(call), count, withCount);
}

/** A tag from its count-free bits (encodeTag(dtype, call, 0, false), worked out once per call) and a count. */
export const countTag = (low: number, count: number, withCount: boolean): number =>
  withCount ? low | ((count % COUNT_MOD) << COUNT_SHIFT) : low;

export interface Received {
  /** The receiving rank and how errors name the receive ('rank 1: recv from peer 0 (label)'). */
  readonly rank: number;
  readonly where: string;
  readonly peer: number;
  readonly dtype: DType;
  readonly count: number;
  readonly call: CallTag | undefined;
}

/**
 * Why a received message does not belong to this receive, or undefined if it does: the sender's
 * call (op, root, collective), dtype or count differ. `bytes` is what arrived; `truncated` when
 * MPI cut a longer message to the receive's size (the count then comes from the tag, if it
 * carries one, `withCount`).
 */
export function tagMismatch(
  r: Received,
  tag: number,
  bytes: number,
  truncated: boolean,
  withCount: boolean,
): MismatchError | undefined {
  const sentCall = tag & CALL_MASK;
  const calls = sentCall && r.call && sentCall !== callBits(r.call) ? callBitsDiff(sentCall, r.call) : [];
  if (calls.length > 0) {
    return new MismatchError(
      `${r.where}: rank ${r.peer} sent from a different collective call: ${calls.join(", ")}; ` +
        "every rank must make the same call with the same arguments",
    );
  }
  const sentDType = tag >= 0 ? DTYPES[tag & DTYPE_BITS] : undefined;
  const expected = r.count * dtypeInfo(r.dtype).bytes;
  if (sentDType === r.dtype && bytes === expected && !truncated) return undefined;
  const size = sentDType ? dtypeInfo(sentDType).bytes : 0;
  let sent: string;
  let sentCount: number | undefined;
  if (!sentDType) sent = `a message with tag ${tag} (${bytes} bytes)`;
  else if (!truncated) {
    sentCount = bytes / size;
    sent = `${sentCount} x ${sentDType} (${bytes} bytes)`;
  } else if (withCount) {
    // The tag holds the count mod 2^16: the smallest count above what fit that agrees with it.
    const low = (tag >>> COUNT_SHIFT) % COUNT_MOD;
    const floor = Math.floor(expected / size) + 1;
    sentCount = floor + ((((low - floor) % COUNT_MOD) + COUNT_MOD) % COUNT_MOD);
    sent = `${sentCount}${sentCount >= COUNT_MOD ? ` (mod ${COUNT_MOD})` : ""} x ${sentDType} (more than the ${expected} bytes received)`;
  } else sent = `more than ${expected} bytes of ${sentDType}`;
  const what =
    sentDType === r.dtype ? "count" : sentCount !== undefined && sentCount === r.count ? "dtype" : "count and dtype";
  return new MismatchError(
    `${r.where}: ${what} mismatch: rank ${r.peer} sent ${sent}, rank ${r.rank} expected ${r.count} x ${r.dtype} (${expected} bytes); a send and its receive must agree on count and dtype`,
  );
}

/** What differs between the sender's call bits and this receive's call, as the receiver can tell. */
function callBitsDiff(sent: number, mine: CallTag): string[] {
  const want = callBits(mine);
  const out: string[] = [];
  if (((sent >> 5) & 7) !== ((want >> 5) & 7))
    out.push(`collective (this rank: ${mine.collective}; the sender's differs)`);
  if (((sent >> 8) & 15) !== ((want >> 8) & 15)) {
    const op = OP_NAMES[((sent >> 8) & 15) - 1] ?? "unknown";
    out.push(`op (sender: ${op}; this rank: ${mine.op})`);
  }
  if (((sent >> 12) & 7) !== ((want >> 12) & 7)) out.push(`root (this rank: ${mine.root}; the sender's differs)`);
  return out;
}

/**
 * A run's Received, rewritten in place for each receive that completes (no object per message);
 * `where` is asked of the run only when a message needs it.
 */
export class ReceivedAt implements Received {
  /** The receive's operation in its plan, its peer and count. */
  op = 0;
  peer = 0;
  count = 0;
  constructor(
    private readonly whereOf: (op: number) => string,
    readonly rank: number,
    readonly dtype: DType,
    readonly call: CallTag,
  ) {}
  get where(): string {
    return this.whereOf(this.op);
  }
}
