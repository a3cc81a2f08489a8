/**
 * The simulator's vocabulary, shared by the World (world.ts), the Comm (comm.ts) and the deadlock
 * explainer: send semantics and options, communicators as the engine sees them, one posted
 * operation (SimOp), and the element copy every transfer uses. (Its FIFO queues are core/match.ts's.)
 */
import type { CallTag } from "../comm.js";
import type { HostBuffer, View } from "../core/buffer.js";
import type { TypedArray } from "../core/dtype.js";
import type { Trace } from "../trace.js";

/**
 * How sends complete:
 * - 'nccl': a send completes only once its receive is posted (rendezvous);
 * - 'mpi-eager': sends of at most eagerLimitBytes complete at post (MPI's eager protocol), larger ones rendezvous;
 * - 'buffered': every send completes at post, as gloo's sends often appear to.
 */
export type Semantics = "nccl" | "mpi-eager" | "buffered";
export const SEMANTICS: readonly Semantics[] = ["nccl", "mpi-eager", "buffered"];

export interface SimOptions {
  /** Default 'nccl'. */
  readonly semantics?: Semantics;
  /** For 'mpi-eager': the largest send (in bytes) that completes at post. Default 65536. */
  readonly eagerLimitBytes?: number;
  /** Seeds the scheduler: the same seed gives the same interleaving and the same trace. Default 1. */
  readonly seed?: number;
  /** Complete only a random non-empty subset of the ready events each round, to explore more interleavings. */
  readonly chaos?: boolean;
  /** Receives every transfer and local operation, with logical times (scheduler rounds). */
  readonly trace?: Trace;
}

/** A communicator as the engine sees it: a matching context and its members' world ranks. */
export interface CommInfo {
  readonly id: number;
  /** World ranks of the members, in communicator-rank order. */
  readonly members: readonly number[];
  /** 'world' or 'group [0, 2]' (world ranks), for messages. */
  readonly name: string;
}

export type OpState = "pending" | "done" | "failed";

/** One posted send or receive. Peers and ranks are world ranks; `commRank`/`commPeer` are the caller's. */
export class SimOp {
  state: OpState = "pending";
  error: unknown;
  /** The payload copied at post, for sends that complete before their receive exists. */
  snapshot: TypedArray | undefined;
  /** Called once when the op settles (blocking waits hook in here). */
  listeners: (() => void)[] | undefined;
  constructor(
    readonly kind: "send" | "recv",
    readonly comm: CommInfo,
    readonly rank: number,
    readonly peer: number,
    readonly commRank: number,
    readonly commPeer: number,
    readonly view: View & { readonly buffer: HostBuffer },
    readonly label: string | undefined,
    /** Logical time of the post. */
    readonly posted: number,
    /** The collective call it belongs to, if any (compared with its partner's when they match). */
    readonly call?: CallTag,
  ) {}
}

/** A ready event: a matched pair, or (recv undefined) a send that completes at post. */
export interface Ready {
  readonly send: SimOp;
  readonly recv: SimOp | undefined;
}

/**
 * dst[dOff..] <- src[sOff..] for `count` elements of one dtype, bit for bit (docs/semantics.md
 * M1). Small copies go element by element: subarray() would force V8 to move a small on-heap
 * array's storage off the heap, which costs more than the copy (it dominated a 1024-rank ring
 * before this). An element read from a Float32Array/Float64Array becomes a JS number, which
 * keeps every value except a NaN's bits (a float32 signaling NaN comes back quiet), so a NaN is
 * copied through an integer view of the same bytes instead; that view costs the off-heap move,
 * but only copies that carry a NaN pay it. Large copies use set(), which copies bytes when
 * source and target have the same type.
 */
export function copyElements(dst: TypedArray, dOff: number, src: TypedArray, sOff: number, count: number): void {
  const d = dst as Float64Array;
  const s = src as Float64Array;
  const backward = d === s && dOff > sOff;
  if (count > 256 && !backward) {
    d.set(s.subarray(sOff, sOff + count), dOff);
    return;
  }
  const step = backward ? -1 : 1;
  for (let k = 0, i = backward ? count - 1 : 0; k < count; k++, i += step) {
    const v = s[sOff + i] as number;
    // biome-ignore lint/suspicious/noSelfCompare: v !== v only for NaN
    if (v !== v) copyBits(d, dOff + i, s, sOff + i);
    else d[dOff + i] = v;
  }
}

/** One float element copied as raw bits (a NaN with its payload and quiet bit intact). */
function copyBits(dst: Float32Array | Float64Array, di: number, src: Float32Array | Float64Array, si: number): void {
  const words = dst.BYTES_PER_ELEMENT / 4;
  const d = new Uint32Array(dst.buffer, dst.byteOffset, dst.length * words);
  const s = new Uint32Array(src.buffer, src.byteOffset, src.length * words);
  for (let w = 0; w < words; w++) d[di * words + w] = s[si * words + w] as number;
}
