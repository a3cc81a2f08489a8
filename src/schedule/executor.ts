/**
 * The one executor: runs any algorithm's schedule over any backend's point-to-point interface.
 * Per step it posts the transfers as one group, waits for the group, then issues the local
 * copies and reductions. It never looks at data; on a stream-ordered backend (nccl) the
 * group and the local operations only enqueue, and the host synchronises once at the end.
 *
 * avg and premulsum live here, not in algorithms: premulsum scales this rank's contribution
 * into a temporary input first; avg divides the result by the size at the end.
 */

import type { Comm, P2POp } from "../comm.js";
import { invariant } from "../core/assert.js";
import { type DataBuffer, type View, view } from "../core/buffer.js";
import { bufferSizes } from "./context.js";
import { layout, REDUCING } from "./layout.js";
import type { Algorithm, BufferName, Region, ScheduleContext } from "./types.js";

export interface Bound {
  /** The caller's input and output; absent where the layout gives this rank 0 elements. */
  readonly input?: View;
  readonly output?: View;
}

export interface ExecuteOptions {
  /** Prefix for step labels in traces, deadlock explanations and timeouts. */
  readonly label?: string;
  /** Called after each step is issued, with its index (bench uses it to time per-step host overhead). */
  readonly onStep?: (index: number) => void;
}

const EMPTY: Record<string, DataBuffer> = {};

function emptyView(comm: Comm, ctx: ScheduleContext): View {
  const key = `${comm.backend}:${ctx.dtype}`;
  EMPTY[key] ??= comm.alloc(ctx.dtype, 0);
  return view(EMPTY[key] as DataBuffer, 0, 0);
}

/**
 * Scratch is kept per communicator and dtype and grown on demand: allocating it per call left a
 * message-sized dead buffer behind every collective until the next GC (peak memory over 3x the
 * message at 64 MiB) and made every call touch fresh pages. A buffer in use by one call is never
 * handed to a concurrent one on the same comm; that call allocates its own.
 */
interface Pooled {
  buffer: DataBuffer;
  busy: boolean;
}
const scratchPools = new WeakMap<Comm, Map<string, Pooled>>();

function takeScratch(comm: Comm, ctx: ScheduleContext, count: number): { view: View; release: () => void } {
  if (count === 0) return { view: emptyView(comm, ctx), release: () => {} };
  let pool = scratchPools.get(comm);
  if (!pool) scratchPools.set(comm, (pool = new Map()));
  const have = pool.get(ctx.dtype);
  if (have?.busy) return { view: view(comm.alloc(ctx.dtype, count)), release: () => {} };
  const entry = have && have.buffer.count >= count ? have : { buffer: comm.alloc(ctx.dtype, count), busy: false };
  pool.set(ctx.dtype, entry);
  entry.busy = true;
  return { view: view(entry.buffer, 0, count), release: () => (entry.busy = false) };
}

export async function execute(
  comm: Comm,
  alg: Algorithm,
  ctx: ScheduleContext,
  bound: Bound,
  options: ExecuteOptions = {},
): Promise<void> {
  const sizes = bufferSizes(alg, ctx);
  let input = bound.input ?? emptyView(comm, ctx);
  const output = bound.output ?? emptyView(comm, ctx);
  let run = ctx;

  const { op } = ctx;
  if (op.name === "premulsum" && REDUCING.has(ctx.collective) && sizes.input > 0) {
    // Scale a copy: the caller's input stays untouched, so the schedule now runs out of place.
    const scaled = view(comm.alloc(ctx.dtype, sizes.input));
    comm.scale(scaled, input, op.scalar ?? 1, 1);
    input = scaled;
    run = { ...ctx, inPlace: false };
  }

  const { view: scratch, release } = takeScratch(comm, ctx, sizes.scratch);
  try {
    await issueSteps(comm, alg, run, { input, output, scratch }, options);
  } finally {
    release();
  }
  if (op.name === "avg" && REDUCING.has(ctx.collective)) {
    const out = layout(ctx).outputCount;
    if (out > 0) comm.scale(output, output, 1, ctx.size);
  }
}

/** Issues every step of `alg`'s schedule for `ctx` over the bound views. */
async function issueSteps(
  comm: Comm,
  alg: Algorithm,
  ctx: ScheduleContext,
  views: Record<BufferName, View>,
  options: ExecuteOptions,
): Promise<void> {
  const { op } = ctx;
  const resolve = (r: Region): View => {
    const base = views[r.buf];
    invariant(
      r.offset + r.count <= base.count,
      () => `${alg.collective}/${alg.name}: region ${r.buf}[${r.offset}:${r.offset + r.count}] exceeds ${base.count}`,
    );
    return { buffer: base.buffer, offset: base.offset + r.offset, count: r.count };
  };

  const prefix = options.label ?? `${alg.collective}/${alg.name}`;
  // Backends compare it between matched sends and receives: a rank in another call fails, naming it.
  const call = { collective: `${alg.collective}/${alg.name}`, op: ctx.op.name, root: ctx.root };
  let index = 0;
  for (const s of alg.schedule(ctx)) {
    const label = `${prefix} step ${index} (${s.label})`;
    const ops: P2POp[] = [];
    for (const t of s.transfers) {
      // Zero-length transfers carry nothing; NCCL skips them too, so every backend does.
      if (t.region.count > 0) ops.push({ kind: t.kind, peer: t.peer, view: resolve(t.region), label });
    }
    if (ops.length > 0) await comm.group(ops, { label, call });
    for (const l of s.local) {
      if (l.dst.count === 0) continue;
      if (l.kind === "copy") {
        const dst = resolve(l.dst);
        const src = resolve(l.src);
        // In place, 'copy input to output' is a copy onto itself: skip it.
        if (dst.buffer !== src.buffer || dst.offset !== src.offset) comm.copy(dst, src);
      } else {
        comm.reduceInto(resolve(l.dst), resolve(l.src), op);
      }
    }
    options.onStep?.(index);
    index++;
  }
}
