/**
 * The MPI backend's fast path: runs a whole compiled plan (the executor's PlanRunner) with what
 * MPI needs and nothing else, so `cclab bench` measures the algorithm and not cclab:
 *   - the plan's dataflow order exactly as the executor's (an operation starts when those it
 *     depends on are done; transfers to one peer posted in program order, so they pair as the
 *     schedule names them); zero-length transfers skipped;
 *   - receives posted at once with their known sizes (MPI_Irecv, MPI_ANY_TAG, on the comm's
 *     collective communicator), no MPI_Improbe; the tag (tag.ts) still tells a receive that its
 *     send disagrees on call, dtype or count, truncated or short, and the run fails naming both;
 *   - progress through the backend's one loop (progress.ts): one native call (runProgress, over
 *     the run's arrays bound in the addon once) posts the transfers made ready and tests every
 *     posted request (MPI_Testsome) for up to a short budget, returning once a completion can
 *     release work; completions are handled while transfers complete, the event loop gets a turn
 *     at least every millisecond, and a wait that stays idle spins, then yields (ranks
 *     outnumbering cores), then sleeps in growing steps;
 *   - local copies, reductions and scalings inline, in the addon's kernels over the bound
 *     memory (reduce in NCCL's reduceCopy form, dst = a op src, no extra copy);
 *   - nothing allocated per call: a run's state (dependency counters, request and completion
 *     arrays the native progress call fills) is kept per comm and plan and reused by that comm's
 *     next call of the plan; the plan's arrays are read as they are. A call is driven at once,
 *     inside runPlan: one whose transfers all complete in that first turn returns the executor's
 *     SETTLED (no Promise made, no callback chained); a longer one gets a Promise.
 * A run that fails (mismatch, engine error, abort) cancels its posted receives; one that makes no
 * progress for the timeout fails with TimeoutError naming what it waits on and calls the
 * process's onAbort, as a single transfer's timeout does.
 */
import { checkHostView } from "../../checks.js";
import type { CallTag } from "../../comm.js";
import { type DataBuffer, type HostBuffer, isHostBuffer, type View } from "../../core/buffer.js";
import { type DType, dtypeInfo, type TypedArray } from "../../core/dtype.js";
import { EngineError, TimeoutError } from "../../core/errors.js";
import { combineOf } from "../../core/op.js";
import { toEngineError } from "../../native/load.js";
import { scaleHost } from "../../native/reduce.js";
import { CTRL, DESC, DESC_RECV, DESC_SEND } from "../../native/run-layout.js";
import type { NativeMpi, NativeRun } from "../../native/types.js";
import { nextToPost, release, type Scheduling, scheduling } from "../../schedule/dataflow.js";
import { type PlanRunner, type PlanRunOptions, type PlanViews, SETTLED } from "../../schedule/executor.js";
import type { Plan, PlanOp } from "../../schedule/plan.js";
import { type Driven, ProgressLoop, ranksOutnumberCores } from "./progress.js";
import { ANY_TAG, countTag, encodeTag, type Received, tagMismatch } from "./tag.js";

/**
 * What the fast path needs of its comm (MpiComm is the one): an interface here, so comm.ts, which
 * makes its runner, and plan-runner.ts do not import each other.
 */
export interface RunnerComm {
  readonly rank: number;
  readonly size: number;
  /** The MPI communicator of the comm's collectives. */
  readonly collHandle: number;
  /** Whether tags carry counts (tag.ts). */
  readonly countTags: boolean;
  readonly proc: {
    readonly mpi: NativeMpi;
    readonly timeoutMs: number;
    onAbort(error: Error): void;
  };
}

/** What a plan needs at run time beyond itself, worked out once per plan. */
interface Prepared {
  readonly sched: Scheduling;
  /** Transfers in the plan: the most requests in flight at once. */
  readonly transfers: number;
}
const prepared = new WeakMap<Plan, Prepared>();

function prepare(plan: Plan): Prepared {
  let p = prepared.get(plan);
  if (!p) {
    const transfers = plan.ops.filter((op) => op.kind === "send" || op.kind === "recv").length;
    // One order per peer: MPI keeps no channels apart (the checker holds schedules to that).
    p = { sched: scheduling(plan, false), transfers };
    prepared.set(plan, p);
  }
  return p;
}

