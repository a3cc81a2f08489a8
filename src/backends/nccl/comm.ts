/**
 * NcclComm: the point-to-point Comm over NCCL. Views are device buffers (comm.alloc, or the
 * toDevice helper); send/recv/group become ncclSend/ncclRecv inside ncclGroupStart/End on the
 * process's one stream and return once enqueued; copy, reduceInto and scale enqueue kernels on
 * the same stream; synchronize() is where the host waits (see device.ts). split() makes a new
 * NCCL communicator for the members (unique id through the rendezvous store, as torch's
 * new_group does); non-members get a communicator whose every call fails.
 *
 * Unlike sim and mpi, NCCL cannot tell a send from a mismatched receive: a size or dtype
 * mismatch hangs (or corrupts) as it would in NCCL, and the wait times out naming the rank and
 * the last operations enqueued. Checked mode (CCLAB_CHECK) catches mismatches before they run.
 */

import { checkP2POps, checkPeer, checkSplitRanks, checkView } from "../../checks.js";
import type { Comm, OpOptions, P2POp, Work } from "../../comm.js";
import { type Buf, type DataBuffer, sameView, type View } from "../../core/buffer.js";
import { type DType, dtypeInfo, parseDType } from "../../core/dtype.js";
import { AbortError, EngineError, InvalidArgumentError } from "../../core/errors.js";
import { checkOpFitsDType, combineOf, parseOp, type ReduceOp } from "../../core/op.js";
import { type KVStore, ownKey } from "../../kvstore.js";
import { toEngineError } from "../../native/load.js";
import { NonMemberComm } from "../../nonmember.js";
import { type DeviceBuffer, isDeviceBuffer } from "./buffer.js";
import { type NcclBuiltin, ncclBuiltin } from "./builtin.js";
import type { NcclDevice } from "./device.js";
import { sharedGpuHint } from "./env.js";
import type { CommRef, P2PItem } from "./work.js";

/** Shared by every communicator of this process. */
export interface NcclProcess {
  readonly device: NcclDevice;
  readonly store: KVStore;
  /** World rank of this process, as messages name it. */
  readonly worldRank: number;
  /** Blocking communicators (old NCCL, or CCLAB_NCCL_BLOCKING=1): calls block inside NCCL. */
  readonly blocking: boolean;
}

const elementBytes = (v: View) => dtypeInfo(v.buffer.dtype).bytes;

export class NcclComm implements Comm, CommRef {
  readonly backend = "nccl";
  /** Everything is enqueued on one stream: plans are issued in program order (src/comm.ts). */
  readonly streamOrdered = true;
  /** NCCL's own collectives on this communicator: the oracle cclab's algorithms are checked against. */
  readonly builtin: NcclBuiltin;
  aborted?: Error;
  private destroyed = false;
  private splits = 0;

  constructor(
    readonly proc: NcclProcess,
    /** The native communicator handle. */
    readonly handle: number,
    readonly rank: number,
    readonly size: number,
    readonly worldRanks: readonly number[],
    /** Store namespace of this communicator (splits derive theirs from it). */
    readonly key: string,
  ) {
    this.builtin = ncclBuiltin(this);
    proc.device.comms.add(this);
  }

  get device(): NcclDevice {
    return this.proc.device;
  }

  /** @internal */
  checkLive(op: string): void {
    if (this.destroyed) throw new InvalidArgumentError({ rank: this.rank, op }, "this communicator was destroyed");
    if (this.aborted)
      throw new AbortError(`rank ${this.rank}: ${op}: the communicator was aborted: ${this.aborted.message}`);
  }

  /** @internal A view of this process's device memory (any buffer will do for 0 elements). */
  checkView(view: unknown, op: string, arg = "view"): View {
    const site = { rank: this.rank, op, arg };
    const v = checkView(this.rank, view, op, arg);
    if (v.count === 0) return v;
    if (!isDeviceBuffer(v.buffer)) {
      throw new InvalidArgumentError(
        site,
        `the nccl backend works on device memory (comm.alloc, or toDevice()); this buffer is on ${v.buffer.location}`,
      );
    }
    if (v.buffer.device !== this.device) {
      throw new InvalidArgumentError(site, `this buffer is on ${v.buffer.location} of another process or device`);
    }
    return v;
  }

  /** @internal 'rank 1: send to peer 2 (label)'. */
  describe(kind: string, peer: number, label: string | undefined): string {
    const dir = kind === "send" ? "to" : "from";
    return `rank ${this.rank}: ${kind} ${dir} peer ${peer}${label ? ` (${label})` : ""}`;
  }

