/**
 * The MPI backend's fast path: runs a whole compiled plan (the executor's PlanRunner) with what
 * MPI needs and nothing else, so `cclab bench` measures the algorithm and not cclab:
 *   - the plan's dataflow order exactly as the executor's (an operation starts when those it
 *     depends on are done; transfers to one peer posted in program order, so they pair as the
 *     schedule names them); zero-length transfers skipped;
 *   - receives posted at once with their known sizes (MPI_Irecv, MPI_ANY_TAG, on the comm's
 *     collective communicator), no MPI_Improbe; the tag (tag.ts) still tells a receive that its
 *     send disagrees on call, dtype or count, truncated or short, and the run fails naming both;
 *   - progress in batches: one native call tests every posted request (MPI_Testsome) for up to a
 *     short budget, and completions are handled in a loop that keeps going while transfers
 *     complete, giving the event loop a turn every millisecond so timeouts, aborts and the
 *     store's messages are never starved; sched_yield between tests when this node's ranks
 *     outnumber its cores (as Open MPI's mpi_yield_when_idle);
 *   - local copies, reductions and scalings inline, in the addon's kernels over the bound
 *     memory (reduce in NCCL's reduceCopy form, dst = a op src, no extra copy);
 *   - no Promise, closure or object per operation: the plan's arrays are read as they are.
 * A run that fails (mismatch, engine error, abort) cancels its posted receives; one that makes no
 * progress for the timeout fails with TimeoutError naming what it waits on and calls the
 * process's onAbort, as a single transfer's timeout does.
 */
import { availableParallelism } from "node:os";
import { checkHostView } from "../../checks.js";
import type { CallTag } from "../../comm.js";
import type { HostBuffer } from "../../core/buffer.js";
import { type DType, dtypeInfo, type TypedArray } from "../../core/dtype.js";
import { EngineError, TimeoutError } from "../../core/errors.js";
import { combineOf } from "../../core/op.js";
import { reduceHost, scaleHost } from "../../native/reduce.js";
import { nextToPost, release, type Scheduling, scheduling } from "../../schedule/dataflow.js";
import type { PlanRunner, PlanRunOptions, PlanViews } from "../../schedule/executor.js";
import type { Plan, PlanOp } from "../../schedule/plan.js";
import type { MpiComm } from "./comm.js";
import { ANY_TAG, countTag, encodeTag, type Received, tagMismatch } from "./tag.js";

/** How long one native progress call may spin waiting for a completion, µs. */
const BUDGET_US = 50;
/** How long the loop handles completions before the event loop gets a turn, ms. */
const SLICE_MS = 1;
/** Idle turns (no completion) before polling drops from every turn to every millisecond. */
const IDLE_TURNS = 200;

/** A run's bookkeeping, kept with the plan between calls (calls on one comm run one at a time). */
interface State {
  /** Dependencies not yet done, per operation. */
  readonly pending: Int32Array;
  readonly isReady: Uint8Array;
  /** Per posting queue, how many of its transfers are posted. */
  readonly qpos: Int32Array;
  /** Posted requests and the operation of each, compacted as they complete. */
  readonly reqs: Int32Array;
  readonly opOf: Int32Array;
}

/** What a plan needs at run time beyond itself, worked out once per plan. */
interface Prepared {
  readonly sched: Scheduling;
  /** Transfers in the plan: the most requests in flight at once. */
  readonly transfers: number;
  /** States of finished runs, reused by the next. */
  readonly spare: State[];
}
const prepared = new WeakMap<Plan, Prepared>();

function prepare(plan: Plan): Prepared {
  let p = prepared.get(plan);
  if (!p) {
    const transfers = plan.ops.filter((op) => op.kind === "send" || op.kind === "recv").length;
    // One order per peer: MPI keeps no channels apart (the checker holds schedules to that).
    p = { sched: scheduling(plan, false), transfers, spare: [] };
    prepared.set(plan, p);
  }
  return p;
}

