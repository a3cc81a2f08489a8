/**
 * MpiComm: the point-to-point Comm over MPI, for processes started by mpirun. Two MPI
 * communicators per Comm (split -> MPI_Comm_split, then MPI_Comm_dup): one for the caller's
 * send/recv, one for the transfers of collectives (those that carry a call tag), so a user's
 * message never meets a collective's receive, as MPI libraries keep their collectives apart.
 * The tag says dtype, call and count (tag.ts); receives match with MPI_Improbe(peer,
 * MPI_ANY_TAG) in posting order: MPI's non-overtaking order gives cclab's, and the probe tells
 * the receiver the sender's byte count and dtype before anything lands, so mismatches become a
 * MismatchError naming both ranks and sizes (MPI alone would only report a larger send, as
 * truncation). Whole collective plans take the fast path instead (plan-runner.ts).
 */

import { checkHostView, checkP2POps, checkPeer, checkSplitRanks, splitMismatch } from "../../checks.js";
import type { CallTag, Comm, OpOptions, P2POp, Work } from "../../comm.js";
import { type Buf, type DataBuffer, HostBuffer, type View } from "../../core/buffer.js";
import { DTYPES, type DType, dtypeInfo, parseDType } from "../../core/dtype.js";
import { DeadlockError, EngineError, InvalidArgumentError, TimeoutError } from "../../core/errors.js";
import { maxOf } from "../../core/extent.js";
import { checkOpFitsDType, combineOf, parseOp, type ReduceOp } from "../../core/op.js";
import { engineCall } from "../../native/load.js";
import { reduceHost, scaleHost } from "../../native/reduce.js";
import type { NativeMpi } from "../../native/types.js";
import { NonMemberComm } from "../../nonmember.js";
import { type MpiBuiltin, mpiBuiltin } from "./builtin.js";
import { MpiPlanRunner } from "./plan-runner.js";
import type { Pollable, Progress } from "./progress.js";
import { ANY_TAG, DTYPE_BITS, encodeTag, tagMismatch } from "./tag.js";

export { NonMemberComm };

export interface MpiCommOptions {
  /** Default timeout of every wait, ms (default: $CCLAB_TIMEOUT seconds, else 300 s). */
  readonly timeoutMs?: number;
}

/** Shared by every communicator of this process. */
export interface MpiProcess {
  readonly mpi: NativeMpi;
  readonly progress: Progress;
  readonly worldRank: number;
  timeoutMs: number;
  /** Whether tags carry the count too (MPI_TAG_UB >= 2^31 - 1; tag.ts). */
  readonly countTags: boolean;
  /** Every communicator not yet destroyed (the world included), for the end-of-job check. */
  readonly comms: Set<MpiComm>;
  /**
   * Called with the error when a wait times out, before the wait rejects. The default prints it
   * and calls MPI_Abort so no rank hangs; the runtime may route aborts through its store instead.
   */
  onAbort: (error: Error) => void;
}

export function defaultTimeoutMs(): number {
  const s = Number(process.env.CCLAB_TIMEOUT);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 300_000;
}

class MpiWork implements Work {
  settled = false;
  readonly promise: Promise<void>;
  private resolveFn!: () => void;
  private rejectFn!: (e: unknown) => void;

  constructor(private readonly progress: Progress) {
    this.promise = new Promise<void>((res, rej) => {
      this.resolveFn = res;
      this.rejectFn = rej;
    });
    // Errors surface through wait(); a Work nobody waits on must not crash the process.
    this.promise.catch(() => {});
  }
  resolve(): void {
    this.settled = true;
    this.resolveFn();
  }
  reject(e: unknown): void {
    this.settled = true;
    this.rejectFn(e);
  }
  wait(): Promise<void> {
    return this.promise;
  }
  test(): boolean {
    if (!this.settled) this.progress.poll();
    return this.settled;
  }
}

interface Transfer {
  readonly kind: "send" | "recv";
  /** The MPI communicator it goes on: the comm's own, or its collectives' (a transfer with a call tag). */
  readonly handle: number;
  readonly peer: number;
  readonly view: View;
  readonly label: string | undefined;
  readonly call?: CallTag;
}

