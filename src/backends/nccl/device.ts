/**
 * One process's GPU as the nccl backend drives it: the CUDA device, the one stream every
 * communicator of the process enqueues on (so the host's issue order is the device's execution
 * order), device buffers, and the poller that turns stream completion and NCCL's asynchronous
 * errors into settled promises without ever blocking Node's event loop.
 *
 * Stream semantics: communication and local operations return once enqueued; completion is
 * observed only by waiting on the stream (synchronize, reading a buffer back). isend/irecv are
 * held back and posted together as one NCCL group at the next wait (or with the next group,
 * send, recv or collective), as torch's batch_isend_irecv does, so two ranks that isend to each
 * other before waiting cannot deadlock inside NCCL.
 *
 * Non-blocking communicators (NCCL >= 2.14): ncclGroupEnd and collectives may return
 * ncclInProgress; nothing else is enqueued until ncclCommGetAsyncError says ncclSuccess, so the
 * stream keeps the host's order. While anything is awaited, every live communicator's async
 * error is polled (those still initialising included); an error aborts that communicator
 * (ncclCommAbort) and fails every waiter with an EngineError naming the rank and the operation;
 * a deadline aborts them all with a TimeoutError.
 *
 * Teardown (finalize then destroy on the success path, abort otherwise, process exit) is
 * teardown.ts's, polled from here; device memory is buffer.ts's; the records of what is queued
 * and tracked (isend/irecv, groups) are work.ts's. This module makes the stream, event, group
 * and collective calls.
 *
 * Events: only groups holding isend/irecv get a completion event (Work.test() asks it); once an
 * event later on the stream is seen complete, every earlier one is too, and goes back to the pool.
 */
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { AbortError, EngineError, InvalidArgumentError, TimeoutError } from "../../core/errors.js";
import { toEngineError } from "../../native/load.js";
import { type DevicePtr, type NativeNccl, NCCL_RESULT } from "../../native/types.js";
import { DeviceBuffer } from "./buffer.js";
import { ncclErrorText, safe } from "./errors.js";
import { Teardown } from "./teardown.js";
import { type CommRef, Enqueue, NcclWork, type P2PItem } from "./work.js";

interface StreamWaiter {
  readonly event: number;
  readonly seq: number;
  readonly what: string;
  readonly deadline: number;
  readonly timeoutMs: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export interface NcclDeviceOptions {
  readonly native: NativeNccl;
  readonly index: number;
  readonly timeoutMs: number;
  /** Called once with the error when a wait fails (async error or timeout), after the abort. */
  readonly onAbort?: (e: Error) => void;
}

const IDLE_IMMEDIATE_POLLS = 256;
/** Groups with an unobserved completion event before record() checks the oldest (bounds the pool). */
const RECLAIM_AFTER = 16;

export class NcclDevice {
  readonly native: NativeNccl;
  readonly index: number;
  readonly stream: number;
  timeoutMs: number;
  onAbort: (e: Error) => void;
  readonly comms = new Set<CommRef>();
  closed = false;
  private pending: NcclWork[] = [];
  private enqueuing: Enqueue[] = [];
  private readonly waiters = new Set<StreamWaiter>();
  private readonly readyWaiters = new Set<{ resolve: () => void; reject: (e: unknown) => void }>();
  private readonly events: number[] = [];
  /** Groups whose completion event is recorded and not yet seen complete, in stream order. */
  private recorded: Enqueue[] = [];
  private seq = 0;
  private passedSeq = 0;
  private readonly teardown: Teardown = new Teardown(this);
  private readonly deferredFrees: DevicePtr[] = [];
  private readonly recent: string[] = [];
  private scheduled = false;
  private idlePolls = 0;

  constructor(o: NcclDeviceOptions) {
    this.native = o.native;
    this.index = o.index;
    this.timeoutMs = o.timeoutMs;
    this.onAbort = o.onAbort ?? ((e) => process.stderr.write(`cclab: ${e.message}\n`));
    this.native.setDevice(o.index);
    this.stream = this.native.streamCreate();
  }

  /** The last few operations enqueued, for timeout messages. */
  note(what: string): void {
    this.recent.push(what);
    if (this.recent.length > 6) this.recent.shift();
  }