export class MpiPlanRunner implements PlanRunner {
  /** Whether this node runs more ranks than it has cores (then spinning would starve a peer). */
  readonly yieldCpu: boolean;
  /** MPI_ERR_TRUNCATE: a receive's message was longer than its size. */
  readonly truncate: number;
  /**
   * Runs not in use, per plan, reused by this comm's next call of that plan (a plan is shared by
   * every comm of its shape; a run belongs to one comm; calls on one comm may overlap).
   */
  private readonly spare = new WeakMap<Plan, Run[]>();
  /** Runs made so far: a repeated call of one shape makes none (test/fixtures/mpi/plan.ts counts). */
  runsMade = 0;

  constructor(readonly comm: RunnerComm) {
    this.yieldCpu = ranksOutnumberCores(comm.size);
    this.truncate = comm.proc.mpi.errorCodes().MPI_ERR_TRUNCATE ?? -1;
  }

  /**
   * Starts the run and drives it at once: where every transfer completes within that first turn
   * (a small call whose peer is there), the call is over before this returns and the answer is
   * the executor's SETTLED, with no promise made; otherwise a promise the run settles later.
   */
  runPlan(plan: Plan, views: PlanViews, options: PlanRunOptions): Promise<void> {
    try {
      // The engine is handed these views' memory, as the per-operation path's send/recv checks.
      const { input, output, scratch } = views;
      const c = this.checked;
      // A buffer's memory never changes (HostBuffer.data is readonly): the last three passed are not checked again.
      if (input.buffer !== c[0] && input.buffer !== c[1] && input.buffer !== c[2]) this.check(input, options.label);
      if (output.buffer !== c[0] && output.buffer !== c[1] && output.buffer !== c[2]) this.check(output, options.label);
      if (scratch.buffer !== c[0] && scratch.buffer !== c[1] && scratch.buffer !== c[2])
        this.check(scratch, options.label);
    } catch (e) {
      return Promise.reject(e);
    }
    let spare = this.spare.get(plan);
    if (!spare) this.spare.set(plan, (spare = []));
    let run = spare.pop();
    if (!run) {
      run = new Run(this, plan, prepare(plan), spare);
      this.runsMade++;
    }
    return run.start(views, options);
  }

  /** The buffers checkHandedView last passed, newest first. */
  private readonly checked: (DataBuffer | undefined)[] = [undefined, undefined, undefined];

  private check(v: View, label: string): void {
    checkHandedView(this.comm.rank, v, label);
    const c = this.checked;
    c[2] = c[1];
    c[1] = c[0];
    c[0] = v.buffer;
  }
}

/**
 * When a run's native wait may return, over its `active` transfers in flight (opOf: their
 * operations): as soon as one completes whose completion alone releases an operation (a
 * successor waiting on it alone: its wake byte), or once two have completed where two in flight
 * can release one together (an operation waiting on both, as an in-place step's reduction on its
 * send and receive), or else once every one has (nothing can be released sooner). A step's send
 * that completes at once (eager) then does not bring the wait back to JavaScript for nothing
 * while its receive is on the way. Past 16 transfers in flight the scan is not made: every
 * completion returns. Writes wake[0 .. active), ctrl's minDone and useWake; leaves
 * inFlight (per operation, zero between calls) all zero.
 */
export function waitRule(
  active: number,
  opOf: Int32Array,
  pending: Int32Array,
  sched: Pick<Scheduling, "succStart" | "succ">,
  wake: Uint8Array,
  inFlight: Int32Array,
  ctrl: Float64Array,
): void {
  if (active < 2 || active > 16) {
    ctrl[CTRL.minDone] = 1;
    ctrl[CTRL.useWake] = 0;
    return;
  }
  const { succStart, succ } = sched;
  let any = false;
  let joint = false;
  for (let r = 0; r < active; r++) {
    const j = opOf[r] as number;
    let w = 0;
    for (let k = succStart[j] as number; k < (succStart[j + 1] as number); k++) {
      const x = succ[k] as number;
      const p = pending[x] as number;
      if (p === 1) w = 1;
      else if (++(inFlight[x] as number) >= p) joint = true;
    }
    wake[r] = w;
    if (w) any = true;
  }
  for (let r = 0; r < active; r++) {
    const j = opOf[r] as number;
    for (let k = succStart[j] as number; k < (succStart[j + 1] as number); k++) inFlight[succ[k] as number] = 0;
  }
  ctrl[CTRL.minDone] = joint ? 2 : active;
  ctrl[CTRL.useWake] = any ? 1 : 0;
}

