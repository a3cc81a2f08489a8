/**
 * NCCL's own collectives on an NcclComm (comm.builtin): the oracle cclab's hand-rolled
 * algorithms are tested and benchmarked against. Same method names and arguments as MpiBuiltin
 * (views in, views out; `null` send view = in place), but on device memory and stream-ordered:
 * each returns (a promise) once its work is enqueued; comm.synchronize() or reading a buffer
 * back waits for it.
 *
 * | method             | NCCL                                                                      |
 * |--------------------|---------------------------------------------------------------------------|
 * | barrier            | ncclAllReduce of one int32, then a stream wait (as torch's NCCL barrier)  |
 * | bcast              | ncclBroadcast in place                                                    |
 * | allreduce, reduce  | ncclAllReduce, ncclReduce                                                 |
 * | allgather          | ncclAllGather                                                             |
 * | reduceScatterBlock | ncclReduceScatter (in place: result moved to recv[0..count), as MPI)      |
 * | gather, scatter    | ncclGather / ncclScatter (NCCL >= 2.28), else grouped send/recv as torch  |
 * | alltoall           | ncclAlltoAll (NCCL >= 2.28), else grouped send/recv as torch              |
 * | alltoallv          | grouped send/recv (torch's all_to_all_single with splits)                 |
 *
 * avg and premulsum run as ncclSum with cclab's scaling around it (sumScaling: pre-multiply a
 * copy of the input, or divide the result, which is what ncclAvg and ncclRedOpCreatePreMulSum do
 * inside NCCL), as MpiBuiltin does, so results compare exactly with cclab's for every op. NCCL has no bitwise reductions: band/bor/bxor are refused.
 * CCLAB_NCCL_P2P_COLLECTIVES=1 uses the grouped send/recv forms even where NCCL has its own.
 */
import { type DataBuffer, type View, view } from "../../core/buffer.js";
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import { parseOp, type ReduceOp, sumScaling } from "../../core/op.js";
import type { DevicePtr, NcclOpName } from "../../native/types.js";
import type { DeviceBuffer } from "./buffer.js";
import type { NcclDevice } from "./device.js";
import type { P2PItem } from "./work.js";

interface Ptr {
  readonly ptr: DevicePtr;
  readonly off: number;
}

const NULL_PTR: Ptr = { ptr: 0n, off: 0 };

/**
 * What the engine's collectives need of their comm (NcclComm is the one): an interface here, so
 * comm.ts, which makes its NcclBuiltin, and builtin.ts do not import each other.
 */
export interface BuiltinComm {
  readonly rank: number;
  readonly size: number;
  readonly handle: number;
  readonly device: NcclDevice;
  checkLive(op: string): void;
  checkView(view: unknown, op: string, arg?: string): View;
  describe(kind: string, peer: number, label: string | undefined): string;
  alloc(dtype: DType, count: number): DataBuffer;
  copy(dst: View, src: View): void;
  scale(dst: View, src: View, mul: number, div: number): void;
  synchronize(): Promise<void>;
}

export class NcclBuiltin {
  private barrierBuf: View | undefined;

  constructor(private readonly comm: BuiltinComm) {}

  private get size(): number {
    return this.comm.size;
  }
  private get rank(): number {
    return this.comm.rank;
  }
  private get dev() {
    return this.comm.device;
  }
  private get native() {
    return this.comm.device.native;
  }
  private get stream(): number {
    return this.comm.device.stream;
  }

  private useNative(fn: "alltoAll" | "gather" | "scatter"): boolean {
    if (/^(1|true|yes|on)$/i.test(process.env.CCLAB_NCCL_P2P_COLLECTIVES ?? "")) return false;
    return this.native.loaded()?.optional[fn] === true;
  }

  private check(v: View | null, op: string, arg: string): View | null {
    return v === null ? null : this.comm.checkView(v, `builtin ${op}`, arg);
  }