export class MpiPlanRunner implements PlanRunner {
  /** Whether this node runs more ranks than it has cores (then spinning would starve a peer). */
  readonly yieldCpu: boolean;
  /** MPI_ERR_TRUNCATE: a receive's message was longer than its size. */
  readonly truncate: number;

  constructor(readonly comm: MpiComm) {
    const env = process.env;
    const local = Number(env.OMPI_COMM_WORLD_LOCAL_SIZE ?? env.MPI_LOCALNRANKS ?? env.SLURM_NTASKS_PER_NODE);
    this.yieldCpu = (Number.isInteger(local) && local > 0 ? local : comm.size) > availableParallelism();
    this.truncate = comm.proc.mpi.errorCodes().MPI_ERR_TRUNCATE ?? -1;
  }

  runPlan(plan: Plan, views: PlanViews, options: PlanRunOptions): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // The engine is handed these views' memory, as the per-operation path's send/recv checks.
      for (const v of Object.values(views)) {
        checkHostView(this.comm.rank, v, options.label, "view", "mpi", { shared: false });
      }
      new Run(this, plan, views, options, resolve, reject).start();
    });
  }
}

function takeState(p: Prepared, ops: number): State {
  const s = p.spare.pop();
  if (!s) {
    return {
      pending: p.sched.indeg.slice(),
      isReady: new Uint8Array(ops),
      qpos: new Int32Array(p.sched.queues.length),
      reqs: new Int32Array(p.transfers),
      opOf: new Int32Array(p.transfers),
    };
  }
  s.pending.set(p.sched.indeg);
  s.isReady.fill(0);
  s.qpos.fill(0);
  return s;
}

class Run {
  private readonly comm: MpiComm;
  private readonly prep: Prepared;
  private readonly state: State;
  private readonly ops: readonly PlanOp[];
  private readonly sched: Scheduling;
  /** Memories 0 (input), 1 (output), 2 (scratch): their elements and where the view starts. */
  private readonly data: TypedArray[];
  private readonly base: number[];
  private readonly bytes: number;
  private readonly pending: Int32Array;
  private readonly isReady: Uint8Array;
  private readonly qpos: Int32Array;
  private readonly work: number[] = [];
  private readonly reqs: Int32Array;
  private readonly opOf: Int32Array;
  private active = 0;
  private left: number;
  private settled = false;
  private idle = 0;
  private lastProgress = Date.now();
  /** What a receive's tag is checked against, one record per run (its message built only on a mismatch). */
  private readonly received: ReceivedOp;
  /** Every send's tag but its count: the dtype and the call. */
  private readonly tagBase: number;
  private readonly onAbort = () => this.fail(this.options.signal?.reason ?? new Error("aborted"));

  constructor(
    private readonly runner: MpiPlanRunner,
    private readonly plan: Plan,
    views: PlanViews,
    private readonly options: PlanRunOptions,
    private readonly resolve: () => void,
    private readonly reject: (e: unknown) => void,
  ) {
    this.comm = runner.comm;
    this.ops = plan.ops;
    const p = prepare(plan);
    this.prep = p;
    this.sched = p.sched;
    const mems = [views.input, views.output, views.scratch];
    this.data = mems.map((v) => (v.buffer as HostBuffer).data);
    this.base = mems.map((v) => v.offset);
    this.bytes = dtypeInfo(plan.call.dtype).bytes;
    this.state = takeState(p, this.ops.length);
    ({ pending: this.pending, isReady: this.isReady, qpos: this.qpos, reqs: this.reqs, opOf: this.opOf } = this.state);
    this.left = this.ops.length;
    this.received = new ReceivedOp(this, this.comm.rank, plan.call.dtype, options.call);
    this.tagBase = encodeTag(plan.call.dtype, options.call, 0, false);
  }