  private item(kind: "send" | "recv", view: View, peer: number, label: string | undefined): P2PItem {
    return {
      kind,
      comm: this,
      buffer: view.buffer as DeviceBuffer,
      off: view.offset * elementBytes(view),
      count: view.count,
      peer,
      what: this.describe(kind, peer, label),
    };
  }

  private transferItem(kind: "send" | "recv", view: Buf, peer: number, options?: OpOptions): P2PItem {
    this.checkLive(kind);
    const p = checkPeer(this.rank, this.size, peer, kind);
    const v = this.checkView(view, kind);
    return this.item(kind, v, p, options?.label);
  }

  async send(view: Buf, peer: number, options?: OpOptions): Promise<void> {
    const it = this.transferItem("send", view, peer, options);
    if (it.count > 0) await this.device.flush([it], it.what);
  }

  async recv(view: Buf, peer: number, options?: OpOptions): Promise<void> {
    const it = this.transferItem("recv", view, peer, options);
    if (it.count > 0) await this.device.flush([it], it.what);
  }

  isend(view: Buf, peer: number, options?: OpOptions): Work {
    const it = this.transferItem("send", view, peer, options);
    return it.count > 0 ? this.device.post(it) : DONE;
  }

  irecv(view: Buf, peer: number, options?: OpOptions): Work {
    const it = this.transferItem("recv", view, peer, options);
    return it.count > 0 ? this.device.post(it) : DONE;
  }

  async group(ops: readonly P2POp[], options?: OpOptions): Promise<void> {
    this.checkLive("group");
    checkP2POps(this.rank, ops);
    // Validate everything before posting anything: a group is posted whole or not at all.
    const items = ops.map((o: P2POp, i): P2PItem => {
      const peer = checkPeer(this.rank, this.size, o.peer, "group");
      const v = this.checkView(o.view, "group", `ops[${i}].view`);
      return this.item(o.kind, v, peer, o.label ?? options?.label);
    });
    const live = items.filter((i) => i.count > 0);
    const label = options?.label ?? ops[0]?.label;
    await this.device.flush(live, `rank ${this.rank}: group${label ? ` (${label})` : ""}`);
  }

  async split(ranks: readonly number[]): Promise<Comm> {
    this.checkLive("split");
    checkSplitRanks(this.rank, this.size, ranks);
    const key = `${this.key}/split${this.splits++}`;
    const worldRanks = ranks.map((r) => this.worldRanks[r]!);
    const me = ranks.indexOf(this.rank);
    if (me < 0) return new NonMemberComm("nccl", this.proc.worldRank, worldRanks);
    return createComm(this.proc, { key, rank: me, size: ranks.length, worldRanks });
  }

  alloc(dtype: DType, count: number): DataBuffer {
    const d = parseDType(dtype, { rank: this.rank, op: "alloc" });
    if (!Number.isInteger(count) || count < 0) {
      throw new InvalidArgumentError(
        { rank: this.rank, op: "alloc", arg: "count" },
        `count ${count} must be a non-negative integer`,
      );
    }
    return this.device.alloc(d, count);
  }

  private sameShape(op: string, dst: View, src: View): void {
    this.checkLive(op);
    this.checkView(dst, op, "dst");
    this.checkView(src, op, "src");
    if (dst.buffer.dtype !== src.buffer.dtype || dst.count !== src.count) {
      throw new InvalidArgumentError(
        { rank: this.rank, op, arg: "src" },
        `dst is ${dst.count} x ${dst.buffer.dtype} but src is ${src.count} x ${src.buffer.dtype}`,
      );
    }
  }

  copy(dst: View, src: View): void {
    this.sameShape("copy", dst, src);
    if (dst.count === 0) return;
    const d = dst.buffer as DeviceBuffer;
    const s = src.buffer as DeviceBuffer;
    const b = elementBytes(dst);
    this.device.enqueueLocal(`rank ${this.rank}: copy`, () =>
      this.device.native.memcpyDtoD(d.ptr, dst.offset * b, s.ptr, src.offset * b, dst.count * b, this.device.stream),
    );
  }

