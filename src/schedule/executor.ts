/**
 * The executor: the plan runner of every engine without one of its own. It runs a compiled plan
 * (plan.ts) over any backend's point-to-point interface, as dataflow; an engine that runs whole
 * plans itself (MPI's, src/backends/mpi/plan-runner.ts) offers a PlanRunner, which the front API
 * calls directly (the interpreter, interpret.ts, walks plans without data). An operation is
 * issued as soon as the operations it depends on are done; sends and receives to one peer are
 * posted in program order (per channel where the backend keeps channels apart), so they match as
 * the schedule names them. It never looks at data: on a stream-ordered
 * backend the transfers and local operations only enqueue.
 *
 * Everything ready at one moment is posted as one burst before anything is waited on, so a
 * step's send and receive reach the engine together (one MPI progress pass). A stream-ordered
 * backend (nccl) gets the plan in program order instead, step by step, each step's transfers as
 * one group: reordering there would block its stream on a transfer enqueued too early.
 * Zero-length transfers carry nothing; NCCL skips them too, so every backend does.
 *
 * Scratch is kept per communicator and dtype and grown on demand: allocating it per call left a
 * message-sized dead buffer behind every collective until the next GC. A buffer in use by one call
 * is never handed to a concurrent one on the same comm; that call allocates its own.
 */
import type { CallTag, Comm, P2POp, Work } from "../comm.js";
import { invariant } from "../core/assert.js";
import { type DataBuffer, type View, view } from "../core/buffer.js";
import type { DType } from "../core/dtype.js";
import { nextToPost, release, scheduling } from "./dataflow.js";
import type { BufferName, Region } from "./dsl.js";
import { callTag, type Plan, type PlanOp } from "./plan.js";

export interface Bound {
  /** The caller's input and output; absent where the layout gives this rank 0 elements. */
  readonly input?: View;
  readonly output?: View;
}

export interface PlanRunOptions {
  /** Prefix for step labels in errors; default the plan's `collective/algorithm`. */
  readonly label?: string;
  /** Aborts the run: pending transfers are cancelled and the promise rejects with the reason. */
  readonly signal?: AbortSignal;
}

/**
 * One engine's runner of whole plans, instead of one Comm call per operation: the MPI backend's
 * (src/backends/mpi/plan-runner.ts), with the same meaning as execute() here: the dataflow order,
 * per-peer program order, zero-length transfers skipped, local operations as here, every
 * transfer tagged with callTag(plan) (plan.ts). It binds the caller's views and its own scratch
 * itself, so the front API hands it a call directly. A Comm offers one as `planRunner`; layers
 * that must see every operation (tracing, faults) offer none, and execute() runs the plan
 * through their p2p calls.
 */
export interface PlanRunner {
  /** The run's promise, or SETTLED itself where the whole run completed before returning. */
  runPlan(plan: Plan, bound: Bound, options: PlanRunOptions): Promise<void>;
}

/**
 * The one promise a PlanRunner (and execute, and the front API) returns for a call that completed
 * before it returned: a small call whose transfers complete while the runner spins allocates no
 * promise and chains no callbacks (issue 26's per-call cost). Already resolved; never rejects.
 */
export const SETTLED: Promise<void> = Promise.resolve();

export function planRunnerOf(comm: Comm): PlanRunner | undefined {
  return (comm as { readonly planRunner?: PlanRunner }).planRunner;
}

interface Pooled {
  buffer: DataBuffer;
  busy: boolean;
  /** The last view handed out, reused while calls ask for the same count (a view is immutable). */
  last?: View;
  /** Hands the buffer back when a run ends either way (made once, not per call). */
  readonly done: () => void;
  readonly failed: (e: unknown) => never;
}
const scratchPools = new WeakMap<Comm, Map<DType, Pooled>>();
const empties = new WeakMap<Comm, Map<DType, View>>();

