/**
 * One call of a plan on the MPI backend's fast path (plan-runner.ts makes and reuses these): the
 * plan's dataflow driven over the addon's native progress call.
 *   - the dataflow order exactly as the executor's (an operation starts when those it depends on
 *     are done; transfers to one peer posted in program order, so they pair as the schedule
 *     names them); zero-length transfers skipped;
 *   - receives posted at once with their known sizes (MPI_Irecv, MPI_ANY_TAG, on the comm's
 *     collective communicator), no MPI_Improbe; the tag (tag.ts) still tells a receive that its
 *     send disagrees on call, dtype or count, truncated or short, and the run fails naming both;
 *   - progress through the backend's one loop (progress.ts): one native call (runProgress, its
 *     arrays bound once in run-layout.ts's slots) posts the transfers made ready and tests every
 *     posted request (MPI_Testsome), returning once a completion can release work (waitRule);
 *   - local copies, reductions (NCCL's reduceCopy form, dst = a op src) and scalings inline, in
 *     the addon's kernels over the bound memory;
 *   - nothing allocated per call: a run's state (counters, requests, completions) is made once
 *     per comm and plan and reset per call.
 * A failed run (mismatch, engine error, abort) cancels its posted receives; one idle for the timeout
 * fails (TimeoutError naming what it waits on) and calls the process's onAbort.
 */
import type { DataBuffer, HostBuffer, View } from "../../core/buffer.js";
import { type DType, dtypeInfo, type TypedArray } from "../../core/dtype.js";
import { EngineError, TimeoutError } from "../../core/errors.js";
import { combineOf } from "../../core/op.js";
import { toEngineError } from "../../native/load.js";
import { scaleHost } from "../../native/reduce.js";
import { CTRL, DESC, DESC_RECV, DESC_SEND } from "../../native/run-layout.js";
import type { NativeMpi, NativeRun } from "../../native/types.js";
import { nextToPost, release, type Scheduling } from "../../schedule/dataflow.js";
import type { PlanRunOptions } from "../../schedule/executor.js";
import { SETTLED } from "../../schedule/executor.js";
import { callTag, type Plan, type PlanOp } from "../../schedule/plan.js";
import { type Driven, ProgressLoop, waitRule } from "./progress.js";
import { ANY_TAG, countTag, encodeTag, ReceivedAt, tagMismatch } from "./tag.js";

/**
 * What the fast path needs of its comm (MpiComm is the one): an interface here, so comm.ts, which
 * makes its runner, and the runner's files do not import each other.
 */
export interface RunnerComm {
  readonly rank: number;
  readonly size: number;
  /** The MPI communicator of the comm's collectives. */
  readonly collHandle: number;
  /** Host memory of the comm (scratch, and the empty view of a rank with no input or output). */
  alloc(dtype: DType, count: number): DataBuffer;
  /** Whether tags carry counts (tag.ts). */
  readonly countTags: boolean;
  readonly proc: {
    readonly mpi: NativeMpi;
    readonly timeoutMs: number;
    onAbort(error: Error): void;
  };
}

/** What a run needs of the runner that made it (plan-runner.ts's MpiPlanRunner). */
export interface RunOwner {
  readonly comm: RunnerComm;
  /** Whether this node runs more ranks than it has cores (then spinning would starve a peer). */
  readonly yieldCpu: boolean;
  /** MPI_ERR_TRUNCATE: a receive's message was longer than its size. */
  readonly truncate: number;
  /** Takes back the scratch a call was given. */
  giveScratch(buffer: HostBuffer): void;
  /** Keeps alive the memory of a send a failed run left to MPI (its post does not). */
  strand(memory: TypedArray): void;
}

/**
 * One run of a plan at a time: the dependency counters, per-peer posting positions, posted
 * requests and the native progress call's completions, made once and reset per call.
 */
export class Run implements Driven {
  private readonly comm: RunnerComm;
  /** The backend's progress loop, driving this run's calls one after another. */
  private readonly loop: ProgressLoop;
  private readonly ops: readonly PlanOp[];
  private readonly places: Int32Array;
  private readonly sched: Scheduling;
  private readonly bytes: number;
  /** The addon's code for this plan's reductions (localReduce: ~60 ns a call, reduce() by name ~250). */
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
   * Transfers ready but not yet posted, a DESC record each: the next progress call posts and
   * tests them in one crossing (their requests, -1 until posted, end `reqs`: `active` counts them).
   */
  private readonly desc: Float64Array;
  private posts = 0;
  /** Per request position, 1 where its completion alone releases work (runProgress returns then). */
  private readonly wake: Uint8Array;
  /** A native call's numbers, in CTRL's slots (use() sets each memory's bytes posts may touch). */
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
  private readonly received: ReceivedAt;
  /** Every send's tag but its count: the dtype and the call (callTag), and the plan's default label. */
  private readonly tagBase: number;
  private readonly defaultLabel: string;
  /** Whether tags carry counts (the comm's, fixed for its life). */
  private readonly countTags: boolean;
  /** This call's label (for errors) and scratch (the runner's, given back when the call ends). */
  private label = "";
  private scratch: HostBuffer | undefined;
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
  private active = 0;
  private left = 0;
  private settled = true;
  private readonly onAbort = () => this.fail(this.options.signal?.reason ?? new Error("aborted"));