  reduceInto(dst: View, src: View, op: ReduceOp, a?: View): void {
    this.sameShape("reduceInto", dst, src);
    const o = parseOp(op, { rank: this.rank, op: "reduceInto" });
    checkOpFitsDType(o, dst.buffer.dtype, { rank: this.rank, op: "reduceInto" });
    if (dst.count === 0) return;
    if (a && !sameView(a, dst)) {
      // dst = a (op) src: where src is dst, reduce a into it (the op commutes bit for bit), else start from a.
      if (sameView(src, dst)) {
        this.reduceInto(dst, a, op);
        return;
      }
      this.copy(dst, a);
    }
    const d = dst.buffer as DeviceBuffer;
    const s = src.buffer as DeviceBuffer;
    const b = elementBytes(dst);
    this.device.enqueueLocal(`rank ${this.rank}: reduceInto`, () =>
      this.device.native.localReduce(
        d.dtype,
        combineOf(o),
        d.ptr,
        dst.offset * b,
        s.ptr,
        src.offset * b,
        dst.count,
        this.device.stream,
      ),
    );
  }

  scale(dst: View, src: View, mul: number, div: number): void {
    this.sameShape("scale", dst, src);
    if (!Number.isFinite(mul) || !Number.isFinite(div) || div === 0) {
      throw new InvalidArgumentError(
        { rank: this.rank, op: "scale", arg: "mul/div" },
        `need finite mul and non-zero div, got ${mul} / ${div}`,
      );
    }
    if (dtypeInfo(dst.buffer.dtype).bigint && !(Number.isSafeInteger(Math.trunc(mul)) && Number.isSafeInteger(div))) {
      throw new InvalidArgumentError(
        { rank: this.rank, op: "scale", arg: "mul/div" },
        `on the device, 64-bit integers scale by safe integers only, got ${mul} / ${div}`,
      );
    }
    if (dst.count === 0) return;
    const d = dst.buffer as DeviceBuffer;
    const s = src.buffer as DeviceBuffer;
    const b = elementBytes(dst);
    this.device.enqueueLocal(`rank ${this.rank}: scale`, () =>
      this.device.native.localScale(
        d.dtype,
        d.ptr,
        dst.offset * b,
        s.ptr,
        src.offset * b,
        dst.count,
        mul,
        div,
        this.device.stream,
      ),
    );
  }

  async synchronize(): Promise<void> {
    this.checkLive("synchronize");
    await this.device.idle(`rank ${this.rank}: synchronize`);
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    const dev = this.device;
    dev.dropPending(this, new InvalidArgumentError({ rank: this.rank, op: "destroy" }, "destroyed before the wait"));
    // Finalize, then ncclCommDestroy (polled, never blocking; aborted on an error or past the
    // timeout): ncclCommAbort here would drop sends NCCL's proxy still holds for a peer.
    dev.retire(this);
  }
}

const DONE: Work = { wait: () => Promise.resolve(), test: () => true };

export interface CreateCommOptions {
  readonly key: string;
  readonly rank: number;
  readonly size: number;
  readonly worldRanks: readonly number[];
}

/**
 * A new NCCL communicator: the lowest member makes the unique id and publishes it under
 * `${key}/id` in its own namespace of the store (a rank writes only its own keys), every member fetches it and calls ncclCommInitRank (non-blocking
 * where NCCL has it, then polled until ready, so a missing rank times out instead of hanging).
 */
export async function createComm(proc: NcclProcess, o: CreateCommOptions): Promise<NcclComm> {
  const dev = proc.device;
  const native = dev.native;
  const idKey = ownKey(o.worldRanks[0]!, `${o.key}/id`);
  const where = `rank ${o.rank}: ncclCommInitRank (${o.size} ranks, ${o.key})`;
  let id: Uint8Array;
  try {
    if (o.rank === 0) {
      id = native.getUniqueId();
      await proc.store.set(idKey, id);
    } else {
      id = new Uint8Array(await proc.store.get(idKey, dev.timeoutMs));
    }
  } catch (e) {
    throw toEngineError(e, where);
  }
  native.setDevice(dev.index);
  let handle: number;
  try {
    handle = native.commInitRank(o.size, id, o.rank, proc.blocking);
  } catch (e) {
    const err = toEngineError(e, where);
    if (!(err instanceof EngineError) || !sharedGpuHint(err.engineMessage)) throw err;
    throw new EngineError(err.engine, err.code, err.engineMessage + sharedGpuHint(err.engineMessage), where);
  }
  const ref: CommRef = { handle, rank: o.rank };
  // Live while it initialises: polled for errors, aborted on a timeout, an error or process exit.
  dev.comms.add(ref);
  try {
    await dev.commReady(ref, where);
  } finally {
    dev.comms.delete(ref);
  }
  return new NcclComm(proc, handle, o.rank, o.size, o.worldRanks, o.key);
}