export class MpiComm implements Comm {
  readonly backend = "mpi";
  readonly rank: number;
  readonly size: number;
  /** MPI's own collectives on this communicator: the oracle cclab's algorithms are checked against. */
  readonly builtin: MpiBuiltin;
  /** The MPI communicator of this comm's collectives (MPI_Comm_dup of `handle`). */
  readonly collHandle: number;
  private destroyed = false;
  /** Receives posted but not yet matched, per (communicator, peer), in posting order. */
  private readonly unmatched = new Map<number, RecvOp[]>();
  private runner: MpiPlanRunner | undefined;

  constructor(
    readonly proc: MpiProcess,
    /** The native communicator handle. */
    readonly handle: number,
    readonly worldRanks: readonly number[],
  ) {
    this.rank = proc.mpi.rank(handle);
    this.size = proc.mpi.size(handle);
    this.builtin = mpiBuiltin(proc.mpi, handle, this.rank, (dst, src) => this.copy(dst, src));
    // Collective over the communicator's members, who all construct it (init, split).
    this.collHandle = engineCall(`rank ${this.rank}: MPI_Comm_dup`, () => proc.mpi.commDup(handle));
    proc.comms.add(this);
  }

  /**
   * The fast path for whole collective plans (the front API and the executor find it here): receives posted with
   * their sizes, batched native progress, local operations inline. CCLAB_MPI_PLAN=ops turns it
   * off, so every transfer goes through isend/irecv as other backends' do; an addon built before
   * runBind (a stale build/) has none either.
   */
  get planRunner(): MpiPlanRunner | undefined {
    if (!this.fastPath || this.destroyed || typeof this.proc.mpi.runBind !== "function") return undefined;
    this.runner ??= new MpiPlanRunner(this);
    return this.runner;
  }
  /** Whether collectives take the fast path (planRunner); CCLAB_MPI_PLAN=ops at creation says no. */
  fastPath = process.env.CCLAB_MPI_PLAN !== "ops";

  /**
   * Messages that arrived for this rank and were never received, one line each (and discarded).
   * Asked once every rank is done: a send with no receive completes under MPI's eager protocol,
   * so without this its data would be lost without anyone noticing.
   */
  unreceived(): string[] {
    const out: string[] = [];
    if (this.destroyed) return out;
    for (let peer = 0; peer < this.size; peer++) {
      for (let m = this.probeEither(peer); m; m = this.probeEither(peer)) {
        this.proc.mpi.mrecvDiscard(m.message, m.bytes);
        const dtype = DTYPES[m.tag & DTYPE_BITS];
        const what = dtype ? `${m.bytes / dtypeInfo(dtype).bytes} x ${dtype}` : `${m.bytes} bytes`;
        const where = this.handle === 0 ? "" : ` (communicator of world ranks ${this.worldRanks.join(", ")})`;
        out.push(`rank ${this.rank} never received a message from rank ${peer}${where}: ${what}`);
      }
    }
    return out;
  }

  private probeEither(peer: number) {
    return this.proc.mpi.improbe(peer, ANY_TAG, this.handle) ?? this.proc.mpi.improbe(peer, ANY_TAG, this.collHandle);
  }

  /** @internal Whether tags carry counts (tag.ts). */
  get countTags(): boolean {
    return this.proc.countTags;
  }

  private checkLive(op: string): void {
    if (this.destroyed) throw new InvalidArgumentError({ rank: this.rank, op }, "this communicator was destroyed");
  }

  private post(t: Transfer, timeoutMs = this.proc.timeoutMs): MpiWork {
    const work = new MpiWork(this.proc.progress);
    const op = t.kind === "send" ? new SendOp(this, t, work, timeoutMs) : new RecvOp(this, t, work, timeoutMs);
    if (op instanceof RecvOp) {
      const k = this.queueKey(t);
      const q = this.unmatched.get(k) ?? [];
      q.push(op);
      this.unmatched.set(k, q);
    }
    op.start();
    this.proc.progress.add(op);
    return work;
  }

  private queueKey(t: Transfer): number {
    return (t.handle === this.handle ? 0 : this.size) + t.peer;
  }