  alloc(dtype: DType, count: number): DeviceBuffer {
    const bytes = count * dtypeInfo(dtype).bytes;
    const ptr = bytes === 0 ? 0n : this.native.malloc(bytes, this.stream);
    return new DeviceBuffer(dtype, count, ptr, this);
  }

  /** Frees stream-ordered, after everything enqueued so far (deferred while a group is still enqueuing). */
  release(ptr: DevicePtr): void {
    if (ptr === 0n || this.closed) return;
    if (this.busy()) {
      this.deferredFrees.push(ptr);
      return;
    }
    try {
      this.native.free(ptr, this.stream);
    } catch {
      // A broken context frees nothing more; the process is going down.
    }
  }

  /** An NCCL group or collective is still being enqueued (non-blocking communicator). */
  busy(): boolean {
    return this.enqueuing.length > 0;
  }

  /** Local work (copies, kernels) goes straight onto the stream; never while NCCL is still enqueuing. */
  enqueueLocal(what: string, fn: () => void): void {
    if (this.busy()) {
      throw new InvalidArgumentError(
        { op: what },
        "an NCCL operation is still being enqueued (non-blocking communicator); await the group, send, recv or collective before issuing local operations",
      );
    }
    this.note(what);
    try {
      fn();
    } catch (e) {
      throw toEngineError(e, what);
    }
  }

  /** Holds an isend/irecv until the next flush. */
  post(item: P2PItem): NcclWork {
    const w = new NcclWork(this, item);
    this.pending.push(w);
    return w;
  }

  /** Posts the held isend/irecv plus `extra` as one NCCL group and waits until it is enqueued. */
  async flush(extra: P2PItem[], what: string): Promise<void> {
    await this.ready();
    const g = this.issueGroup(extra, what);
    if (g) await g.enqueued;
  }

  /** Issues the group now (the caller made sure nothing is enqueuing). */
  issueGroup(extra: P2PItem[], what: string): Enqueue | undefined {
    const works = this.pending;
    this.pending = [];
    const items = [...works.map((w) => w.item), ...extra];
    if (items.length === 0) return undefined;
    const dead = items.find((i) => i.comm.aborted);
    if (dead) {
      const e = new AbortError(`${dead.what}: the communicator was aborted: ${dead.comm.aborted!.message}`);
      for (const w of works) w.error = e;
      throw e;
    }
    const comms = [...new Set(items.map((i) => i.comm))];
    const n = this.native;
    let current = what;
    let rc: number;
    try {
      n.groupStart();
      try {
        for (const i of items) {
          current = i.what;
          this.note(i.what);
          const dtype = i.buffer.dtype;
          if (i.kind === "send") n.send(i.buffer.ptr, i.off, i.count, dtype, i.peer, i.comm.handle, this.stream);
          else n.recv(i.buffer.ptr, i.off, i.count, dtype, i.peer, i.comm.handle, this.stream);
        }
      } finally {
        current = `${what}: ncclGroupEnd`;
        rc = n.groupEnd();
      }
    } catch (e) {
      const err = toEngineError(e, current);
      for (const w of works) w.error = err;
      throw err;
    }
    const g = new Enqueue(comms, what, items, works.length > 0);
    for (const w of works) w.group = g;
    if (rc === NCCL_RESULT.inProgress) this.track(g);
    else this.enqueued(g);
    return g;
  }

  /** Issues one NCCL collective (after flushing held isend/irecv) and waits until it is enqueued. */
  async collective(comm: CommRef, what: string, call: () => number, keep: readonly unknown[] = []): Promise<void> {
    if (this.pending.length > 0) await this.flush([], what);
    await this.ready();
    if (comm.aborted) throw new AbortError(`${what}: the communicator was aborted: ${comm.aborted.message}`);
    this.note(what);
    let rc: number;
    try {
      rc = call();
    } catch (e) {
      throw toEngineError(e, what);
    }
    if (rc !== NCCL_RESULT.inProgress) return;
    const g = new Enqueue([comm], what, keep);
    this.track(g);
    await g.enqueued;
  }

