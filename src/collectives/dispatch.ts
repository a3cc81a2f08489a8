/**
 * Any collective with buffers laid out as its spec says, in or out of place: the property tests,
 * `cclab verify`, the MPI/NCCL differential tests and `cclab bench` all build buffers here and
 * run through the front API (so validation and 'auto' apply as for users).
 */
import type { Comm } from "../comm.js";
import { type DataBuffer, type View, view } from "../core/buffer.js";
import type { Algorithm } from "../schedule/dsl.js";
import { layoutOf } from "../specs/index.js";
import type { Layout, RankCall } from "../specs/types.js";
import { runCollective } from "./api.js";

export interface Buffers {
  readonly layout: Layout;
  readonly input?: View;
  readonly output?: View;
  /** The memory holding both where they alias in place. */
  readonly memory: DataBuffer[];
}

/** Allocates this rank's buffers for a call (one shared buffer where in place aliases them). */
export function allocate(comm: Comm, c: RankCall): Buffers {
  const l = layoutOf(c);
  const a = c.inPlace ? l.alias : undefined;
  if (a) {
    const mem = comm.alloc(c.dtype, Math.max(l.inputCount, l.outputCount));
    const whole = view(mem);
    const input = a.kind === "input-in-output" ? view(whole, a.offset, l.inputCount) : view(whole, 0, l.inputCount);
    const output = a.kind === "output-in-input" ? view(whole, a.offset, l.outputCount) : view(whole, 0, l.outputCount);
    return { layout: l, input, output, memory: [mem] };
  }
  const inMem = comm.alloc(c.dtype, l.inputCount);
  const outMem = comm.alloc(c.dtype, l.outputCount);
  return { layout: l, input: view(inMem), output: view(outMem), memory: [inMem, outMem] };
}

/** Runs the call's collective with `algorithm` on the buffers `allocate` made. */
export function invoke(comm: Comm, c: RankCall, algorithm: string | Algorithm, b: Buffers): Promise<void> {
  return invoker(comm, c, algorithm, b)();
}

/**
 * invoke() as a function to call again and again (bench's timed calls): its arguments made
 * once, so a call allocates nothing here.
 */
export function invoker(comm: Comm, c: RankCall, algorithm: string | Algorithm, b: Buffers): () => Promise<void> {
  const buffers = { input: b.input, output: b.output };
  const options = { algorithm, segment: c.segment };
  return () => runCollective(comm, c, buffers, options);
}