function emptyView(comm: Comm, dtype: DType): View {
  let m = empties.get(comm);
  if (!m) empties.set(comm, (m = new Map()));
  let v = m.get(dtype);
  if (!v) m.set(dtype, (v = view(comm.alloc(dtype, 0), 0, 0)));
  return v;
}

function pooled(buffer: DataBuffer): Pooled {
  const entry: Pooled = {
    buffer,
    busy: false,
    done: () => {
      entry.busy = false;
    },
    failed: (e) => {
      entry.busy = false;
      throw e;
    },
  };
  return entry;
}

/** The comm's pooled scratch for the dtype, at least `count` elements, marked busy; undefined where a concurrent call holds it. */
function takeScratch(comm: Comm, dtype: DType, count: number): Pooled | undefined {
  let pool = scratchPools.get(comm);
  if (!pool) scratchPools.set(comm, (pool = new Map()));
  const have = pool.get(dtype);
  if (have?.busy) return undefined;
  const entry = have && have.buffer.count >= count ? have : pooled(comm.alloc(dtype, count));
  if (entry !== have) pool.set(dtype, entry);
  entry.busy = true;
  return entry;
}

/** `count` elements of a pooled scratch buffer (the view of the call before when it asked for as many). */
function scratchView(entry: Pooled, count: number): View {
  const last = entry.last;
  if (last && last.count === count && last.buffer === entry.buffer) return last;
  return (entry.last = view(entry.buffer, 0, count));
}

/**
 * Runs rank plan.call.rank's plan over `comm` with the caller's buffers bound: by the comm's own
 * plan runner where it has one (MPI's), else as dataflow through its p2p calls. Never throws: a
 * failure rejects.
 */
export function execute(comm: Comm, plan: Plan, bound: Bound, options: PlanRunOptions = {}): Promise<void> {
  if (plan.ops.length === 0) return SETTLED;
  const runner = comm.streamOrdered ? undefined : planRunnerOf(comm);
  if (runner) {
    try {
      return runner.runPlan(plan, bound, options);
    } catch (e) {
      return Promise.reject(e);
    }
  }
  const { dtype } = plan.call;
  const entry = plan.scratch > 0 ? takeScratch(comm, dtype, plan.scratch) : undefined;
  try {
    const views: Record<BufferName, View> = {
      input: bound.input ?? emptyView(comm, dtype),
      output: bound.output ?? emptyView(comm, dtype),
      scratch:
        plan.scratch === 0
          ? emptyView(comm, dtype)
          : entry
            ? scratchView(entry, plan.scratch)
            : view(comm.alloc(dtype, plan.scratch)),
    };
    const label = options.label ?? `${plan.alg.collective}/${plan.alg.name}`;
    const running = (comm.streamOrdered ? inOrder : run)(comm, plan, views, label, callTag(plan));
    return entry ? running.then(entry.done, entry.failed) : running;
  } catch (e) {
    entry?.done();
    return Promise.reject(e);
  }
}

/** A local operation of a plan, on the bound views. */
function local(comm: Comm, plan: Plan, op: PlanOp, resolve: (r: Region) => View, prefix: string): void {
  if (op.region.count === 0) return;
  const dst = resolve(op.region);
  const src = resolve(op.src as Region);
  switch (op.kind) {
    case "copy":
      // In place, 'copy input to output' is a copy onto itself: skip it.
      if (dst.buffer !== src.buffer || dst.offset !== src.offset) comm.copy(dst, src);
      break;
    case "scale":
      comm.scale(dst, src, op.mul ?? 1, op.div ?? 1);
      break;
    case "reduce": {
      // dst <- a (op) src, a being dst itself unless the step names another operand.
      comm.reduceInto(dst, src, plan.call.op, op.with ? resolve(op.with) : undefined);
      break;
    }
    default:
      invariant(false, `${prefix}: ${op.kind} is not a local operation`);
  }
}

function resolver(views: Record<BufferName, View>, prefix: string): (r: Region) => View {
  return (r) => {
    const base = views[r.buf];
    invariant(
      r.offset + r.count <= base.count,
      () => `${prefix}: region ${r.buf}[${r.offset}:+${r.count}] exceeds ${base.count}`,
    );
    return { buffer: base.buffer, offset: base.offset + r.offset, count: r.count };
  };
}