  /** Waits until a non-blocking communicator (being created) is ready. */
  async commReady(comm: CommRef, what: string): Promise<void> {
    const g = new Enqueue([comm], what, [], false, true);
    this.track(g);
    await g.enqueued;
  }

  /** Resolves once nothing is being enqueued. */
  ready(): Promise<void> {
    if (!this.busy()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.readyWaiters.add({ resolve, reject });
      this.schedule();
    });
  }

  /** Whether everything up to the group's end has completed on the device. */
  completed(g: Enqueue | undefined): boolean {
    if (!g || g.state === "failed" || g.complete) return true;
    if (g.state === "enqueuing") {
      this.poll();
      const now = g.state as Enqueue["state"];
      if (now !== "enqueued") return now === "failed";
    }
    let done: boolean;
    try {
      done = this.native.eventQuery(g.event);
    } catch (e) {
      throw toEngineError(e, g.what);
    }
    if (done) this.passed(g.seq);
    return done;
  }

  /** Settles once everything enqueued so far (held isend/irecv included) has completed on the device. */
  async idle(what: string, timeoutMs = this.timeoutMs): Promise<void> {
    if (this.pending.length > 0) await this.flush([], what);
    await this.ready();
    const { event, seq } = this.record();
    await new Promise<void>((resolve, reject) => {
      this.waiters.add({ event, seq, what, deadline: Date.now() + timeoutMs, timeoutMs, resolve, reject });
      this.wake();
    });
  }

  /** Records an event (from the pool where one is free) after everything enqueued so far. */
  private record(): { event: number; seq: number } {
    if (this.recorded.length >= RECLAIM_AFTER) this.reclaim();
    const e = this.events.pop() ?? this.native.eventCreate();
    try {
      this.native.eventRecord(e, this.stream);
    } catch (err) {
      this.events.push(e);
      throw toEngineError(err, "cudaEventRecord");
    }
    return { event: e, seq: ++this.seq };
  }

  /** A group's kernels are on the stream: settle it, with a completion event where isend/irecv need one. */
  private enqueued(g: Enqueue): void {
    if (g.state !== "enqueuing") return;
    if (g.needsEvent) {
      const { event, seq } = this.record();
      g.event = event;
      g.seq = seq;
      this.recorded.push(g);
    }
    g.done();
  }

  /** Everything recorded up to `seq` has completed (one stream, in order): give those groups' events back. */
  private passed(seq: number): void {
    if (seq > this.passedSeq) this.passedSeq = seq;
    while (this.recorded.length > 0 && this.recorded[0]!.seq <= this.passedSeq) {
      const g = this.recorded.shift()!;
      g.complete = true;
      this.events.push(g.event);
      g.event = 0;
    }
  }

  /** Gives back the events of the oldest groups that have completed. */
  private reclaim(): void {
    for (let g = this.recorded[0]; g; g = this.recorded[0]) {
      if (!safe(() => this.native.eventQuery(g!.event), false)) return;
      this.passed(g.seq);
    }
  }

  private track(g: Enqueue): void {
    this.enqueuing.push(g);
    g.deadline = Date.now() + this.timeoutMs;
    this.wake();
  }