  /** @internal RecvOp asks whether it is the oldest unmatched receive from its peer. */
  isHead(op: RecvOp): boolean {
    return this.unmatched.get(this.queueKey(op.t))?.[0] === op;
  }
  /** @internal A timed-out receive leaves the queue wherever it is, so later receives can match. */
  forget(op: object): void {
    for (const q of this.unmatched.values()) {
      const i = q.indexOf(op as RecvOp);
      if (i >= 0) q.splice(i, 1);
    }
  }
  /** @internal */
  dropHead(op: RecvOp): void {
    const q = this.unmatched.get(this.queueKey(op.t));
    if (q && q[0] === op) q.shift();
  }

  private transfer(kind: "send" | "recv", view: Buf, peer: number, options?: OpOptions, blocking = false): MpiWork {
    const op = kind;
    this.checkLive(op);
    const t: Transfer = {
      kind,
      handle: options?.call ? this.collHandle : this.handle,
      peer: checkPeer(this.rank, this.size, peer, op),
      view: checkHostView(this.rank, view, op, "view", "mpi", { shared: false }),
      label: options?.label,
      call: options?.call,
    };
    if (blocking && kind === "send") this.checkSelfSend(t);
    return this.post(t);
  }

  /**
   * A blocking send to this rank itself can only complete if a receive from itself is already
   * posted; MPI's eager protocol would return and leave the message unreceived, so say deadlock
   * here, as the sim does (a group, or isend then recv, is how a rank sends to itself).
   */
  private checkSelfSend(t: Transfer): void {
    const { view, peer } = t;
    if (peer !== this.rank || (this.unmatched.get(peer)?.length ?? 0) > 0) return;
    const label = t.label ? ` at '${t.label}'` : "";
    const blocked = {
      rank: this.rank,
      kind: "send" as const,
      peer,
      count: view.count,
      dtype: view.buffer.dtype,
      ...(t.label !== undefined ? { label: t.label } : {}),
    };
    throw new DeadlockError(
      `deadlock: rank ${this.rank} waits in send(to ${peer}${label}) to itself, and no receive from itself is posted, ` +
        "so nothing can ever complete it (post irecv first, or send and receive in one group)",
      [blocked],
      [this.rank],
    );
  }

  send(view: Buf, peer: number, options?: OpOptions): Promise<void> {
    try {
      return this.transfer("send", view, peer, options, true).wait();
    } catch (e) {
      return Promise.reject(e);
    }
  }
  recv(view: Buf, peer: number, options?: OpOptions): Promise<void> {
    try {
      return this.transfer("recv", view, peer, options).wait();
    } catch (e) {
      return Promise.reject(e);
    }
  }
  isend(view: Buf, peer: number, options?: OpOptions): Work {
    return this.transfer("send", view, peer, options);
  }
  irecv(view: Buf, peer: number, options?: OpOptions): Work {
    return this.transfer("recv", view, peer, options);
  }

  async group(ops: readonly P2POp[], options?: OpOptions): Promise<void> {
    this.checkLive("group");
    checkP2POps(this.rank, ops);
    // Validate everything before posting anything: a group is posted whole or not at all.
    const transfers = ops.map(
      (o: P2POp, i): Transfer => ({
        kind: o.kind,
        handle: options?.call ? this.collHandle : this.handle,
        peer: checkPeer(this.rank, this.size, o.peer, "group"),
        view: checkHostView(this.rank, o.view, "group", `ops[${i}].view`, "mpi", { shared: false }),
        label: o.label ?? options?.label,
        call: options?.call,
      }),
    );
    await Promise.all(transfers.map((t) => this.post(t).wait()));
  }

  async split(ranks: readonly number[]): Promise<Comm> {
    this.checkLive("split");
    checkSplitRanks(this.rank, this.size, ranks);
    this.checkSameSplit(ranks);
    const key = ranks.indexOf(this.rank);
    const worldRanks = ranks.map((r) => this.worldRanks[r]!);
    // Collective over this communicator: every rank calls it, non-members with MPI_UNDEFINED.
    const handle = engineCall(`rank ${this.rank}: split`, () =>
      this.proc.mpi.commSplit(this.handle, key < 0 ? -1 : 0, key),
    );
    if (handle < 0) return new NonMemberComm("mpi", this.proc.worldRank, worldRanks);
    return new MpiComm(this.proc, handle, worldRanks);
  }

