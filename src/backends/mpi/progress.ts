/**
 * The mpi backend's one progress loop, for the fast path's plan runs (plan-run.ts) and for the
 * point-to-point operations of a process (Progress below): each turn of Node's event loop, what
 * is ready is issued and every request in flight is tested by one native call (the addon's
 * progress: MPI_Testsome until a completion or a budget), and completions are handled in a loop
 * that keeps going while transfers complete, for at most a millisecond before the event loop gets
 * its turn (setImmediate: timeouts, aborts and the store's messages are never starved).
 *
 * How a wait without completions proceeds, by how long it has been idle (issue 26, measured in
 * docs/performance.md):
 *   - under SPIN_US (2 ms): the native call spins for BUDGET_US (100 µs) then hands the event
 *     loop a turn; where this node's ranks outnumber its cores it yields the core (sched_yield)
 *     between tests once a budget has passed. A transfer about to complete is seen within µs,
 *     and nothing in this stretch sleeps (the old loop fell to 1 ms timers after 200 idle turns);
 *   - from SPIN_US on: the peer is off the CPU or busy, so the native call sleeps (nanosleep)
 *     between tests, 1/16 of the time waited so far (at least 50 µs, at most 1 ms), for up to
 *     MAX_SLEEP_US per call (the event loop turns at least every ~2 ms): a waiting rank leaves
 *     its core to others (the descheduled peer among them) and adds at most ~6% to a wait, and a
 *     rank whose peer is gone wakes about a thousand times a second instead of burning a core
 *     until its timeout.
 * A driven thing that makes no progress for its timeout fails, naming what it waited on.
 */
import { availableParallelism } from "node:os";
import { CTRL } from "../../native/run-layout.js";
import type { NativeMpi } from "../../native/types.js";
import type { Scheduling } from "../../schedule/dataflow.js";

/** How long one native progress call may spin waiting for a completion, µs (and before it yields, where ranks outnumber cores). */
export const BUDGET_US = 100;
/** A wait idle this long, µs, starts sleeping between tests. */
export const SPIN_US = 2000;
/** The longest sleep between two tests, µs, and a sleeping native call's budget (it returns after at most one more sleep). */
export const MAX_SLEEP_US = 1000;
/** How long the loop handles completions before the event loop gets a turn, ms (read every 8th completion). */
const SLICE_MS = 1;

/** The sleep between tests of a wait idle for `idleUs`: none under SPIN_US, then 1/16 of it, 50 µs to 1 ms. */
export function sleepFor(idleUs: number): number {
  if (idleUs < SPIN_US) return 0;
  return Math.min(MAX_SLEEP_US, Math.max(50, idleUs / 16));
}

/**
 * Whether this node runs more ranks than it has cores (then a wait yields between tests, so a
 * spinning rank does not starve one that has work): mpirun's local size, else the comm's size.
 */
export function ranksOutnumberCores(size: number, env: NodeJS.ProcessEnv = process.env): boolean {
  const local = Number(env.OMPI_COMM_WORLD_LOCAL_SIZE ?? env.MPI_LOCALNRANKS ?? env.SLURM_NTASKS_PER_NODE);
  return (Number.isInteger(local) && local > 0 ? local : size) > availableParallelism();
}

/** What a ProgressLoop drives: one fast-path run of a plan, or a process's point-to-point operations. */
export interface Driven {
  /**
   * Issues what is ready, then tests what is in flight with the native progress call (its
   * budget, yield and sleep as given); returns how many completed, or -1 once nothing is left
   * to drive (done or failed): the loop then stops until started again.
   */
  pump(budgetUs: number, yieldCpu: boolean, sleepUs: number): number;
  /** A turn completed nothing, `idleMs` after the last completion; true if it gave up (timed out), stopping the loop. */
  idle(idleMs: number): boolean;
  /** The turn threw (an engine error outside a request's status): fail what is driven. */
  fail(e: unknown): void;
}

/** What the loops of this process did, for test/perf/stalls.ts: turns, turns that slept, turns without completions, the longest gap between turns (ms). */
export const loopStats = { turns: 0, sleeping: 0, empty: 0, maxGapMs: 0 };

export class ProgressLoop {
  /** Bumped by start(): a turn scheduled before it does nothing (an aborted call's turn never drives the next). */
  private gen = 0;
  private scheduled = false;
  /** performance.now() of the last completion, or of the start of the wait. */
  private idleSince = 0;
  /** When the pending turn was scheduled (performance.now()). */
  private scheduledAt = 0;

  constructor(
    private readonly driven: Driven,
    /** Whether this node runs more ranks than it has cores (then a wait yields between tests). */
    private readonly yieldCpu: boolean,
  ) {}

  /**
   * Starts driving afresh (a new call): one turn now, then on the event loop until done. The
   * clock is not read here: a call that completes in this turn never needs it (the wait's start
   * is taken as the end of this first turn, at most one budget late).
   */
  start(): void {
    this.gen++;
    this.scheduled = false;
    this.idleSince = -1;
    this.turn(this.gen);
  }

  /** Something new to drive (an operation added): the wait is young again, and a turn is scheduled if none is. */
  wake(): void {
    this.idleSince = performance.now();
    if (!this.scheduled) this.schedule(this.idleSince);
  }

