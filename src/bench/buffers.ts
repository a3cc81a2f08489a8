/**
 * The benchmark's memory, allocated once at the largest size as nccl-tests does: a send buffer
 * and a receive buffer (large enough to hold the input too, for in-place calls), with each
 * size's views carved out of them by the spec's layout — so a sweep allocates nothing per size
 * and the peak memory it reports is the algorithm's, not the sweep's.
 */

import type { Buffers } from "../collectives/dispatch.js";
import type { Comm } from "../comm.js";
import { type DataBuffer, type View, view } from "../core/buffer.js";
import type { DType } from "../core/dtype.js";
import { layoutOf } from "../specs/index.js";
import type { BenchCollective } from "./types.js";

export interface BenchMemory {
  readonly send: DataBuffer;
  readonly recv: DataBuffer;
}

function counts(collective: BenchCollective, comm: Comm, count: number, root: number) {
  return layoutOf({
    collective,
    rank: comm.rank,
    size: comm.size,
    count,
    root,
    dtype: "uint8",
    op: { name: "sum" },
    inPlace: false,
    segment: 1,
  });
}

/** Allocates this rank's buffers for counts up to maxCount. */
export function allocateMemory(
  comm: Comm,
  collective: BenchCollective,
  dtype: DType,
  maxCount: number,
  root: number,
): BenchMemory {
  const l = counts(collective, comm, maxCount, root);
  return {
    send: comm.alloc(dtype, l.inputCount),
    recv: comm.alloc(dtype, Math.max(l.inputCount, l.outputCount)),
  };
}

/** This size's input and output views: separate buffers out of place, aliased as the spec's layout says in place. */
export function viewsFor(
  mem: BenchMemory,
  comm: Comm,
  collective: BenchCollective,
  count: number,
  root: number,
  inPlace: boolean,
): Buffers {
  const l = counts(collective, comm, count, root);
  const a = inPlace ? l.alias : undefined;
  if (a) {
    const whole = view(mem.recv, 0, Math.max(l.inputCount, l.outputCount));
    const input: View =
      a.kind === "input-in-output" ? view(whole, a.offset, l.inputCount) : view(whole, 0, l.inputCount);
    const output: View =
      a.kind === "output-in-input" ? view(whole, a.offset, l.outputCount) : view(whole, 0, l.outputCount);
    return { layout: l, input, output, memory: [mem.recv] };
  }
  return {
    layout: l,
    input: view(mem.send, 0, l.inputCount),
    output: view(mem.recv, 0, l.outputCount),
    memory: [mem.send, mem.recv],
  };
}