  private ptr(v: View | null, extra = 0): Ptr {
    if (v === null || v.count === 0) return NULL_PTR;
    const b = v.buffer as DeviceBuffer;
    return { ptr: b.ptr, off: (v.offset + extra) * dtypeInfo(b.dtype).bytes };
  }

  private ncclOp(opIn: ReduceOp | string, name: string): { op: ReduceOp; nccl: NcclOpName } {
    const op = parseOp(opIn, { rank: this.rank, op: `builtin ${name}` });
    if (op.name === "band" || op.name === "bor" || op.name === "bxor") {
      throw new InvalidArgumentError(
        { rank: this.rank, op: `builtin ${name}`, arg: "op" },
        `NCCL has no bitwise reductions ('${op.name}'); its ops are sum, prod, min, max and avg`,
      );
    }
    const nccl: NcclOpName = op.name === "avg" || op.name === "premulsum" ? "sum" : op.name;
    return { op, nccl };
  }

  private call(name: string, fn: () => number, keep: readonly unknown[] = []): Promise<void> {
    this.comm.checkLive(`builtin ${name}`);
    return this.dev.collective(this.comm, `rank ${this.rank}: builtin ${name}`, fn, keep);
  }

  /** premulsum, float avg (sumScaling): a scaled copy of the input (never the caller's buffer). */
  private prescale(src: View, count: number, op: ReduceOp): View | null {
    const { premul } = sumScaling(op, src.buffer.dtype, this.size);
    if (premul === undefined) return null;
    const tmp = view(this.comm.alloc(src.buffer.dtype, count));
    this.comm.scale(tmp, { buffer: src.buffer, offset: src.offset, count }, premul, 1);
    return tmp;
  }

  /** Integer avg (sumScaling): the sum divided in place. */
  private postscale(out: View | null, count: number, op: ReduceOp): void {
    if (out === null || count === 0) return;
    const { postdiv } = sumScaling(op, out.buffer.dtype, this.size);
    if (postdiv === undefined) return;
    const v = { buffer: out.buffer, offset: out.offset, count };
    this.comm.scale(v, v, 1, postdiv);
  }

  private item(kind: "send" | "recv", v: View, peer: number, what: string): P2PItem {
    return {
      kind,
      comm: this.comm,
      buffer: v.buffer as DeviceBuffer,
      off: this.ptr(v).off,
      count: v.count,
      peer,
      what: `${this.comm.describe(kind, peer, undefined)} (builtin ${what})`,
    };
  }

  private async p2p(what: string, items: P2PItem[]): Promise<void> {
    this.comm.checkLive(`builtin ${what}`);
    await this.dev.flush(
      items.filter((i) => i.count > 0),
      `rank ${this.rank}: builtin ${what}`,
    );
  }

  private sub(v: View, offset: number, count: number): View {
    return { buffer: v.buffer, offset: v.offset + offset, count };
  }

  /** Returns on every rank once all have entered and this rank's stream has drained. */
  async barrier(): Promise<void> {
    this.barrierBuf ??= view(this.comm.alloc("int32", 1));
    const p = this.ptr(this.barrierBuf);
    await this.call("barrier", () =>
      this.native.allReduce(p.ptr, p.off, p.ptr, p.off, 1, "int32", "sum", this.comm.handle, this.stream),
    );
    await this.comm.synchronize();
  }

  async bcast(buf: View, root: number): Promise<void> {
    const b = this.ptr(this.check(buf, "bcast", "buf"));
    await this.call("bcast", () =>
      this.native.broadcast(
        b.ptr,
        b.off,
        b.ptr,
        b.off,
        buf.count,
        buf.buffer.dtype,
        root,
        this.comm.handle,
        this.stream,
      ),
    );
  }

  /** send = null: in place in recv. */
  async allreduce(send: View | null, recv: View, opIn: ReduceOp | string): Promise<void> {
    const { op, nccl } = this.ncclOp(opIn, "allreduce");
    this.check(send, "allreduce", "send");
    this.check(recv, "allreduce", "recv");
    const n = recv.count;
    const scaled = this.prescale(send ?? recv, n, op);
    const s = this.ptr(scaled ?? send ?? recv);
    const r = this.ptr(recv);
    await this.call(
      "allreduce",
      () =>
        this.native.allReduce(s.ptr, s.off, r.ptr, r.off, n, recv.buffer.dtype, nccl, this.comm.handle, this.stream),
      [scaled],
    );
    this.postscale(recv, n, op);
  }

