/**
 * The one point-to-point interface every backend implements (sim, mpi, nccl). Collectives are
 * built only from these calls; nothing above this file knows which engine moves the bytes.
 *
 * Semantics every backend keeps:
 * - Between one pair of ranks, messages match in posting order (non-overtaking, as NCCL and MPI).
 * - A matched send/recv whose element counts or dtypes differ is a MismatchError naming both ranks;
 *   so is one whose collective calls (OpOptions.call: collective, op, root) differ.
 * - `group` posts its operations together and completes them together (ncclGroupStart/End,
 *   torch's batch_isend_irecv); isend/irecv posted before a wait progress together too.
 * - Ranks and peers are ranks of this communicator (0..size-1), not world ranks.
 */
import type { DataBuffer, View } from "./core/buffer.js";
import type { DType } from "./core/dtype.js";
import type { ReduceOp } from "./core/op.js";

export interface OpOptions {
  /** Shown in traces, deadlock explanations and timeout errors, e.g. 'allreduce/ring step 3'. */
  readonly label?: string;
  /**
   * Messages between two ranks match in posting order per channel (default 0), on backends whose
   * `channels` is true; elsewhere every channel is one.
   */
  readonly channel?: number;
  /**
   * The collective call a transfer belongs to (the executor sets it). When a send and a receive
   * that both carry one match, backends compare them: ranks that called different collectives,
   * or the same one with a different op or root, fail with a MismatchError naming both ranks and
   * the argument, instead of exchanging data that is then silently wrong.
   */
  readonly call?: CallTag;
}

export interface CallTag {
  /** 'allreduce/ring'. */
  readonly collective: string;
  /** The reduction op's name ('sum', 'max', ...). */
  readonly op: string;
  readonly root: number;
}

/** The fields in which two calls differ, e.g. ['op (sum vs max)']; empty if they agree. */
export function callDiff(a: CallTag, b: CallTag): string[] {
  const out: string[] = [];
  if (a.collective !== b.collective) out.push(`collective (${a.collective} vs ${b.collective})`);
  if (a.op !== b.op) out.push(`op (${a.op} vs ${b.op})`);
  if (a.root !== b.root) out.push(`root (${a.root} vs ${b.root})`);
  return out;
}

export interface P2POp {
  readonly kind: "send" | "recv";
  readonly peer: number;
  readonly view: View;
  readonly label?: string;
}

/**
 * A collective about to run on a communicator, as checked mode compares it across ranks
 * (torch's TORCH_DISTRIBUTED_DEBUG fingerprint): the front API announces every call before any
 * data moves.
 */
export interface CollectiveEvent {
  /** This communicator's collective sequence number (0, 1, ...). */
  readonly seq: number;
  readonly collective: string;
  readonly algorithm: string;
  readonly count: number;
  readonly dtype: string;
  /** Reduction op, or '' for collectives without one. */
  readonly op: string;
  /** -1 for rootless collectives. */
  readonly root: number;
}

/** A posted non-blocking operation (torch's Work, MPI_Request). */
export interface Work {
  /** Settles when the operation is complete (rejects with its error). */
  wait(): Promise<void>;
  /** True once complete; never blocks. */
  test(): boolean;
}

export interface Comm {
  /** 'sim', 'mpi' or 'nccl'. */
  readonly backend: string;
  /** This process's rank in the communicator; -1 on a non-member of a subgroup (torch.distributed's convention). */
  readonly rank: number;
  readonly size: number;
  /** World ranks of the members, in communicator-rank order. */
  readonly worldRanks: readonly number[];
  /** Whether messages on different channels (OpOptions.channel) match independently. */
  readonly channels?: boolean;
  /**
   * True where operations run in the order they are issued, on a stream (nccl): a collective's
   * plan is then issued step by step in program order (each step's transfers as one group), never
   * reordered, since a transfer enqueued early would block the stream until its peer reaches it.
   */
  readonly streamOrdered?: boolean;

  send(view: View, peer: number, options?: OpOptions): Promise<void>;
  recv(view: View, peer: number, options?: OpOptions): Promise<void>;
  isend(view: View, peer: number, options?: OpOptions): Work;
  irecv(view: View, peer: number, options?: OpOptions): Work;
  /** Posts every operation together; settles when all are complete. */
  group(ops: readonly P2POp[], options?: OpOptions): Promise<void>;

  /**
   * torch.distributed.new_group: every rank of this communicator calls it with the same member
   * list (ranks of this communicator); members get the subgroup, with ranks translated to their
   * index in `ranks`, non-members a communicator whose rank is -1 and whose every call throws.
   */
  split(ranks: readonly number[]): Promise<Comm>;

  /** Memory where this backend's transfers and local operations can work (host, or the device). */
  alloc(dtype: DType, count: number): DataBuffer;
  /** Local dst <- src (same dtype and count). */
  copy(dst: View, src: View): void;
  /**
   * Local dst <- dst (op) src, element-wise; with `a`, dst <- a (op) src (NCCL's reduceCopy: the
   * first operand need not be copied into dst first). avg and premulsum combine as sum.
   */
  reduceInto(dst: View, src: View, op: ReduceOp, a?: View): void;
  /**
   * Local dst <- (src * mul) / div, mul taken in the element type (premulsum's and float avg's
   * pre-scaling, integer avg's final division: scaleArrays, docs/semantics.md).
   */
  scale(dst: View, src: View, mul: number, div: number): void;
  /**
   * Called by the front API before each collective, before any data moves: wrapper layers of the
   * runtime hook checked mode and fault injection in here. Backends leave it out.
   */
  beforeCollective?(e: CollectiveEvent): Promise<void>;

  /** Settles once every local operation and transfer issued so far is complete (a no-op on host backends). */
  synchronize(): Promise<void>;

  destroy(): void;
}
