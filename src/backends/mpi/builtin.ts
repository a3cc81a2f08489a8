/**
 * MPI's own collectives on an MpiComm (comm.builtin): the oracle cclab's hand-rolled algorithms
 * are tested and benchmarked against. MPI_BUILTINS is the one place that says how cclab calls
 * each: one row per collective, from cclab's layout (src/specs/<name>.ts) to the MPI function and
 * its arguments in the C API's order. Every row goes through MpiEngine.call, the one way into the
 * addon (NativeMpi.collective, native/mpi.cc Collective), which checks the views, maps the op and
 * turns MPI's errors into EngineError. Blocking: every rank of the communicator calls it, as with
 * MPI.
 *
 * avg and premulsum run as MPI_SUM with cclab's scaling around it (sumScaling: pre-multiply a
 * copy of the input, or divide the result), so results compare with cclab's for every op; float16
 * and bfloat16 travel as MPI_UINT16_T with user-defined ops (native/mpi.cc).
 */
import { checkHostView } from "../../checks.js";
import { HostBuffer, type View, view } from "../../core/buffer.js";
import { dtypeInfo } from "../../core/dtype.js";
import { type ReduceOp, sumScaling } from "../../core/op.js";
import { engineCall } from "../../native/load.js";
import { scaleHost } from "../../native/reduce.js";
import type { MpiCollective, NativeMpi } from "../../native/types.js";
import { type BuiltinTable, builtinOf, displs, type EngineCall, type EngineCollectives, mpiNames } from "../builtin.js";

/** A row's input and output views (present where cclab's layout gives this rank one), and whether it is the root. */
const input = (x: EngineCall): View => x.input as View;
const output = (x: EngineCall): View => x.output as View;
const isRoot = (x: EngineCall): boolean => x.call.rank === x.call.root;

const SUM: ReduceOp = { name: "sum" };

/** The reductions: their input is scaled for avg and premulsum, their result divided for integer avg. */
const REDUCING: ReadonlySet<MpiCollective> = new Set(["MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter_block"]);

/** MPI's collectives on one communicator, as the table calls them. */
export class MpiEngine {
  constructor(
    private readonly mpi: NativeMpi,
    private readonly comm: number,
    readonly rank: number,
    /** The backend's local copy. */
    readonly copy: (dst: View, src: View) => void,
  ) {}

  get size(): number {
    return this.mpi.size(this.comm);
  }

  private host(v: View | null, fn: string, arg: string): { data: HostBuffer["data"]; off: number } | null {
    if (v === null) return null;
    const h = checkHostView(this.rank, v, `builtin ${fn}`, arg, "mpi", { shared: false });
    return { data: h.buffer.data, off: h.offset * dtypeInfo(h.buffer.dtype).bytes };
  }

  /**
   * MPI's function `fn` with the arguments MPI's collectives take, in the C API's order (the
   * datatype is the views', the communicator this one's): a null send is MPI_IN_PLACE (MPI_Scatter:
   * a null recv); MPI_Bcast's buffer is recv. count is per rank for gather, scatter, allgather and
   * alltoall, MPI_Reduce_scatter_block's recvcount.
   */
  call(fn: MpiCollective, send: View | null, recv: View | null, count: number, op = SUM, root = 0): void {
    const sb = this.host(send, fn, "send");
    const rb = this.host(recv, fn, "recv");
    const dtype = (send ?? recv)?.buffer.dtype ?? "uint8";
    let s = sb;
    const reducing = REDUCING.has(fn);
    if (reducing) {
      // premulsum, float avg: a scaled copy of the input (never the caller's buffer).
      const { premul } = sumScaling(op, dtype, this.size);
      const src = sb ?? rb;
      if (premul !== undefined && src !== null) {
        const n = fn === "MPI_Reduce_scatter_block" ? count * this.size : count;
        const tmp = new HostBuffer(dtype, n);
        const at = src.off / dtypeInfo(dtype).bytes;
        scaleHost(dtype, tmp.data, 0, src.data, at, n, premul, 1);
        s = { data: tmp.data, off: 0 };
      }
    }
    engineCall(`rank ${this.rank}: builtin ${fn}`, () =>
      this.mpi.collective(
        fn,
        s?.data ?? null,
        s?.off ?? 0,
        rb?.data ?? null,
        rb?.off ?? 0,
        count,
        dtype,
        op.name,
        root,
        this.comm,
      ),
    );
    // Integer avg: the sum divided in place (where this rank has the result).
    if (reducing && recv !== null && (fn !== "MPI_Reduce" || this.rank === root)) {
      const { postdiv } = sumScaling(op, dtype, this.size);
      const b = recv.buffer as HostBuffer;
      if (postdiv !== undefined) scaleHost(dtype, b.data, recv.offset, b.data, recv.offset, count, 1, postdiv);
    }
  }