  constructor(
    private readonly runner: RunOwner,
    private readonly plan: Plan,
    /** The plan's dataflow (one order per peer) and its transfers: the most requests in flight. */
    sched: Scheduling,
    transfers: number,
    /** Where this run goes back when its call ends. */
    private readonly spare: Run[],
  ) {
    this.comm = runner.comm;
    this.ops = plan.ops;
    this.places = plan.places;
    this.sched = sched;
    this.bytes = dtypeInfo(plan.call.dtype).bytes;
    this.reduceCode = this.comm.proc.mpi.reduceCode(plan.call.dtype, combineOf(plan.call.op));
    const m = this.ops.length;
    this.pending = new Int32Array(m);
    this.isReady = new Uint8Array(m);
    this.qpos = new Int32Array(this.sched.queues.length);
    this.reqs = new Int32Array(transfers);
    this.opOf = new Int32Array(transfers);
    this.done = new Int32Array(4 * transfers);
    this.desc = new Float64Array(DESC.stride * transfers);
    this.wake = new Uint8Array(transfers);
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
    const tag = callTag(plan);
    this.tagBase = encodeTag(plan.call.dtype, tag, 0, false);
    this.defaultLabel = `${plan.alg.collective}/${plan.alg.name}`;
    this.countTags = this.comm.countTags;
    this.received = new ReceivedAt((j) => this.where(j, this.ops[j] as PlanOp), this.comm.rank, plan.call.dtype, tag);
    this.loop = new ProgressLoop(this, runner.yieldCpu);
  }

  /** Starts a call and gives it its first turn: SETTLED if that finished it, else the call's promise. */
  start(input: View, output: View, scratch: HostBuffer, options: PlanRunOptions): Promise<void> {
    this.options = options;
    this.label = options.label ?? this.defaultLabel;
    this.resolve = undefined;
    this.reject = undefined;
    this.early = 0;
    this.settled = false;
    this.scratch = scratch;
    this.use(0, (input.buffer as HostBuffer).data);
    this.use(1, (output.buffer as HostBuffer).data);
    this.use(2, scratch.data);
    this.base[0] = input.offset;
    this.base[1] = output.offset;
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
      throw toEngineError(e, `rank ${this.comm.rank}: ${this.label}`);
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
    const { bytes, places, desc } = this;
    const mem = places[6 * j] as number;
    const k = DESC.stride * this.posts;
    const send = t.kind === "send";
    desc[k + DESC.kind] = send ? DESC_SEND : DESC_RECV;
    desc[k + DESC.mem] = mem;
    desc[k + DESC.offset] =
      ((this.base[mem] as number) + (this.shift[mem] as number) + (places[6 * j + 1] as number)) * bytes;
    desc[k + DESC.bytes] = t.region.count * bytes;
    desc[k + DESC.peer] = t.peer;
    desc[k + DESC.tag] = send ? countTag(this.tagBase, t.region.count, this.countTags) : ANY_TAG;
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
      const countTags = this.countTags;
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

  where(j: number, op: PlanOp): string {
    const step = this.plan.steps[op.step]?.label ?? "";
    const dir = op.kind === "send" ? "to" : "from";
    return `rank ${this.comm.rank}: ${op.kind} ${dir} peer ${op.peer} (${this.label} step ${op.step} (${step}), operation ${j})`;
  }

  private timeout(): void {
    const ms = this.comm.proc.timeoutMs;
    const waits = Array.from(this.opOf.subarray(0, Math.min(this.active, 4)), (j) => {
      const op = this.ops[j] as PlanOp;
      return `${this.where(j, op)} of ${op.region.count} x ${this.plan.call.dtype}`;
    });
    const more = this.active > 4 ? `, and ${this.active - 4} more` : "";
    const e = new TimeoutError(
      `rank ${this.comm.rank}: ${this.label}: no transfer completed within ${ms} ms; waiting on ${waits.join("; ")}${more}`,
    );
    this.fail(e);
    this.comm.proc.onAbort(e);
  }

  /** Ends the call: the run goes back to its comm's spare runs for the next call of its plan. */
  private settle(): void {
    this.settled = true;
    this.options.signal?.removeEventListener("abort", this.onAbort);
    this.active = 0;
    if (this.scratch) this.runner.giveScratch(this.scratch);
    this.scratch = undefined;
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
        this.runner.strand(this.data[this.places[6 * j] as number] as TypedArray);
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
