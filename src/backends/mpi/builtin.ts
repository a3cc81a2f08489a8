/**
 * MPI's own collectives on an MpiComm (comm.builtin): the oracle cclab's hand-rolled algorithms
 * are tested and benchmarked against. Views in, views out; `null` send view = MPI_IN_PLACE.
 * avg and premulsum run as MPI_SUM with cclab's scaling around it (sumScaling: pre-multiply a
 * copy of the input, or divide the result), so results compare with cclab's for every op. Blocking: every rank
 * of the communicator calls it, as with MPI.
 */
import { checkHostView } from "../../checks.js";
import { HostBuffer, type View } from "../../core/buffer.js";
import { dtypeInfo } from "../../core/dtype.js";
import { parseOp, type ReduceOp, sumScaling } from "../../core/op.js";
import { engineCall } from "../../native/load.js";
import { scaleHost } from "../../native/reduce.js";
import type { NativeMpi } from "../../native/types.js";

type Buf = { data: HostBuffer["data"]; off: number };

export class MpiBuiltin {
  constructor(
    private readonly mpi: NativeMpi,
    private readonly comm: number,
    private readonly rank: number,
  ) {}

  private get size(): number {
    return this.mpi.size(this.comm);
  }

  private host(v: View | null, op: string, arg: string): Buf | null {
    if (v === null) return null;
    const h = checkHostView(this.rank, v, `builtin ${op}`, arg, "mpi", { shared: false });
    return { data: h.buffer.data, off: h.offset * dtypeInfo(h.buffer.dtype).bytes };
  }

  private call<T>(op: string, fn: () => T): T {
    return engineCall(`rank ${this.rank}: builtin ${op}`, fn);
  }

  /** premulsum, float avg (sumScaling): a scaled copy of the input (never the caller's buffer). */
  private prescale(send: View | null, recv: View, count: number, op: ReduceOp): View | null {
    const src = send ?? recv;
    const { premul } = sumScaling(op, src.buffer.dtype, this.size);
    if (premul === undefined) return send;
    const tmp = new HostBuffer(src.buffer.dtype, count);
    scaleHost(tmp.dtype, tmp.data, 0, (src.buffer as HostBuffer).data, src.offset, count, premul, 1);
    return { buffer: tmp, offset: 0, count };
  }

  /** Integer avg (sumScaling): the sum divided in place. */
  private postscale(out: View | null, count: number, op: ReduceOp): void {
    if (out === null) return;
    const { postdiv } = sumScaling(op, out.buffer.dtype, this.size);
    if (postdiv === undefined) return;
    const b = out.buffer as HostBuffer;
    scaleHost(b.dtype, b.data, out.offset, b.data, out.offset, count, 1, postdiv);
  }

  barrier(): void {
    this.call("barrier", () => this.mpi.barrier(this.comm));
  }

  bcast(buf: View, root: number): void {
    const b = this.host(buf, "bcast", "buf")!;
    this.call("bcast", () => this.mpi.bcast(b.data, b.off, buf.count, buf.buffer.dtype, root, this.comm));
  }

  /** send = null: in place in recv. */
  allreduce(send: View | null, recv: View, opIn: ReduceOp | string): void {
    const op = parseOp(opIn, { rank: this.rank, op: "builtin allreduce" });
    const n = recv.count;
    const s = this.prescale(send, recv, n, op);
    const sb = this.host(s, "allreduce", "send");
    const rb = this.host(recv, "allreduce", "recv")!;
    this.call("allreduce", () =>
      this.mpi.allreduce(sb?.data ?? null, sb?.off ?? 0, rb.data, rb.off, n, recv.buffer.dtype, op.name, this.comm),
    );
    this.postscale(recv, n, op);
  }

