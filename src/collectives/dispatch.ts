/**
 * Calling any collective by name with buffers laid out as layout.ts says, in or out of place.
 * The property tests, `cclab verify`, the MPI/NCCL differential tests and `cclab bench` all
 * go through here, so each builds its buffers one way.
 */
import type { Comm } from "../comm.js";
import { type DataBuffer, type View, view } from "../core/buffer.js";
import type { DType } from "../core/dtype.js";
import type { ReduceOp } from "../core/op.js";
import { type Layout, layout } from "../schedule/layout.js";
import type { Collective } from "../schedule/types.js";
import * as api from "./api.js";

export interface Shape {
  readonly collective: Collective;
  readonly count: number;
  readonly root: number;
  readonly dtype: DType;
  /** alltoallv: this rank's send and receive counts per peer. */
  readonly sendCounts?: readonly number[];
  readonly recvCounts?: readonly number[];
}

/**
 * A test case's call as seen by `rank`: alltoallv's split matrix (splits[src][dst]) becomes this
 * rank's row of send counts and column of receive counts.
 */
export function shapeOf(
  collective: Collective,
  c: {
    readonly count: number;
    readonly root: number;
    readonly dtype: DType;
    readonly splits?: readonly (readonly number[])[];
  },
  rank: number,
): Shape {
  return {
    collective,
    count: c.count,
    root: c.root,
    dtype: c.dtype,
    sendCounts: c.splits?.[rank],
    recvCounts: c.splits?.map((row) => row[rank] ?? 0),
  };
}

export interface Buffers {
  readonly layout: Layout;
  readonly input?: View;
  readonly output?: View;
  /** The memory holding both where they alias in place. */
  readonly memory: DataBuffer[];
}

/** Allocates this rank's buffers for a call (one shared buffer where in place aliases them). */
export function allocate(comm: Comm, shape: Shape, inPlace: boolean): Buffers {
  const l = layout({ ...shape, rank: comm.rank, size: comm.size });
  const a = inPlace ? l.alias : undefined;
  if (a) {
    const mem = comm.alloc(shape.dtype, Math.max(l.inputCount, l.outputCount));
    const whole = view(mem);
    const input = a.kind === "input-in-output" ? view(whole, a.offset, l.inputCount) : view(whole, 0, l.inputCount);
    const output = a.kind === "output-in-input" ? view(whole, a.offset, l.outputCount) : view(whole, 0, l.outputCount);
    return { layout: l, input, output, memory: [mem] };
  }
  const inMem = comm.alloc(shape.dtype, l.inputCount);
  const outMem = comm.alloc(shape.dtype, l.outputCount);
  return { layout: l, input: view(inMem), output: view(outMem), memory: [inMem, outMem] };
}

export interface Invocation extends Shape {
  readonly algorithm: string;
  readonly op?: ReduceOp;
  readonly segment?: number;
}

/** Runs the collective through the public API (so validation and 'auto' apply as for users). */
export async function invoke(comm: Comm, call: Invocation, b: Buffers): Promise<void> {
  const o = { algorithm: call.algorithm, segment: call.segment };
  const r = { ...o, op: call.op, root: call.root };
  const input = b.input as View;
  const output = b.output as View;
  const isRoot = comm.rank === call.root;
  switch (call.collective) {
    case "allreduce":
      return api.allReduce(comm, input, { ...r, output });
    case "broadcast":
      // Non-roots have no input; the output is where the data lands on every rank.
      return isRoot ? api.broadcast(comm, input, { ...r, output }) : api.broadcast(comm, output, r);
    case "reduce":
      return isRoot ? api.reduce(comm, input, { ...r, output }) : api.reduce(comm, input, r);
    case "gather":
      return api.gather(comm, input, { ...r, output: isRoot ? output : undefined });
    case "scatter":
      return api.scatter(comm, output, { ...r, input: isRoot ? input : undefined });
    case "allgather":
      return api.allGather(comm, output, input, o);
    case "reducescatter":
      return api.reduceScatter(comm, output, input, r);
    case "alltoall":
      return api.allToAll(comm, output, input, o);
    case "alltoallv":
      return api.allToAllv(comm, output, input, {
        ...o,
        inputSplits: call.sendCounts ?? [],
        outputSplits: call.recvCounts ?? [],
      });
    case "barrier":
      return api.barrier(comm, o);
  }
}
