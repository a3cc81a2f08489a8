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
 * Teardown: a communicator destroyed on the success path is finalized (ncclCommFinalize, polled
 * until NCCL has flushed what it still holds, its proxy's queued sends included), then
 * ncclCommDestroy; an error, or a finalize past the deadline, aborts it instead. At process exit
 * (close) finalizing communicators get a bounded synchronous wait and everything else is aborted.
 *
 * Events: only groups holding isend/irecv get a completion event (Work.test() asks it); once an
 * event later on the stream is seen complete, every earlier one is too, and goes back to the pool.
 */
import type { DataBuffer } from "../../core/buffer.js";
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { AbortError, EngineError, InvalidArgumentError, TimeoutError } from "../../core/errors.js";
import { toEngineError } from "../../native/load.js";
import { type DevicePtr, type NativeNccl, NCCL_RESULT } from "../../native/types.js";
import { sharedGpuHint } from "./env.js";

/** What the device needs of a communicator. */
export interface CommRef {
  readonly handle: number;
  readonly rank: number;
  aborted?: Error;
}

/** Device memory of one process's GPU (nccl backend). Only NcclComm and the helpers in index.ts touch it. */
export class DeviceBuffer implements DataBuffer {
  readonly location: string;
  private freed = false;
  constructor(
    readonly dtype: DType,
    readonly count: number,
    readonly ptr: DevicePtr,
    readonly device: NcclDevice,
  ) {
    this.location = `cuda:${device.index}`;
  }
  get byteLength(): number {
    return this.count * dtypeInfo(this.dtype).bytes;
  }
  /** Gives the memory back now (stream-ordered); otherwise it goes when the buffer is garbage collected. */
  free(): void {
    if (this.freed) return;
    this.freed = true;
    registry.unregister(this);
    this.device.release(this.ptr);
  }
}

export function isDeviceBuffer(b: DataBuffer): b is DeviceBuffer {
  return b instanceof DeviceBuffer;
}

const registry = new FinalizationRegistry<{ device: NcclDevice; ptr: DevicePtr }>(({ device, ptr }) =>
  device.release(ptr),
);

export interface P2PItem {
  readonly kind: "send" | "recv";
  readonly comm: CommRef;
  /** Kept so the memory outlives the (possibly still enqueuing) group. */
  readonly buffer: DeviceBuffer;
  readonly off: number;
  readonly count: number;
  readonly peer: number;
  /** 'rank 1: send to peer 2 (label)'. */
  readonly what: string;
}

/** A posted NCCL group (or collective) until its kernels are on the stream. */
class Enqueue {
  state: "enqueuing" | "enqueued" | "failed" = "enqueuing";
  /** The completion event (0: none, or given back once the group was seen complete). */
  event = 0;
  /** Position of the event on the stream (see NcclDevice.passed). */
  seq = 0;
  /** Seen complete on the device. */
  complete = false;
  deadline = Number.POSITIVE_INFINITY;
  readonly enqueued: Promise<void>;
  private resolveFn!: () => void;
  private rejectFn!: (e: unknown) => void;
  constructor(
    readonly comms: readonly CommRef[],
    readonly what: string,
    readonly keep: readonly unknown[],
    /** isend/irecv in it may ask whether it completed: record an event after it. */
    readonly needsEvent = false,
    /** A communicator being created (commReady), not work on the stream. */
    readonly init = false,
  ) {
    this.enqueued = new Promise((res, rej) => {
      this.resolveFn = res;
      this.rejectFn = rej;
    });
    this.enqueued.catch(() => {});
  }
  done(): void {
    if (this.state !== "enqueuing") return;
    this.state = "enqueued";
    this.resolveFn();
  }
  fail(e: unknown): void {
    if (this.state !== "enqueuing") return;
    this.state = "failed";
    this.rejectFn(e);
  }
}

/** An isend/irecv: held until the next flush, then settled when its group is enqueued. */
export class NcclWork {
  group: Enqueue | undefined;
  error: unknown;
  constructor(
    private readonly device: NcclDevice,
    readonly item: P2PItem,
  ) {}
  async wait(): Promise<void> {
    if (this.error !== undefined) throw this.error;
    if (!this.group) await this.device.flush([], `${this.item.what}: wait`);
    if (this.error !== undefined) throw this.error;
    await this.group?.enqueued;
  }
  test(): boolean {
    if (this.error !== undefined) return true;
    if (!this.group) {
      if (this.device.busy()) return false;
      try {
        this.device.issueGroup([], `${this.item.what}: test`);
      } catch {
        return true;
      }
    }
    return this.device.completed(this.group);
  }
}

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
/** At process exit, the longest synchronous wait for communicators still finalizing. */
const EXIT_FINALIZE_MS = 30_000;

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
  /** Destroyed communicators being finalized, with their deadlines. */
  private readonly finalizing = new Map<CommRef, number>();
  private readonly finalizedWaiters = new Set<() => void>();
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
    const b = new DeviceBuffer(dtype, count, ptr, this);
    if (ptr !== 0n) registry.register(b, { device: this, ptr }, b);
    return b;
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
      this.idlePolls = 0;
      this.schedule();
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
    this.idlePolls = 0;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    if (
      this.waiters.size === 0 &&
      this.enqueuing.length === 0 &&
      this.readyWaiters.size === 0 &&
      this.finalizing.size === 0
    )
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
    if (this.finalizing.size > 0 && this.pollFinalizing(now)) progressed = true;
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
    this.abortComm(c, err);
    this.failAll(err);
    this.onAbort(err);
  }

  private timeout(what: string, ms: number): void {
    const recent = this.recent.length > 0 ? `; last enqueued: ${this.recent.join("; ")}` : "";
    const err = new TimeoutError(
      `${what} did not complete within ${ms / 1000} s${recent}; ncclCommAbort called on every communicator of this process`,
    );
    for (const c of [...this.comms]) this.abortComm(c, err);
    this.failAll(err);
    this.onAbort(err);
  }

  abortComm(c: CommRef, why: Error): void {
    if (c.aborted) return;
    c.aborted = why;
    this.comms.delete(c);
    try {
      this.native.commAbort(c.handle);
    } catch {
      // Already gone.
    }
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

  /**
   * The success path's teardown of `c` (NcclComm.destroy): ncclCommFinalize, which flushes what
   * NCCL still holds for it (sends queued in its proxy included), polled until done, then
   * ncclCommDestroy. ncclCommAbort instead would drop those sends, and a peer still receiving
   * them would fail. An error, or no end within the timeout, aborts it.
   */
  retire(c: CommRef): void {
    this.comms.delete(c);
    if (c.aborted) return;
    let rc: number;
    try {
      rc = this.native.commFinalize(c.handle);
    } catch (e) {
      this.finalizeFailed(c, asError(toEngineError(e, `rank ${c.rank}: ncclCommFinalize`)));
      return;
    }
    if (rc === NCCL_RESULT.inProgress) {
      this.finalizing.set(c, Date.now() + this.timeoutMs);
      this.idlePolls = 0;
      this.schedule();
    } else {
      this.destroyComm(c);
    }
  }

  /** Resolves once no destroyed communicator is still finalizing. */
  finalized(): Promise<void> {
    if (this.finalizing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.finalizedWaiters.add(resolve));
  }

  /** One pass over the finalizing communicators; true if any finished. `deadlines` false: exit's own bound applies. */
  private pollFinalizing(now: number, deadlines = true): boolean {
    let progressed = false;
    for (const [c, deadline] of [...this.finalizing]) {
      const code = safe(() => this.native.commGetAsyncError(c.handle), NCCL_RESULT.internalError);
      if (code === NCCL_RESULT.success) {
        this.finalizing.delete(c);
        this.destroyComm(c);
      } else if (code !== NCCL_RESULT.inProgress) {
        this.finalizing.delete(c);
        const err = new EngineError(
          "nccl",
          code,
          ncclErrorText(this.native, c, code),
          `rank ${c.rank}: ncclCommFinalize`,
        );
        this.finalizeFailed(c, err);
      } else if (deadlines && now > deadline) {
        this.finalizing.delete(c);
        this.finalizeFailed(
          c,
          new TimeoutError(`rank ${c.rank}: ncclCommFinalize did not complete within ${this.timeoutMs / 1000} s`),
        );
      } else {
        continue;
      }
      progressed = true;
    }
    if (this.finalizing.size === 0) {
      for (const w of this.finalizedWaiters) w();
      this.finalizedWaiters.clear();
    }
    return progressed;
  }

  private destroyComm(c: CommRef): void {
    try {
      this.native.commDestroy(c.handle);
    } catch (e) {
      this.onAbort(asError(toEngineError(e, `rank ${c.rank}: ncclCommDestroy`)));
    }
  }

  /** Finalizing failed: abort instead, and say so (nobody waits on a destroyed communicator). */
  private finalizeFailed(c: CommRef, err: Error): void {
    this.abortComm(c, err);
    this.onAbort(new AbortError(`${err.message}; ncclCommAbort called instead`));
  }

  /**
   * Process exit: communicators still finalizing get a bounded synchronous wait (there is no
   * event loop left to poll from) unless the process is `failing` (then, as everything else still
   * live, initialising ones included, they are aborted, so CUDA teardown cannot hang on a stuck
   * kernel and a failed rank does not linger).
   */
  close(failing = false): void {
    if (this.closed) return;
    const until = failing ? 0 : Date.now() + Math.min(this.timeoutMs, EXIT_FINALIZE_MS);
    const nap = new Int32Array(new SharedArrayBuffer(4));
    while (this.finalizing.size > 0 && Date.now() < until) {
      this.pollFinalizing(Date.now(), false);
      if (this.finalizing.size > 0) Atomics.wait(nap, 0, 0, 1);
    }
    for (const c of [...this.finalizing.keys()]) {
      this.finalizing.delete(c);
      this.abortComm(c, new AbortError("process exit while ncclCommFinalize was still running"));
    }
    for (const w of this.finalizedWaiters) w();
    this.finalizedWaiters.clear();
    for (const c of [...this.comms]) this.abortComm(c, new AbortError("process exit"));
    this.closed = true;
  }
}

/**
 * NCCL's text for an error code plus ncclGetLastError where that is fresh (the addon returns ''
 * when the process-wide text did not change since the last call that succeeded), and what a
 * remote error nearly always means here.
 */
function ncclErrorText(native: NativeNccl, c: CommRef, code: number): string {
  const last = safe(() => native.lastError(c.handle), "");
  let msg = `${safe(() => native.errorString(code), `NCCL error ${code}`)}${last ? ` (${last})` : ""}`;
  if (code === NCCL_RESULT.remoteError) {
    msg +=
      "; a peer rank's process exited or closed its connection while this rank still had operations with it" +
      " (did a rank return, fail or destroy its communicator early?)";
  }
  return msg + sharedGpuHint(last);
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

function safe<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}