/**
 * The memories of sends that failed runs left to MPI (cancelling a send is not reliable): the
 * native progress call's posts do not keep their memory alive as isend's handles do, so these
 * are held here for the life of the process (a failed run is rare; each adds one entry).
 */
const stranded: TypedArray[] = [];

/** Host memory of an ordinary ArrayBuffer, or checkHostView's error naming why not. */
function checkHandedView(rank: number, v: View, label: string): void {
  const b = v.buffer;
  if (!isHostBuffer(b) || !(b.data.buffer instanceof ArrayBuffer)) {
    checkHostView(rank, v, label, "view", "mpi", { shared: false });
  }
}

/**
 * One run of a plan at a time: the dependency counters, per-peer posting positions, posted
 * requests and the native progress call's completions, made once and reset per call.
 */
class Run implements Driven {
  private readonly comm: RunnerComm;
  /** The backend's progress loop, driving this run's calls one after another. */
  private readonly loop: ProgressLoop;
  private readonly ops: readonly PlanOp[];
  private readonly places: Int32Array;
  private readonly sched: Scheduling;
  private readonly bytes: number;
  /**
   * The addon's code for this plan's reductions (localReduce): one Node-API call with the
   * kernel's code costs ~60 ns where reduce() by name costs ~250 ns (1 KiB, float32).
   */
  private readonly reduceCode: number;
  /** Dependencies not yet done, per operation. */
  private readonly pending: Int32Array;
  private readonly isReady: Uint8Array;
  /** Per posting queue, how many of its transfers are posted. */
  private readonly qpos: Int32Array;
  /** Posted requests and the operation of each, compacted as they complete. */
  private readonly reqs: Int32Array;
  private readonly opOf: Int32Array;
  /** The native progress call's completions, 4 entries each. */
  private readonly done: Int32Array;
  /**
   * Transfers ready but not yet posted, 6 entries each (native progress's posts): the next
   * progress call posts them and tests them in the same crossing. Their requests sit at the end
   * of `reqs` (-1 until posted), so `active` counts them.
   */
  private readonly desc: Float64Array;
  private posts = 0;
  /** Per request position, 1 where its completion alone releases work (runProgress returns then). */
  private readonly wake: Uint8Array;
  /**
   * A native call's numbers: [count, posts, budgetUs, yieldCpu, sleepUs, minDone, useWake], then
   * per memory the bytes [lo, hi) of its buffer that posts may touch (its array, set by use()).
   */
  private readonly ctrl = new Float64Array(CTRL.length);
  /** Per operation, how many of its pending dependencies are transfers in flight (wanted()'s, 0 between calls). */
  private readonly inFlight: Int32Array;
  /** The run's arrays as the addon holds them. */
  private readonly bound: NativeRun;
  /** Operations ready to issue. */
  private readonly work: number[] = [];
  /** Operations ready at the start (no dependencies), last first as `work` pops them. */
  private readonly roots: Int32Array;
  /** What a receive's tag is checked against (its message built only on a mismatch). */
  private readonly received: ReceivedOp;
  // Per call: memories 0 (input), 1 (output), 2 (scratch), their elements and where the view starts.
  private readonly data: TypedArray[] = [];
  private readonly base = [0, 0, 0];
  /** The memories' ArrayBuffers (what the addon is handed) and where each array starts in its buffer, in elements. */
  private readonly bufs: ArrayBuffer[] = [];
  private readonly shift = [0, 0, 0];
  private options!: PlanRunOptions;
  /** The promise's settlers, once the run outlives its first turn (start() made the promise). */
  private resolve: (() => void) | undefined;
  private reject: ((e: unknown) => void) | undefined;
  /** How a run settled before start() returned: 1 done, 2 failed (with `error`); 0 while it runs. */
  private early = 0;
  private error: unknown;
  private readonly attach = (resolve: () => void, reject: (e: unknown) => void): void => {
    this.resolve = resolve;
    this.reject = reject;
  };
  /** Every send's tag but its count: the dtype and the call. */
  private tagBase = 0;
  private active = 0;
  private left = 0;
  private settled = true;
  private readonly onAbort = () => this.fail(this.options.signal?.reason ?? new Error("aborted"));

