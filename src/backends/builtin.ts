/**
 * What the engines' own collectives share: the call a table row reads (EngineCall), the shape of
 * each engine's table (one row per collective, src/backends/mpi/builtin.ts MPI_BUILTINS and
 * src/backends/nccl/builtin.ts NCCL_BUILTINS), and MPI's names over a table (mpiNames): the
 * `comm.builtin` that tools and tests call as bcast(buf, root), allreduce(send | null, recv, op),
 * ... Each engine's table is the one place that says how cclab calls that engine's collective.
 */
import { type View, view } from "../core/buffer.js";
import { parseOp, type ReduceOp } from "../core/op.js";
import type { Builtin, BuiltinCall, RankCall } from "../specs/types.js";

export type Awaitable = void | Promise<void>;

/** What a table row reads of a spec's BuiltinCall (cclab's layout: src/specs/<name>.ts). */
export interface EngineCall {
  readonly call: Pick<RankCall, "rank" | "root" | "count" | "op" | "inPlace" | "sendCounts" | "recvCounts">;
  readonly input?: View;
  readonly output?: View;
}

/** One engine's table: per collective, the engine call(s) it makes for one rank. */
export type BuiltinTable<E> = { readonly [K in keyof Builtin]: (engine: E, x: EngineCall) => Awaitable };

/** Runs one row of a table on an engine. */
export type RunRow = (collective: keyof Builtin, x: EngineCall) => Awaitable;

/** The spec-facing Builtin of a table run on `engine`: its rows bound to it (a spec's call goes straight to the row). */
export function builtinOf<E>(table: BuiltinTable<E>, engine: E): Builtin {
  const out: Partial<Record<keyof Builtin, (x: BuiltinCall) => Awaitable>> = {};
  for (const k of Object.keys(table) as (keyof Builtin)[]) out[k] = table[k].bind(undefined, engine);
  return out as Builtin;
}

/** Displacements of counts laid end to end (alltoallv's layout). */
export function displs(counts: readonly number[]): number[] {
  let at = 0;
  return counts.map((c) => {
    const d = at;
    at += c;
    return d;
  });
}

/**
 * The engine's collectives under MPI's names and conventions (argument order as in the C API,
 * counts per rank, a null send view = MPI_IN_PLACE), for tools and tests: `comm.builtin` of the
 * mpi and nccl backends. R is void for MPI (blocking) and Promise<void> for NCCL (enqueued).
 */
export interface EngineCollectives<R extends Awaitable = Awaitable> {
  /** The same collectives as the specs call them (cclab's layouts), from the engine's table. */
  readonly spec: Builtin;
  barrier(): R;
  bcast(buf: View, root: number): R;
  /** send = null: in place in recv. */
  allreduce(send: View | null, recv: View, op: ReduceOp | string): R;
  /** recv is used at root only (may be null elsewhere); send = null: in place at root. */
  reduce(send: View | null, recv: View | null, op: ReduceOp | string, root: number): R;
  /** count elements per rank; recv (size * count) at root. send = null: in place at root. */
  gather(send: View | null, recv: View | null, count: number, root: number): R;
  /** count elements per rank; send (size * count) at root. recv = null: in place at root. */
  scatter(send: View | null, recv: View | null, count: number, root: number): R;
  /** count elements per rank into recv (size * count). send = null: in place (own block already in recv). */
  allgather(send: View | null, recv: View, count: number): R;
  /** send (size * count) reduced, block `rank` into recv (count). send = null: in place, recv holds size * count and the result lands in recv[0..count). */
  reduceScatterBlock(send: View | null, recv: View, count: number, op: ReduceOp | string): R;
  /** count elements to each peer. send = null: in place in recv. */
  alltoall(send: View | null, recv: View, count: number): R;
  /** Counts and displacements in elements, one per rank. send = null: in place in recv. */
  alltoallv(
    send: View | null,
    sendcounts: readonly number[],
    sdispls: readonly number[],
    recv: View,
    recvcounts: readonly number[],
    rdispls: readonly number[],
  ): R;
}