  start(): void {
    const signal = this.options.signal;
    if (signal?.aborted) {
      this.onAbort();
      return;
    }
    signal?.addEventListener("abort", this.onAbort, { once: true });
    for (let i = this.ops.length - 1; i >= 0; i--) if (this.pending[i] === 0) this.work.push(i);
    this.turn();
  }

  /** Runs what is ready and progresses transfers until nothing completes or the slice is used. */
  private readonly turn = (): void => {
    if (this.settled) return;
    try {
      const mpi = this.comm.proc.mpi;
      const until = performance.now() + SLICE_MS;
      for (;;) {
        this.drain();
        if (this.left === 0) {
          this.finish();
          return;
        }
        const done = mpi.progress(this.reqs.subarray(0, this.active), BUDGET_US, this.runner.yieldCpu);
        if (done.length === 0) {
          this.idle++;
          break;
        }
        this.idle = 0;
        this.lastProgress = Date.now();
        this.complete(done);
        if (this.settled) return;
        if (performance.now() >= until) break;
      }
      if (Date.now() - this.lastProgress > this.comm.proc.timeoutMs) {
        this.timeout();
        return;
      }
      if (this.idle < IDLE_TURNS) setImmediate(this.turn);
      else setTimeout(this.turn, 1);
    } catch (e) {
      this.fail(e);
    }
  };

  /** Issues every ready operation: transfers posted in their peer's program order, local ones run. */
  private drain(): void {
    const { ops, sched, work, qpos, isReady } = this;
    while (work.length > 0) {
      const i = work.pop() as number;
      const op = ops[i] as PlanOp;
      if (op.kind !== "send" && op.kind !== "recv") {
        this.local(i, op);
        this.finished(i);
        continue;
      }
      isReady[i] = 1;
      const q = sched.queueOf[i] as number;
      for (let j = nextToPost(sched, qpos, isReady, q); j >= 0; j = nextToPost(sched, qpos, isReady, q)) {
        const t = ops[j] as PlanOp;
        if (t.region.count === 0) this.finished(j);
        else this.post(j, t);
      }
    }
  }

  private post(j: number, t: PlanOp): void {
    const { comm, bytes } = this;
    const mpi = comm.proc.mpi;
    const places = this.plan.places;
    const mem = places[6 * j] as number;
    const data = this.data[mem] as TypedArray;
    const offset = ((this.base[mem] as number) + (places[6 * j + 1] as number)) * bytes;
    const n = t.region.count * bytes;
    const req =
      t.kind === "send"
        ? mpi.isend(data, offset, n, t.peer, countTag(this.tagBase, t.region.count, comm.countTags), comm.collHandle)
        : mpi.irecv(data, offset, n, t.peer, ANY_TAG, comm.collHandle);
    this.reqs[this.active] = req;
    this.opOf[this.active] = j;
    this.active++;
  }

  /** An operation is done: its successors whose dependencies are all done become ready. */
  private finished(i: number): void {
    this.left--;
    release(this.sched, this.pending, i, this.work);
  }

  /** Completions from the native progress call, 4 entries each: [position, bytes, tag, error]. */
  private complete(done: Int32Array): void {
    let error: unknown;
    const truncate = this.runner.truncate;
    for (let k = 0; k < done.length; k += 4) {
      const pos = done[k] as number;
      const j = this.opOf[pos] as number;
      this.reqs[pos] = -1;
      if (error) continue;
      const err = done[k + 3] as number;
      const op = this.ops[j] as PlanOp;
      const truncated = err !== 0 && err === truncate;
      if (err !== 0 && !truncated) {
        const mpi = this.comm.proc.mpi;
        error = new EngineError("mpi", err, mpi.errorString(err), `${this.where(j, op)}: MPI_Testsome`);
        continue;
      }
      if (op.kind === "recv") {
        const r = this.received;
        r.op = j;
        r.peer = op.peer;
        r.count = op.region.count;
        error = tagMismatch(r, done[k + 2] as number, done[k + 1] as number, truncated, this.comm.countTags);
        if (error) continue;
      }
      this.finished(j);
    }
    // Drop the completed requests (their handles are freed), keeping the others in order.
    let w = 0;
    for (let r = 0; r < this.active; r++) {
      const req = this.reqs[r] as number;
      if (req < 0) continue;
      this.reqs[w] = req;
      this.opOf[w] = this.opOf[r] as number;
      w++;
    }
    this.active = w;
    if (error) this.fail(error);
  }