  /** recv is used at root only (may be null elsewhere); send = null: in place at root. */
  async reduce(send: View | null, recv: View | null, opIn: ReduceOp | string, root: number): Promise<void> {
    const { op, nccl } = this.ncclOp(opIn, "reduce");
    this.check(send, "reduce", "send");
    this.check(recv, "reduce", "recv");
    const ref = (send ?? recv)!;
    const n = ref.count;
    const scaled = this.prescale(ref, n, op);
    const s = this.ptr(scaled ?? ref);
    const r = this.rank === root ? this.ptr(recv) : NULL_PTR;
    await this.call(
      "reduce",
      () =>
        this.native.reduce(s.ptr, s.off, r.ptr, r.off, n, ref.buffer.dtype, nccl, root, this.comm.handle, this.stream),
      [scaled],
    );
    if (this.rank === root) this.postscale(recv, n, op);
  }

  /** count elements per rank; recv (size * count) at root. send = null: in place at root. */
  async gather(send: View | null, recv: View | null, count: number, root: number): Promise<void> {
    this.check(send, "gather", "send");
    this.check(recv, "gather", "recv");
    const isRoot = this.rank === root;
    const dtype = (send ?? recv)!.buffer.dtype;
    if (this.useNative("gather")) {
      const r = isRoot ? this.ptr(recv) : NULL_PTR;
      const s = send ? this.ptr(send) : this.ptr(recv, root * count);
      await this.call("gather", () =>
        this.native.gather(s.ptr, s.off, r.ptr, r.off, count, dtype, root, this.comm.handle, this.stream),
      );
      return;
    }
    const items: P2PItem[] = [];
    if (isRoot) {
      for (let p = 0; p < this.size; p++) {
        if (p !== root) items.push(this.item("recv", this.sub(recv!, p * count, count), p, "gather"));
      }
      if (send) this.comm.copy(this.sub(recv!, root * count, count), this.sub(send, 0, count));
    } else {
      items.push(this.item("send", this.sub(send!, 0, count), root, "gather"));
    }
    await this.p2p("gather", items);
  }

  /** count elements per rank; send (size * count) at root. recv = null: in place at root. */
  async scatter(send: View | null, recv: View | null, count: number, root: number): Promise<void> {
    this.check(send, "scatter", "send");
    this.check(recv, "scatter", "recv");
    const isRoot = this.rank === root;
    const dtype = (send ?? recv)!.buffer.dtype;
    if (this.useNative("scatter")) {
      const s = isRoot ? this.ptr(send) : NULL_PTR;
      const r = recv ? this.ptr(recv) : this.ptr(send, root * count);
      await this.call("scatter", () =>
        this.native.scatter(s.ptr, s.off, r.ptr, r.off, count, dtype, root, this.comm.handle, this.stream),
      );
      return;
    }
    const items: P2PItem[] = [];
    if (isRoot) {
      for (let p = 0; p < this.size; p++) {
        if (p !== root) items.push(this.item("send", this.sub(send!, p * count, count), p, "scatter"));
      }
      if (recv) this.comm.copy(this.sub(recv, 0, count), this.sub(send!, root * count, count));
    } else {
      items.push(this.item("recv", this.sub(recv!, 0, count), root, "scatter"));
    }
    await this.p2p("scatter", items);
  }

  /** count elements per rank into recv (size * count). send = null: in place (own chunk already in recv). */
  async allgather(send: View | null, recv: View, count: number): Promise<void> {
    this.check(send, "allgather", "send");
    this.check(recv, "allgather", "recv");
    const s = send ? this.ptr(send) : this.ptr(recv, this.rank * count);
    const r = this.ptr(recv);
    await this.call("allgather", () =>
      this.native.allGather(s.ptr, s.off, r.ptr, r.off, count, recv.buffer.dtype, this.comm.handle, this.stream),
    );
  }