  constructor(
    private readonly runner: MpiPlanRunner,
    private readonly plan: Plan,
    prep: Prepared,
    /** Where this run goes back when its call ends. */
    private readonly spare: Run[],
  ) {
    this.comm = runner.comm;
    this.ops = plan.ops;
    this.places = plan.places;
    this.sched = prep.sched;
    this.bytes = dtypeInfo(plan.call.dtype).bytes;
    this.reduceCode = this.comm.proc.mpi.reduceCode(plan.call.dtype, combineOf(plan.call.op));
    const m = this.ops.length;
    this.pending = new Int32Array(m);
    this.isReady = new Uint8Array(m);
    this.qpos = new Int32Array(this.sched.queues.length);
    this.reqs = new Int32Array(prep.transfers);
    this.opOf = new Int32Array(prep.transfers);
    this.done = new Int32Array(4 * prep.transfers);
    this.desc = new Float64Array(DESC.stride * prep.transfers);
    this.wake = new Uint8Array(prep.transfers);
    this.inFlight = new Int32Array(m);
    this.bound = this.comm.proc.mpi.runBind(
      this.reqs,
      this.done,
      this.desc,
      this.wake,
      this.ctrl,
      this.comm.collHandle,
    );
    const roots: number[] = [];
    for (let i = m - 1; i >= 0; i--) if (this.sched.indeg[i] === 0) roots.push(i);
    this.roots = Int32Array.from(roots);
    this.received = new ReceivedOp(this, this.comm.rank, plan.call.dtype);
    this.loop = new ProgressLoop(this, runner.yieldCpu);
  }

  /** Starts a call and gives it its first turn: SETTLED if that finished it, else the call's promise. */
  start(views: PlanViews, options: PlanRunOptions): Promise<void> {
    this.options = options;
    this.resolve = undefined;
    this.reject = undefined;
    this.early = 0;
    this.settled = false;
    this.use(0, (views.input.buffer as HostBuffer).data);
    this.use(1, (views.output.buffer as HostBuffer).data);
    this.use(2, (views.scratch.buffer as HostBuffer).data);
    this.base[0] = views.input.offset;
    this.base[1] = views.output.offset;
    this.base[2] = views.scratch.offset;
    if (options.call !== this.received.call) {
      // One CallTag object per plan (the executor's): worked out again only when it changes.
      this.tagBase = encodeTag(this.plan.call.dtype, options.call, 0, false);
      this.received.call = options.call;
    }
    // Element by element: a small plan's few counters cost less than the builtins' calls.
    const { pending, isReady, qpos } = this;
    const indeg = this.sched.indeg;
    for (let k = 0; k < pending.length; k++) {
      pending[k] = indeg[k] as number;
      isReady[k] = 0;
    }
    for (let k = 0; k < qpos.length; k++) qpos[k] = 0;
    this.active = 0;
    this.posts = 0;
    this.left = this.ops.length;
    const signal = options.signal;
    if (signal?.aborted) this.onAbort();
    else {
      signal?.addEventListener("abort", this.onAbort, { once: true });
      const work = this.work;
      if (work.length > 0) work.length = 0;
      for (let k = 0; k < this.roots.length; k++) work.push(this.roots[k] as number);
      this.loop.start();
    }
    if (this.early === 1) return SETTLED;
    if (this.early === 2) {
      const e = this.error;
      this.error = undefined;
      return Promise.reject(e);
    }
    return new Promise<void>(this.attach);
  }

  /** Memory k of this call is `data` (runPlan checked it lies in an ordinary ArrayBuffer). */
  private use(k: number, data: TypedArray): void {
    if (this.data[k] === data) return;
    this.data[k] = data;
    this.bufs[k] = data.buffer as ArrayBuffer;
    this.shift[k] = data.byteOffset / this.bytes;
    this.ctrl[CTRL.memLo + 2 * k] = data.byteOffset;
    this.ctrl[CTRL.memLo + 2 * k + 1] = data.byteOffset + data.byteLength;
  }