  /** recv is used at root only (may be null elsewhere); send = null: in place at root. */
  reduce(send: View | null, recv: View | null, opIn: ReduceOp | string, root: number): void {
    const op = parseOp(opIn, { rank: this.rank, op: "builtin reduce" });
    const ref = (send ?? recv)!;
    const n = ref.count;
    const s = this.prescale(send, ref, n, op);
    const sb = this.host(s, "reduce", "send");
    const rb = this.host(recv, "reduce", "recv");
    this.call("reduce", () =>
      this.mpi.reduce(
        sb?.data ?? null,
        sb?.off ?? 0,
        rb?.data ?? null,
        rb?.off ?? 0,
        n,
        ref.buffer.dtype,
        op.name,
        root,
        this.comm,
      ),
    );
    if (this.rank === root) this.postscale(recv, n, op);
  }

  /** count elements per rank; recv (size * count) at root. send = null: in place at root. */
  gather(send: View | null, recv: View | null, count: number, root: number): void {
    const dtype = (send ?? recv)!.buffer.dtype;
    const sb = this.host(send, "gather", "send");
    const rb = this.host(recv, "gather", "recv");
    this.call("gather", () =>
      this.mpi.gather(sb?.data ?? null, sb?.off ?? 0, rb?.data ?? null, rb?.off ?? 0, count, dtype, root, this.comm),
    );
  }

  /** count elements per rank; send (size * count) at root. recv = null: in place at root. */
  scatter(send: View | null, recv: View | null, count: number, root: number): void {
    const dtype = (send ?? recv)!.buffer.dtype;
    const sb = this.host(send, "scatter", "send");
    const rb = this.host(recv, "scatter", "recv");
    this.call("scatter", () =>
      this.mpi.scatter(sb?.data ?? null, sb?.off ?? 0, rb?.data ?? null, rb?.off ?? 0, count, dtype, root, this.comm),
    );
  }

  /** count elements per rank into recv (size * count). send = null: in place (own chunk already in recv). */
  allgather(send: View | null, recv: View, count: number): void {
    const sb = this.host(send, "allgather", "send");
    const rb = this.host(recv, "allgather", "recv")!;
    this.call("allgather", () =>
      this.mpi.allgather(sb?.data ?? null, sb?.off ?? 0, rb.data, rb.off, count, recv.buffer.dtype, this.comm),
    );
  }

  /** send (size * count) reduced, chunk `rank` into recv (count). send = null: in place (recv holds size * count). */
  reduceScatterBlock(send: View | null, recv: View, count: number, opIn: ReduceOp | string): void {
    const op = parseOp(opIn, { rank: this.rank, op: "builtin reduceScatterBlock" });
    const full = send ?? recv;
    const s = this.prescale(send, full, count * this.size, op);
    const sb = this.host(s, "reduceScatterBlock", "send");
    const rb = this.host(recv, "reduceScatterBlock", "recv")!;
    this.call("reduceScatterBlock", () =>
      this.mpi.reduceScatterBlock(
        sb?.data ?? null,
        sb?.off ?? 0,
        rb.data,
        rb.off,
        count,
        recv.buffer.dtype,
        op.name,
        this.comm,
      ),
    );
    this.postscale(recv, count, op);
  }

  /** count elements to each peer. send = null: in place in recv. */
  alltoall(send: View | null, recv: View, count: number): void {
    const sb = this.host(send, "alltoall", "send");
    const rb = this.host(recv, "alltoall", "recv")!;
    this.call("alltoall", () =>
      this.mpi.alltoall(sb?.data ?? null, sb?.off ?? 0, rb.data, rb.off, count, recv.buffer.dtype, this.comm),
    );
  }

  /** Counts and displacements in elements, one per rank. send = null: in place in recv. */
  alltoallv(
    send: View | null,
    sendcounts: readonly number[],
    sdispls: readonly number[],
    recv: View,
    recvcounts: readonly number[],
    rdispls: readonly number[],
  ): void {
    const sb = this.host(send, "alltoallv", "send");
    const rb = this.host(recv, "alltoallv", "recv")!;
    this.call("alltoallv", () =>
      this.mpi.alltoallv(
        sb?.data ?? null,
        sb?.off ?? 0,
        sendcounts,
        sdispls,
        rb.data,
        rb.off,
        recvcounts,
        rdispls,
        recv.buffer.dtype,
        this.comm,
      ),
    );
  }
}
