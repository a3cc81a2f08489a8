/**
 * The engines' own collectives as the specs call them (src/specs/types.ts Builtin): cclab's
 * layout and in-place aliasing mapped onto MPI's conventions (MPI_IN_PLACE as a null send
 * buffer; an in-place reduce-scatter's result at the start of the buffer), which both the MPI
 * wrappers (backends/mpi/builtin.ts) and the NCCL ones (backends/nccl/builtin.ts) follow.
 */
import type { View } from "../core/buffer.js";
import { view } from "../core/buffer.js";
import type { ReduceOp } from "../core/op.js";
import type { Builtin, BuiltinCall } from "../specs/types.js";

type Awaitable = void | Promise<void>;

/** The MPI-style wrappers an engine provides (argument order as in the C APIs; counts per rank). */
export interface EngineCollectives {
  barrier(): Awaitable;
  bcast(buf: View, root: number): Awaitable;
  allreduce(send: View | null, recv: View, op: ReduceOp): Awaitable;
  reduce(send: View | null, recv: View | null, op: ReduceOp, root: number): Awaitable;
  gather(send: View | null, recv: View | null, count: number, root: number): Awaitable;
  scatter(send: View | null, recv: View | null, count: number, root: number): Awaitable;
  allgather(send: View | null, recv: View, count: number): Awaitable;
  reduceScatterBlock(send: View | null, recv: View, count: number, op: ReduceOp): Awaitable;
  alltoall(send: View | null, recv: View, count: number): Awaitable;
  alltoallv(
    send: View,
    sendcounts: readonly number[],
    sdispls: readonly number[],
    recv: View,
    recvcounts: readonly number[],
    rdispls: readonly number[],
  ): Awaitable;
}

const displs = (counts: readonly number[]): number[] => {
  let at = 0;
  return counts.map((c) => {
    const d = at;
    at += c;
    return d;
  });
};

/** The spec-facing Builtin over an engine's wrappers; `copy` is the backend's local copy. */
export function specBuiltin(e: EngineCollectives, copy: (dst: View, src: View) => void): Builtin {
  const isRoot = (x: BuiltinCall) => x.call.rank === x.call.root;
  const inPlace = (x: BuiltinCall) => x.call.inPlace;
  const input = (x: BuiltinCall) => x.input as View;
  const output = (x: BuiltinCall) => x.output as View;
  return {
    barrier: () => e.barrier(),
    async broadcast(x) {
      if (isRoot(x) && !inPlace(x)) copy(output(x), input(x));
      await e.bcast(output(x), x.call.root);
    },
    reduce: (x) =>
      e.reduce(isRoot(x) && inPlace(x) ? null : input(x), isRoot(x) ? output(x) : null, x.call.op, x.call.root),
    gather: (x) =>
      e.gather(isRoot(x) && inPlace(x) ? null : input(x), isRoot(x) ? output(x) : null, x.call.count, x.call.root),
    // In place the root's own block stays where it is: input[root·count], which is its output.
    scatter: (x) =>
      e.scatter(isRoot(x) ? input(x) : null, isRoot(x) && inPlace(x) ? null : output(x), x.call.count, x.call.root),
    allgather: (x) => e.allgather(inPlace(x) ? null : input(x), output(x), x.call.count),
    async reducescatter(x) {
      if (!inPlace(x)) return e.reduceScatterBlock(input(x), output(x), x.call.count, x.call.op);
      // MPI_IN_PLACE leaves the result at the start of the whole buffer; cclab's in-place output is block `rank`.
      await e.reduceScatterBlock(null, input(x), x.call.count, x.call.op);
      if (x.call.rank > 0 && x.call.count > 0) copy(output(x), view(input(x), 0, x.call.count));
    },
    allreduce: (x) => e.allreduce(inPlace(x) ? null : input(x), output(x), x.call.op),
    alltoall: (x) => e.alltoall(inPlace(x) ? null : input(x), output(x), x.call.count),
    alltoallv: (x) => {
      const sc = x.call.sendCounts ?? [];
      const rc = x.call.recvCounts ?? [];
      return e.alltoallv(input(x), sc, displs(sc), output(x), rc, displs(rc));
    },
  };
}