  private schedule(now: number): void {
    this.scheduled = true;
    this.scheduledAt = now;
    setImmediate(this.turn, this.gen);
  }

  private readonly turn = (gen: number): void => {
    if (gen !== this.gen) return;
    const d = this.driven;
    // A call's first turn (idleSince -1) reads no clock: nothing has waited yet.
    const t = this.idleSince < 0 ? -1 : performance.now();
    if (this.scheduled) {
      this.scheduled = false;
      if (t - this.scheduledAt > loopStats.maxGapMs) loopStats.maxGapMs = t - this.scheduledAt;
    }
    loopStats.turns++;
    try {
      const idleUs = t < 0 ? 0 : (t - this.idleSince) * 1000;
      let sleep = sleepFor(idleUs);
      if (sleep > 0) loopStats.sleeping++;
      const yieldCpu = this.yieldCpu && idleUs >= BUDGET_US;
      let completions = 0;
      let sliceStart = 0;
      for (;;) {
        const done = d.pump(sleep > 0 ? MAX_SLEEP_US : BUDGET_US, yieldCpu, sleep);
        if (done < 0) return;
        if (done === 0) break;
        sleep = 0;
        completions += done;
        // The clock is read every 8th completion, not each (a small call completes a few in all).
        if ((completions & 7) === 0 || done > 7) {
          const now = performance.now();
          if (sliceStart === 0) sliceStart = now;
          else if (now - sliceStart >= SLICE_MS) break;
        }
      }
      const now = performance.now();
      if (completions > 0 || this.idleSince < 0) this.idleSince = now;
      else {
        loopStats.empty++;
        if (d.idle(now - this.idleSince)) return;
      }
      this.schedule(now);
    } catch (e) {
      d.fail(e);
    }
  };
}

/** One point-to-point operation the process's Progress drives to completion. */
export interface Pollable {
  /** Advances the operation without blocking (probe, post); returns the MPI request to test, if any. */
  advance(): number | undefined;
  /** The posted request completed with `bytes`, or failed. */
  complete(bytes: number | Error): void;
  /** ms since the epoch after which the operation times out. */
  readonly deadline: number;
  timeout(): void;
  fail(e: unknown): void;
  settled: boolean;
}

/**
 * The point-to-point operations of one process (send, recv, isend, irecv, group on any comm),
 * driven by one ProgressLoop: each pump advances every pending operation (a receive probes for
 * its message, then posts), tests every posted request in one native progress call, and times
 * out those past their deadline.
 */
export class Progress implements Driven {
  private readonly ops = new Set<Pollable>();
  private readonly loop: ProgressLoop;
  /** Requests in flight this pump and the operation of each; completions, 4 entries each. */
  private reqs = new Int32Array(8);
  private owners: Pollable[] = [];
  private out = new Int32Array(32);

  constructor(
    private readonly mpi: NativeMpi,
    yieldCpu = false,
  ) {
    this.loop = new ProgressLoop(this, yieldCpu);
  }

  add(op: Pollable): void {
    this.ops.add(op);
    this.loop.wake();
  }

  /** One non-blocking pass over every pending operation (Work.test()). */
  poll(): void {
    try {
      this.pump(0, false, 0);
    } catch (e) {
      this.fail(e);
    }
  }

  pump(budgetUs: number, yieldCpu: boolean, sleepUs: number): number {
    let n = 0;
    let progressed = 0;
    for (const op of this.ops) {
      if (op.settled) {
        this.ops.delete(op);
        continue;
      }
      const req = op.advance();
      if (req === undefined) {
        if (op.settled) progressed++;
        continue;
      }
      if (n === this.reqs.length) {
        const grown = new Int32Array(2 * n);
        grown.set(this.reqs);
        this.reqs = grown;
        this.out = new Int32Array(8 * n);
      }
      this.reqs[n] = req;
      this.owners[n] = op;
      n++;
    }
    // With nothing posted (receives still waiting for their message), a sleeping wait sleeps once here.
    const done = this.mpi.progress(n, this.reqs, this.out, budgetUs, yieldCpu, sleepUs);
    for (let k = 0; k < 4 * done; k += 4) {
      const op = this.owners[this.out[k] as number] as Pollable;
      const err = this.out[k + 3] as number;
      op.complete(err === 0 ? (this.out[k + 1] as number) : engineError(this.mpi, err));
      progressed++;
    }
    this.owners.length = 0;
    const now = Date.now();
    for (const op of this.ops) {
      if (op.settled) this.ops.delete(op);
      else if (now > op.deadline) {
        op.timeout();
        this.ops.delete(op);
      }
    }
    return this.ops.size === 0 ? -1 : progressed;
  }

  idle(): boolean {
    return false;
  }

  /** An engine error outside any request's status: every pending operation fails with it. */
  fail(e: unknown): void {
    for (const op of this.ops) op.fail(e);
    this.ops.clear();
  }
}

/** A request's failure as the operations see it: the message, with MPI's code on it. */
function engineError(mpi: NativeMpi, code: number): Error {
  return Object.assign(new Error(mpi.errorString(code)), { code });
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