/** What mpiNames needs of an engine. */
export interface NamedEngine<R extends Awaitable> {
  readonly rank: number;
  readonly spec: Builtin;
  /** One row of the engine's table. */
  run: RunRow;
  copy(dst: View, src: View): void;
  /** alltoallv with any displacements (the table's row has them laid end to end). */
  alltoallv: EngineCollectives<R>["alltoallv"];
  /** Stream-ordered (R is a promise): what is refused before anything is enqueued rejects too, rather than throwing. */
  readonly async?: boolean;
}

const SUM: ReduceOp = { name: "sum" };

/**
 * MPI's names over an engine's table: each builds the cclab call it is and runs the table's row,
 * so the table is the only place that calls the engine (alltoallv, whose displacements a cclab
 * call cannot hold, excepted). The op is parsed here, at the boundary.
 */
export function mpiNames<R extends Awaitable>(e: NamedEngine<R>): EngineCollectives<R> {
  const rank = e.rank;
  const call = (count: number, root: number, inPlace: boolean, op: ReduceOp = SUM): EngineCall["call"] => ({
    rank,
    root,
    count,
    op,
    inPlace,
  });
  const parse = (op: ReduceOp | string, name: string) => parseOp(op, { rank, op: `builtin ${name}` });
  const run = e.run;
  const named: EngineCollectives<R> = {
    spec: e.spec,
    barrier: () => run("barrier", { call: call(0, 0, false) }) as R,
    bcast: (buf, root) =>
      run("broadcast", { call: call(buf.count, root, true), input: rank === root ? buf : undefined, output: buf }) as R,
    allreduce: (send, recv, op) =>
      run("allreduce", {
        call: call(recv.count, 0, send === null, parse(op, "allreduce")),
        input: send ?? recv,
        output: recv,
      }) as R,
    reduce: (send, recv, op, root) =>
      run("reduce", {
        call: call((send ?? recv)!.count, root, send === null, parse(op, "reduce")),
        input: send ?? recv ?? undefined,
        output: rank === root ? (recv ?? undefined) : undefined,
      }) as R,
    gather: (send, recv, count, root) =>
      run("gather", {
        call: call(count, root, send === null),
        input: send ?? view(recv!, root * count, count),
        output: rank === root ? (recv ?? undefined) : undefined,
      }) as R,
    scatter: (send, recv, count, root) =>
      run("scatter", {
        call: call(count, root, recv === null),
        input: rank === root ? (send ?? undefined) : undefined,
        output: recv ?? view(send!, root * count, count),
      }) as R,
    allgather: (send, recv, count) =>
      run("allgather", {
        call: call(count, 0, send === null),
        input: send ?? view(recv, rank * count, count),
        output: recv,
      }) as R,
    reduceScatterBlock: (send, recv, count, op) => {
      const o = parse(op, "reduceScatterBlock");
      if (send !== null)
        return run("reducescatter", { call: call(count, 0, false, o), input: send, output: recv }) as R;
      // cclab's in-place result is block `rank`; MPI_IN_PLACE's is the start of the buffer.
      const mine = view(recv, rank * count, count);
      const done = run("reducescatter", { call: call(count, 0, true, o), input: recv, output: mine });
      const move = () => {
        if (rank > 0 && count > 0) e.copy(view(recv, 0, count), mine);
      };
      return (done instanceof Promise ? done.then(move) : move()) as R;
    },
    alltoall: (send, recv, count) =>
      run("alltoall", { call: call(count, 0, send === null), input: send ?? recv, output: recv }) as R,
    alltoallv: (send, sendcounts, sdispls, recv, recvcounts, rdispls) =>
      e.alltoallv(send, sendcounts, sdispls, recv, recvcounts, rdispls),
  };
  if (!e.async) return named;
  const settled: Record<string, unknown> = { spec: e.spec };
  for (const [k, f] of Object.entries(named)) {
    if (typeof f !== "function") continue;
    settled[k] = (...a: unknown[]) => {
      try {
        return Promise.resolve(f(...a));
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  return settled as unknown as EngineCollectives<R>;
}