  /**
   * Every rank must pass the same list: MPI_Comm_split alone would put ranks that passed [0, 1]
   * and ranks that passed [2, 3] in one communicator. A digest of each rank's list is gathered
   * (MPI_Allgather; split is collective and blocking anyway); only if they differ are the lists
   * themselves gathered, so every rank can name who passed what.
   */
  private checkSameSplit(ranks: readonly number[]): void {
    const mpi = this.proc.mpi;
    const all = new Int32Array(3 * this.size);
    const gather = (send: Int32Array, recv: Int32Array, count: number) =>
      engineCall(`rank ${this.rank}: split`, () =>
        mpi.collective("MPI_Allgather", send, 0, recv, 0, count, "int32", "sum", 0, this.handle),
      );
    gather(Int32Array.from([ranks.length, ...listDigest(ranks)]), all, 3);
    const differs = (r: number) => [0, 1, 2].some((i) => all[3 * r + i] !== all[3 * this.rank + i]);
    const other = Array.from({ length: this.size }, (_, r) => r).find(differs);
    if (other === undefined) return;
    const longest = maxOf(Array.from({ length: this.size }, (_, r) => all[3 * r]!));
    const lists = new Int32Array(longest * this.size);
    const mine = new Int32Array(longest);
    mine.set(ranks);
    gather(mine, lists, longest);
    const theirs = [...lists.subarray(other * longest, other * longest + all[3 * other]!)];
    throw splitMismatch(this.rank, ranks, other, theirs);
  }

  alloc(dtype: DType, count: number): DataBuffer {
    const d = parseDType(dtype, { rank: this.rank, op: "alloc" });
    if (!Number.isInteger(count) || count < 0) {
      throw new InvalidArgumentError(
        { rank: this.rank, op: "alloc", arg: "count" },
        `count ${count} must be a non-negative integer`,
      );
    }
    return new HostBuffer(d, count);
  }

  private sameShape(op: string, dst: View, src: View): [HostBuffer, HostBuffer] {
    checkHostView(this.rank, dst, op, "dst", "mpi");
    checkHostView(this.rank, src, op, "src", "mpi");
    if (dst.buffer.dtype !== src.buffer.dtype || dst.count !== src.count) {
      throw new InvalidArgumentError(
        { rank: this.rank, op, arg: "src" },
        `dst is ${dst.count} x ${dst.buffer.dtype} but src is ${src.count} x ${src.buffer.dtype}`,
      );
    }
    return [dst.buffer as HostBuffer, src.buffer as HostBuffer];
  }

  copy(dst: View, src: View): void {
    const [d, s] = this.sameShape("copy", dst, src);
    d.data.set(s.data.subarray(src.offset, src.offset + src.count) as never, dst.offset);
  }

  reduceInto(dst: View, src: View, op: ReduceOp, a?: View): void {
    const [d, s] = this.sameShape("reduceInto", dst, src);
    const o = parseOp(op, { rank: this.rank, op: "reduceInto" });
    checkOpFitsDType(o, d.dtype, { rank: this.rank, op: "reduceInto" });
    // dst = a (op) src in one pass over memory (NCCL's reduceCopy), a being dst unless given.
    const x = a ? this.sameShape("reduceInto", dst, a)[1] : undefined;
    reduceHost(d.dtype, combineOf(o), d.data, dst.offset, s.data, src.offset, dst.count, x?.data, a?.offset);
  }

  scale(dst: View, src: View, mul: number, div: number): void {
    const [d, s] = this.sameShape("scale", dst, src);
    if (!Number.isFinite(mul) || !Number.isFinite(div) || div === 0) {
      throw new InvalidArgumentError(
        { rank: this.rank, op: "scale", arg: "mul/div" },
        `need finite mul and non-zero div, got ${mul} / ${div}`,
      );
    }
    scaleHost(d.dtype, d.data, dst.offset, s.data, src.offset, dst.count, mul, div);
  }