  /** send (size * count) reduced, chunk `rank` into recv (count). send = null: in place (recv holds size * count; result in recv[0..count)). */
  async reduceScatterBlock(send: View | null, recv: View, count: number, opIn: ReduceOp | string): Promise<void> {
    const { op, nccl } = this.ncclOp(opIn, "reduceScatterBlock");
    this.check(send, "reduceScatterBlock", "send");
    this.check(recv, "reduceScatterBlock", "recv");
    const full = send ?? recv;
    const scaled = this.prescale(full, count * this.size, op);
    const dtype = recv.buffer.dtype;
    const inPlace = send === null && scaled === null;
    const s = this.ptr(scaled ?? full);
    const r = inPlace ? this.ptr(recv, this.rank * count) : this.ptr(recv);
    await this.call(
      "reduceScatterBlock",
      () => this.native.reduceScatter(s.ptr, s.off, r.ptr, r.off, count, dtype, nccl, this.comm.handle, this.stream),
      [scaled],
    );
    if (inPlace && this.rank > 0 && count > 0) {
      this.comm.copy(this.sub(recv, 0, count), this.sub(recv, this.rank * count, count));
    }
    this.postscale(recv, count, op);
  }

  /** count elements to each peer. send = null: in place in recv. */
  async alltoall(send: View | null, recv: View, count: number): Promise<void> {
    this.check(send, "alltoall", "send");
    this.check(recv, "alltoall", "recv");
    let src = send;
    if (src === null) {
      // NCCL has no in-place all-to-all: work from a copy of the input.
      src = view(this.comm.alloc(recv.buffer.dtype, count * this.size));
      this.comm.copy(src, this.sub(recv, 0, count * this.size));
    }
    if (this.useNative("alltoAll")) {
      const s = this.ptr(src);
      const r = this.ptr(recv);
      await this.call(
        "alltoall",
        () => this.native.alltoAll(s.ptr, s.off, r.ptr, r.off, count, recv.buffer.dtype, this.comm.handle, this.stream),
        [src],
      );
      return;
    }
    const counts = Array.from({ length: this.size }, () => count);
    const displs = counts.map((_, i) => i * count);
    await this.alltoallv(src, counts, displs, recv, counts, displs);
  }

  /** Counts and displacements in elements, one per rank. send = null: in place in recv. */
  async alltoallv(
    send: View | null,
    sendcounts: readonly number[],
    sdispls: readonly number[],
    recv: View,
    recvcounts: readonly number[],
    rdispls: readonly number[],
  ): Promise<void> {
    this.check(send, "alltoallv", "send");
    this.check(recv, "alltoallv", "recv");
    const n = this.size;
    for (const [name, a] of [
      ["sendcounts", sendcounts],
      ["sdispls", sdispls],
      ["recvcounts", recvcounts],
      ["rdispls", rdispls],
    ] as const) {
      if (!Array.isArray(a) || a.length !== n) {
        throw new InvalidArgumentError(
          { rank: this.rank, op: "builtin alltoallv", arg: name },
          `expected ${n} entries, one per rank`,
        );
      }
    }
    let src = send;
    if (src === null) {
      src = view(this.comm.alloc(recv.buffer.dtype, recv.count));
      this.comm.copy(src, recv);
    }
    const items: P2PItem[] = [];
    for (let p = 0; p < n; p++) {
      const sv = this.sub(src, sdispls[p]!, sendcounts[p]!);
      const rv = this.sub(recv, rdispls[p]!, recvcounts[p]!);
      if (p === this.rank) {
        if (rv.count > 0) this.comm.copy(rv, sv);
        continue;
      }
      items.push(this.item("send", sv, p, "alltoallv"));
      items.push(this.item("recv", rv, p, "alltoallv"));
    }
    await this.p2p("alltoallv", items);
  }
}