  /** One pass of the loop: issues what is ready, then tests the posted transfers (progress.ts's Driven). */
  pump(budgetUs: number, yieldCpu: boolean, sleepUs: number): number {
    if (this.settled) return -1;
    this.drain();
    if (this.left === 0) {
      this.finish();
      return -1;
    }
    const done = this.progress(budgetUs, yieldCpu, sleepUs);
    if (done > 0) this.complete(done);
    return this.settled ? -1 : done;
  }

  /** One native progress call: posts the transfers drain() queued, then tests every posted request. */
  private progress(budgetUs: number, yieldCpu: boolean, sleepUs: number): number {
    const { posts, bufs, ctrl } = this;
    this.posts = 0;
    ctrl[CTRL.count] = this.active - posts;
    ctrl[CTRL.posts] = posts;
    ctrl[CTRL.budgetUs] = budgetUs;
    ctrl[CTRL.yieldCpu] = yieldCpu ? 1 : 0;
    ctrl[CTRL.sleepUs] = sleepUs;
    this.wanted();
    try {
      return this.comm.proc.mpi.runProgress(
        this.bound,
        bufs[0] as ArrayBuffer,
        bufs[1] as ArrayBuffer,
        bufs[2] as ArrayBuffer,
      );
    } catch (e) {
      // MPI's own errors (a post's MPI_Isend/MPI_Irecv, MPI_Testsome) as EngineError naming the rank and call.
      throw toEngineError(e, `rank ${this.comm.rank}: ${this.options.label}`);
    }
  }

  /** Sets when the native call may return: waitRule over the transfers in flight. */
  private wanted(): void {
    waitRule(this.active, this.opOf, this.pending, this.sched, this.wake, this.inFlight, this.ctrl);
  }

  /** No completion for the comm's timeout: the run fails naming what it waits on. */
  idle(idleMs: number): boolean {
    if (idleMs <= this.comm.proc.timeoutMs) return false;
    this.timeout();
    return true;
  }