export const stepLabel = (plan: Plan, prefix: string, step: number) =>
  `${prefix} step ${step} (${plan.steps[step]?.label ?? ""})`;

/** Program order, step by step: each step's transfers as one group, then its local operations. */
async function inOrder(
  comm: Comm,
  plan: Plan,
  views: Record<BufferName, View>,
  prefix: string,
  call: CallTag,
): Promise<void> {
  const resolve = resolver(views, prefix);
  const { ops } = plan;
  for (let i = 0; i < ops.length; ) {
    const step = (ops[i] as PlanOp).step;
    let j = i;
    while (j < ops.length && (ops[j] as PlanOp).step === step) j++;
    const label = stepLabel(plan, prefix, step);
    const group: P2POp[] = [];
    for (let k = i; k < j; k++) {
      const op = ops[k] as PlanOp;
      if ((op.kind === "send" || op.kind === "recv") && op.region.count > 0) {
        group.push({ kind: op.kind, peer: op.peer, view: resolve(op.region), label });
      }
    }
    if (group.length > 0) await comm.group(group, { label, call });
    for (let k = i; k < j; k++) {
      const op = ops[k] as PlanOp;
      if (op.kind !== "send" && op.kind !== "recv") local(comm, plan, op, resolve, prefix);
    }
    i = j;
  }
}

function run(comm: Comm, plan: Plan, views: Record<BufferName, View>, prefix: string, call: CallTag): Promise<void> {
  const { ops } = plan;
  const sched = scheduling(plan, comm.channels === true);
  const pending = sched.indeg.slice();
  const isReady = new Uint8Array(ops.length);
  const qpos = new Int32Array(sched.queues.length);
  const resolve = resolver(views, prefix);
  const labels = new Map<number, string>();
  const labelOf = (step: number): string => {
    let l = labels.get(step);
    if (l === undefined) labels.set(step, (l = stepLabel(plan, prefix, step)));
    return l;
  };

  return new Promise<void>((done, fail) => {
    let left = ops.length;
    let settled = false;
    const work: number[] = [];
    const posted: [number, Work][] = [];

    /** Runs everything that can run now; transfers are posted, their waits attached after the burst. */
    const drain = () => {
      while (work.length > 0) {
        const i = work.pop() as number;
        const op = ops[i] as PlanOp;
        if (op.kind === "send" || op.kind === "recv") {
          isReady[i] = 1;
          const q = sched.queueOf[i] as number;
          for (let j = nextToPost(sched, qpos, isReady, q); j >= 0; j = nextToPost(sched, qpos, isReady, q)) {
            const t = ops[j] as PlanOp;
            if (t.region.count === 0) {
              finished(j);
              continue;
            }
            const o = { label: labelOf(t.step), channel: t.channel, call };
            const v = resolve(t.region);
            posted.push([j, t.kind === "send" ? comm.isend(v, t.peer, o) : comm.irecv(v, t.peer, o)]);
          }
        } else {
          local(comm, plan, op, resolve, prefix);
          finished(i);
        }
      }
    };

    const finished = (i: number) => {
      left--;
      release(sched, pending, i, work);
    };

    const step = () => {
      try {
        drain();
        const batch = posted.splice(0);
        for (const [j, w] of batch) {
          w.wait().then(
            () => {
              if (settled) return;
              finished(j);
              step();
            },
            (e) => {
              if (!settled) {
                settled = true;
                fail(e);
              }
            },
          );
        }
        if (left === 0 && !settled) {
          settled = true;
          done();
        }
      } catch (e) {
        if (!settled) {
          settled = true;
          fail(e);
        }
      }
    };

    for (let i = 0; i < ops.length; i++) if (pending[i] === 0) work.push(i);
    work.reverse(); // pop() then takes them in program order
    step();
  });
}