  async synchronize(): Promise<void> {}

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.proc.comms.delete(this);
    engineCall(`rank ${this.rank}: destroy`, () => this.proc.mpi.commFree(this.collHandle));
    // World is finalised at process exit, not freed.
    if (this.handle !== 0) engineCall(`rank ${this.rank}: destroy`, () => this.proc.mpi.commFree(this.handle));
  }

  /** @internal A transfer's description for errors: 'rank 1: recv from peer 0 (label)'. */
  describe(t: Transfer): string {
    const dir = t.kind === "send" ? "to" : "from";
    return `rank ${this.rank}: ${t.kind} ${dir} peer ${t.peer}${t.label ? ` (${t.label})` : ""}`;
  }
}

/** Two 32-bit FNV-1a digests of a rank list (different seeds), as int32. */
function listDigest(xs: readonly number[]): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ xs.length;
  for (const x of xs) {
    a = Math.imul(a ^ x, 0x01000193);
    b = Math.imul(b ^ (x + 0x9e3779b9), 0x01000193) ^ (b >>> 13);
  }
  return [a | 0, b | 0];
}
const bytesOf = (v: View) => v.count * dtypeInfo(v.buffer.dtype).bytes;
const byteOffset = (v: View) => v.offset * dtypeInfo(v.buffer.dtype).bytes;

abstract class TransferOp implements Pollable {
  settled = false;
  readonly deadline: number;
  protected request: number | undefined;
  constructor(
    readonly comm: MpiComm,
    readonly t: Transfer,
    readonly work: MpiWork,
    readonly timeoutMs: number,
  ) {
    this.deadline = Date.now() + timeoutMs;
  }
  abstract start(): void;
  abstract advance(): number | undefined;
  protected get mpi(): NativeMpi {
    return this.comm.proc.mpi;
  }
  fail(e: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.work.reject(e);
  }
  complete(bytes: number | Error): void {
    if (this.settled) return;
    if (bytes instanceof Error) {
      const code = (bytes as Error & { code?: number }).code ?? -1;
      this.fail(new EngineError("mpi", code, bytes.message, `${this.comm.describe(this.t)}: MPI_Testsome`));
      return;
    }
    this.settled = true;
    this.work.resolve();
  }
  timeout(): void {
    this.comm.forget(this);
    const e = new TimeoutError(
      `${this.comm.describe(this.t)}: ${this.t.kind} of ${this.t.view.count} x ${this.t.view.buffer.dtype} did not complete within ${this.timeoutMs} ms`,
    );
    this.fail(e);
    this.comm.proc.onAbort(e);
  }
}

class SendOp extends TransferOp {
  start(): void {
    const { view, peer } = this.t;
    const data = (view.buffer as HostBuffer).data;
    const tag = encodeTag(view.buffer.dtype, this.t.call, view.count, this.comm.countTags);
    this.request = engineCall(this.comm.describe(this.t), () =>
      this.mpi.isend(data, byteOffset(view), bytesOf(view), peer, tag, this.t.handle),
    );
  }
  advance(): number | undefined {
    return this.request;
  }
}

class RecvOp extends TransferOp {
  start(): void {}
  advance(): number | undefined {
    if (this.request !== undefined || this.settled) return this.request;
    if (!this.comm.isHead(this)) return undefined;
    const { view, peer } = this.t;
    try {
      const m = engineCall(this.comm.describe(this.t), () => this.mpi.improbe(peer, ANY_TAG, this.t.handle));
      if (m === null) return undefined;
      this.comm.dropHead(this);
      const expected = bytesOf(view);
      const r = {
        rank: this.comm.rank,
        where: this.comm.describe(this.t),
        peer,
        dtype: view.buffer.dtype,
        count: view.count,
        call: this.t.call,
      };
      const mismatch = tagMismatch(r, m.tag, m.bytes, false, this.comm.countTags);
      if (mismatch) {
        this.mpi.mrecvDiscard(m.message, m.bytes);
        throw mismatch;
      }
      const data = (view.buffer as HostBuffer).data;
      this.request = engineCall(this.comm.describe(this.t), () =>
        this.mpi.imrecv(data, byteOffset(view), expected, m.message),
      );
      return this.request;
    } catch (e) {
      this.comm.dropHead(this);
      this.fail(e);
      return undefined;
    }
  }
}