  private local(i: number, op: PlanOp): void {
    const n = op.region.count;
    if (n === 0) return;
    const places = this.plan.places;
    const at = (k: number): [TypedArray, number] => {
      const mem = places[6 * i + 2 * k] as number;
      return [this.data[mem] as TypedArray, (this.base[mem] as number) + (places[6 * i + 2 * k + 1] as number)];
    };
    const [dst, d] = at(0);
    const [src, s] = at(1);
    const { dtype } = this.plan.call;
    if (op.kind === "copy") {
      // In place, 'copy input to output' is a copy onto itself: skip it (set handles overlap).
      if (dst !== src || d !== s) dst.set(src.subarray(s, s + n) as never, d);
    } else if (op.kind === "reduce") {
      const [a, ao] = op.with ? at(2) : [undefined, 0];
      reduceHost(dtype, combineOf(this.plan.call.op), dst, d, src, s, n, a, ao);
    } else scaleHost(dtype, dst, d, src, s, n, op.mul ?? 1, op.div ?? 1);
  }

  opAt(j: number): PlanOp {
    return this.ops[j] as PlanOp;
  }

  where(j: number, op: PlanOp): string {
    const step = this.plan.steps[op.step]?.label ?? "";
    const dir = op.kind === "send" ? "to" : "from";
    return `rank ${this.comm.rank}: ${op.kind} ${dir} peer ${op.peer} (${this.options.label} step ${op.step} (${step}), operation ${j})`;
  }

  private timeout(): void {
    const ms = this.comm.proc.timeoutMs;
    const waits = Array.from(this.opOf.subarray(0, Math.min(this.active, 4)), (j) => {
      const op = this.ops[j] as PlanOp;
      return `${this.where(j, op)} of ${op.region.count} x ${this.plan.call.dtype}`;
    });
    const more = this.active > 4 ? `, and ${this.active - 4} more` : "";
    const e = new TimeoutError(
      `rank ${this.comm.rank}: ${this.options.label}: no transfer completed within ${ms} ms; waiting on ${waits.join("; ")}${more}`,
    );
    this.fail(e);
    this.comm.proc.onAbort(e);
  }

  private finish(): void {
    this.settled = true;
    this.options.signal?.removeEventListener("abort", this.onAbort);
    this.prep.spare.push(this.state);
    this.resolve();
  }

  /**
   * Fails the run: its posted receives are cancelled (MPI_Cancel + MPI_Wait), so nothing lands
   * in the caller's memory later; sends are left to MPI (cancelling a send is not reliable).
   */
  private fail(e: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.options.signal?.removeEventListener("abort", this.onAbort);
    const mpi = this.comm.proc.mpi;
    for (let r = 0; r < this.active; r++) {
      if ((this.ops[this.opOf[r] as number] as PlanOp).kind !== "recv") continue;
      try {
        mpi.cancel(this.reqs[r] as number);
      } catch {
        // A failed cancel leaves the request to MPI; the run fails either way.
      }
    }
    this.active = 0;
    this.prep.spare.push(this.state);
    this.reject(e);
  }
}

/** tag.ts's Received for the receive just completed; `where` is worked out only when a message needs it. */
class ReceivedOp implements Received {
  op = 0;
  peer = 0;
  count = 0;
  constructor(
    private readonly run: Run,
    readonly rank: number,
    readonly dtype: DType,
    readonly call: CallTag,
  ) {}
  get where(): string {
    return this.run.where(this.op, this.run.opAt(this.op));
  }
}