  /**
   * MPI_Alltoallv: apart from call() because it alone takes arrays. Counts and displacements in
   * elements, one per rank; a null send is MPI_IN_PLACE.
   */
  alltoallv(
    send: View | null,
    sendcounts: readonly number[],
    sdispls: readonly number[],
    recv: View,
    recvcounts: readonly number[],
    rdispls: readonly number[],
  ): void {
    const sb = this.host(send, "MPI_Alltoallv", "send");
    const rb = this.host(recv, "MPI_Alltoallv", "recv")!;
    engineCall(`rank ${this.rank}: builtin MPI_Alltoallv`, () =>
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

/**
 * How cclab calls MPI, per collective: the MPI function and its arguments (sendbuf or null for
 * MPI_IN_PLACE, recvbuf, count, op, root) from cclab's layout, with the local copy cclab's layout
 * needs where MPI's in-place convention differs from it.
 */
export const MPI_BUILTINS: BuiltinTable<MpiEngine> = {
  barrier: (mpi) => mpi.call("MPI_Barrier", null, null, 0),
  broadcast: (mpi, x) => {
    // MPI_Bcast has one buffer: an out-of-place root copies its input there first.
    if (isRoot(x) && !x.call.inPlace) mpi.copy(output(x), input(x));
    mpi.call("MPI_Bcast", null, output(x), x.call.count, SUM, x.call.root);
  },
  reduce: (mpi, x) =>
    mpi.call(
      "MPI_Reduce",
      isRoot(x) && x.call.inPlace ? null : input(x),
      isRoot(x) ? output(x) : null,
      x.call.count,
      x.call.op,
      x.call.root,
    ),
  gather: (mpi, x) =>
    mpi.call(
      "MPI_Gather",
      isRoot(x) && x.call.inPlace ? null : input(x),
      isRoot(x) ? output(x) : null,
      x.call.count,
      SUM,
      x.call.root,
    ),
  // In place the root's own block stays where it is: input[root·count], which is its output.
  scatter: (mpi, x) =>
    mpi.call(
      "MPI_Scatter",
      isRoot(x) ? input(x) : null,
      isRoot(x) && x.call.inPlace ? null : output(x),
      x.call.count,
      SUM,
      x.call.root,
    ),
  allgather: (mpi, x) => mpi.call("MPI_Allgather", x.call.inPlace ? null : input(x), output(x), x.call.count),
  reducescatter: (mpi, x) => {
    if (!x.call.inPlace) return mpi.call("MPI_Reduce_scatter_block", input(x), output(x), x.call.count, x.call.op);
    // MPI_IN_PLACE leaves the result at the start of the whole buffer; cclab's in-place output is block `rank`.
    mpi.call("MPI_Reduce_scatter_block", null, input(x), x.call.count, x.call.op);
    if (x.call.rank > 0 && x.call.count > 0) mpi.copy(output(x), view(input(x), 0, x.call.count));
  },
  allreduce: (mpi, x) =>
    mpi.call("MPI_Allreduce", x.call.inPlace ? null : input(x), output(x), x.call.count, x.call.op),
  alltoall: (mpi, x) => mpi.call("MPI_Alltoall", x.call.inPlace ? null : input(x), output(x), x.call.count),
  alltoallv: (mpi, x) => {
    const sc = x.call.sendCounts ?? [];
    const rc = x.call.recvCounts ?? [];
    mpi.alltoallv(input(x), sc, displs(sc), output(x), rc, displs(rc));
  },
};

/** comm.builtin of the mpi backend: MPI's collectives under MPI's names, and `spec` as the specs call them. */
export type MpiBuiltin = EngineCollectives<void>;

export function mpiBuiltin(
  mpi: NativeMpi,
  comm: number,
  rank: number,
  copy: (dst: View, src: View) => void,
): MpiBuiltin {
  const engine = new MpiEngine(mpi, comm, rank, copy);
  return mpiNames<void>({
    rank,
    spec: builtinOf(MPI_BUILTINS, engine),
    run: (k, x) => MPI_BUILTINS[k](engine, x),
    copy,
    alltoallv: (...a) => engine.alltoallv(...a),
  });
}