  /** Issues every ready operation: transfers posted in their peer's program order, local ones run. */
  private drain(): void {
    const { ops, sched, work, qpos, isReady } = this;
    while (work.length > 0) {
      const i = work.pop() as number;
      const op = ops[i] as PlanOp;
      if (op.kind !== "send" && op.kind !== "recv") {
        // Transfers made ready before this local operation reach MPI before it runs (a send
        // is not held back by a reduction it does not wait for).
        if (this.posts > 0) {
          const done = this.progress(0, false, 0);
          if (done > 0) this.complete(done);
          if (this.settled) return;
        }
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

  /** Queues transfer j for the next progress call to post (its request -1 until then). */
  private post(j: number, t: PlanOp): void {
    const { comm, bytes, places, desc } = this;
    const mem = places[6 * j] as number;
    const k = DESC.stride * this.posts;
    const send = t.kind === "send";
    desc[k + DESC.kind] = send ? DESC_SEND : DESC_RECV;
    desc[k + DESC.mem] = mem;
    desc[k + DESC.offset] =
      ((this.base[mem] as number) + (this.shift[mem] as number) + (places[6 * j + 1] as number)) * bytes;
    desc[k + DESC.bytes] = t.region.count * bytes;
    desc[k + DESC.peer] = t.peer;
    desc[k + DESC.tag] = send ? countTag(this.tagBase, t.region.count, comm.countTags) : ANY_TAG;
    this.reqs[this.active] = -1;
    this.opOf[this.active] = j;
    this.active++;
    this.posts++;
  }

  /** An operation is done: its successors whose dependencies are all done become ready. */
  private finished(i: number): void {
    this.left--;
    release(this.sched, this.pending, i, this.work);
  }

  /** `count` completions from the native progress call, 4 entries each: [position, bytes, tag, error]. */
  private complete(count: number): void {
    let error: unknown;
    const { truncate } = this.runner;
    const done = this.done;
    for (let k = 0; k < 4 * count; k += 4) {
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
      // A receive whose message carries exactly the tag and size its send would give it matches;
      // anything else goes through tagMismatch, which accepts or names the difference.
      const count = op.region.count;
      const countTags = this.comm.countTags;
      if (
        op.kind === "recv" &&
        (truncated || done[k + 1] !== count * this.bytes || done[k + 2] !== countTag(this.tagBase, count, countTags))
      ) {
        const r = this.received;
        r.op = j;
        r.peer = op.peer;
        r.count = count;
        error = tagMismatch(r, done[k + 2] as number, done[k + 1] as number, truncated, countTags);
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

  /** A copy (TypedArray set), reduction (the addon's localReduce) or scaling (scaleHost) of operation i. */
  private local(i: number, op: PlanOp): void {
    const n = op.region.count;
    if (n === 0) return;
    const { places, data, base } = this;
    const dm = places[6 * i] as number;
    const sm = places[6 * i + 2] as number;
    const dst = data[dm] as TypedArray;
    const d = (base[dm] as number) + (places[6 * i + 1] as number);
    const src = data[sm] as TypedArray;
    const s = (base[sm] as number) + (places[6 * i + 3] as number);
    const { dtype } = this.plan.call;
    if (op.kind === "copy") {
      // In place, 'copy input to output' is a copy onto itself: skip it (set handles overlap).
      if (dst !== src || d !== s) dst.set(src.subarray(s, s + n) as never, d);
    } else if (op.kind === "reduce") {
      // Handed to the addon as ArrayBuffers (one Node-API call each), elements counted from their start.
      const { bufs, shift } = this;
      const mpi = this.comm.proc.mpi;
      const dd = d + (shift[dm] as number);
      const ss = s + (shift[sm] as number);
      if (op.with) {
        const am = places[6 * i + 4] as number;
        const ao = (base[am] as number) + (places[6 * i + 5] as number) + (shift[am] as number);
        mpi.localReduce(
          this.reduceCode,
          bufs[dm] as ArrayBuffer,
          dd,
          bufs[sm] as ArrayBuffer,
          ss,
          n,
          bufs[am] as ArrayBuffer,
          ao,
        );
      } else mpi.localReduce(this.reduceCode, bufs[dm] as ArrayBuffer, dd, bufs[sm] as ArrayBuffer, ss, n);
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

  /** Ends the call: the run goes back to its comm's spare runs for the next call of its plan. */
  private settle(): void {
    this.settled = true;
    this.options.signal?.removeEventListener("abort", this.onAbort);
    this.active = 0;
    this.spare.push(this);
  }

  private finish(): void {
    this.settle();
    const resolve = this.resolve;
    if (resolve) {
      this.resolve = this.reject = undefined;
      resolve();
    } else this.early = 1;
  }

  /**
   * Fails the run: its posted receives are cancelled (MPI_Cancel + MPI_Wait), so nothing lands
   * in the caller's memory later; sends are left to MPI (cancelling a send is not reliable).
   */
  fail(e: unknown): void {
    if (this.settled) return;
    const mpi = this.comm.proc.mpi;
    for (let r = 0; r < this.active; r++) {
      const req = this.reqs[r] as number;
      if (req < 0) continue; // queued, never posted
      const j = this.opOf[r] as number;
      if ((this.ops[j] as PlanOp).kind !== "recv") {
        // A send left to MPI still reads its memory, which its post does not keep alive.
        stranded.push(this.data[this.places[6 * j] as number] as TypedArray);
        continue;
      }
      try {
        mpi.cancel(req);
      } catch {
        // A failed cancel leaves the request to MPI; the run fails either way.
      }
    }
    this.settle();
    const reject = this.reject;
    if (reject) {
      this.resolve = this.reject = undefined;
      reject(e);
    } else {
      this.early = 2;
      this.error = e;
    }
  }
}

/** tag.ts's Received for the receive just completed; `where` is worked out only when a message needs it. */
class ReceivedOp implements Received {
  op = 0;
  peer = 0;
  count = 0;
  call: CallTag = { collective: "", op: "", root: 0 };
  constructor(
    private readonly run: Run,
    readonly rank: number,
    readonly dtype: DType,
  ) {}
  get where(): string {
    return this.run.where(this.op, this.run.opAt(this.op));
  }
}