  /** Polls soon, and at full rate: something new is awaited. */
  wake(): void {
    this.idlePolls = 0;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    if (this.waiters.size === 0 && this.enqueuing.length === 0 && this.readyWaiters.size === 0 && !this.teardown.busy)
      return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.poll();
      this.schedule();
    };
    if (this.idlePolls < IDLE_IMMEDIATE_POLLS) setImmediate(run);
    else setTimeout(run, 1);
  }

  /** One non-blocking pass: async errors, enqueue progress, stream completion, deadlines. */
  poll(): void {
    let progressed = false;
    const state = new Map<CommRef, number>();
    for (const c of [...this.comms]) {
      if (c.aborted) continue;
      let code: number;
      try {
        code = this.native.commGetAsyncError(c.handle);
      } catch (e) {
        code = (e as { code?: number }).code ?? NCCL_RESULT.internalError;
      }
      state.set(c, code);
      if (code !== NCCL_RESULT.success && code !== NCCL_RESULT.inProgress) {
        this.broken(c, code);
        progressed = true;
      }
    }
    const now = Date.now();
    for (const g of [...this.enqueuing]) {
      if (g.state !== "enqueuing") {
        this.unqueue(g);
        continue;
      }
      const codes = g.comms.map(
        (c) => state.get(c) ?? safe(() => this.native.commGetAsyncError(c.handle), NCCL_RESULT.internalError),
      );
      const bad = codes.findIndex((c) => c !== NCCL_RESULT.success && c !== NCCL_RESULT.inProgress);
      if (bad >= 0) {
        this.broken(g.comms[bad]!, codes[bad]!);
        progressed = true;
      } else if (codes.every((c) => c === NCCL_RESULT.success)) {
        this.unqueue(g);
        this.enqueued(g);
        progressed = true;
      } else if (now > g.deadline) {
        this.timeout(g.what, this.timeoutMs);
        progressed = true;
      }
    }
    if (!this.busy()) {
      for (const w of [...this.readyWaiters]) {
        this.readyWaiters.delete(w);
        w.resolve();
        progressed = true;
      }
      while (this.deferredFrees.length > 0) this.release(this.deferredFrees.shift()!);
    }
    for (const w of [...this.waiters]) {
      let done = false;
      try {
        done = this.native.eventQuery(w.event);
      } catch (e) {
        this.waiters.delete(w);
        w.reject(toEngineError(e, w.what));
        progressed = true;
        continue;
      }
      if (done) {
        this.waiters.delete(w);
        this.events.push(w.event);
        this.passed(w.seq);
        w.resolve();
        progressed = true;
      } else if (now > w.deadline) {
        this.timeout(w.what, w.timeoutMs);
        progressed = true;
      }
    }
    if (this.teardown.busy && this.teardown.poll(now)) progressed = true;
    this.idlePolls = progressed ? 0 : this.idlePolls + 1;
  }

  private unqueue(g: Enqueue): void {
    const i = this.enqueuing.indexOf(g);
    if (i >= 0) this.enqueuing.splice(i, 1);
  }

  /** NCCL reported an error on `c`: abort it and fail everything waiting (the stream is shared). */
  private broken(c: CommRef, code: number): void {
    const msg = ncclErrorText(this.native, c, code);
    const init = this.enqueuing.find((g) => g.init && g.comms.includes(c));
    const where = init?.what ?? this.recent[this.recent.length - 1] ?? `rank ${c.rank}: communicator`;
    const err = new EngineError("nccl", code, msg, `${where} (asynchronous error; ncclCommAbort called)`);
    this.teardown.abort(c, err);
    this.failAll(err);
    this.onAbort(err);
  }

  private timeout(what: string, ms: number): void {
    const recent = this.recent.length > 0 ? `; last enqueued: ${this.recent.join("; ")}` : "";
    const err = new TimeoutError(
      `${what} did not complete within ${ms / 1000} s${recent}; ncclCommAbort called on every communicator of this process`,
    );
    for (const c of [...this.comms]) this.teardown.abort(c, err);
    this.failAll(err);
    this.onAbort(err);
  }

  private failAll(err: Error): void {
    for (const g of this.enqueuing) g.fail(err);
    this.enqueuing = [];
    for (const w of this.waiters) w.reject(err);
    this.waiters.clear();
    for (const w of this.readyWaiters) w.resolve();
    this.readyWaiters.clear();
    for (const w of this.pending) w.error = err;
    this.pending = [];
  }

  /** Drops held isend/irecv of a communicator being destroyed. */
  dropPending(c: CommRef, why: Error): void {
    const keep: NcclWork[] = [];
    for (const w of this.pending) {
      if (w.item.comm === c) w.error = why;
      else keep.push(w);
    }
    this.pending = keep;
  }

  /** Tears `c` down on the success path: finalize, then destroy (teardown.ts). */
  retire(c: CommRef): void {
    this.teardown.retire(c);
  }

  /** Resolves once no destroyed communicator is still finalizing. */
  finalized(): Promise<void> {
    return this.teardown.finalized();
  }

  /** Process exit (teardown.ts): a bounded wait for finalizing communicators unless `failing`, then abort the rest. */
  close(failing = false): void {
    if (this.closed) return;
    this.teardown.exit(failing);
    this.closed = true;
  }
}
