/**
 * The flow network's clock: flows sharing links, max-min fairly (maxmin.ts solves the rates), in
 * time. A message is one flow per path (a multipath route splits its bytes evenly); a flow first
 * waits out its latency (the links' latencies plus the per-hop switching latency), then carries
 * its bytes at the rate the solver gives it. Rates are solved again whenever a flow starts
 * carrying bytes or finishes, once per instant (every change at one time is applied before rates
 * are solved again). A flow's progress is kept as (bytes left at t0, rate, t0), so moving time
 * costs nothing, and the flows' end times sit in a heap (entries made stale by a new rate are
 * skipped by version).
 *
 * Time in microseconds, bandwidth in bytes per microsecond, sizes in bytes. Everything is kept in
 * typed arrays that grow, so 10^5 concurrent flows over 10^5 links stay cheap.
 */
import { invariant } from "../../core/assert.js";
import { grow, MinHeap } from "../../core/growable.js";
import { type MaxMinOptions, MaxMinSolver } from "./maxmin.js";
import { MaxMinSystem } from "./maxmin-system.js";

/**
 * What a call's rate solves may cost, charged as they run (FlowNet charges each solve's work): a
 * meter throws SolveWorkExceeded past its limit, so a call too large to solve in reasonable time
 * is refused instead of running for minutes. One meter spans every FlowNet of a call.
 */
export interface WorkMeter {
  charge(work: number): void;
}

/** A call's solves passed their budget (the caller says which call and what to do instead). */
export class SolveWorkExceeded extends Error {
  constructor(
    readonly limit: number,
    /** How far the call got: so many of its messages (`what`: finished, started) of those it has. */
    readonly done?: { readonly count: number; readonly of: number; readonly what: string },
  ) {
    super(`the rate solves passed their budget of ${limit.toLocaleString("en")} link crossings scanned`);
    this.name = "SolveWorkExceeded";
  }
}

/** A meter in one thread. */
export class SolveBudget implements WorkMeter {
  spent = 0;
  constructor(readonly limit: number) {}
  charge(work: number): void {
    this.spent += work;
    if (this.spent > this.limit) throw new SolveWorkExceeded(this.limit);
  }
}

/** Two times closer than this (relative) are one instant: floating-point noise, not an ordering. */
const EPS = 1e-9;

const sameInstant = (a: number, b: number): boolean => Math.abs(a - b) <= EPS * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * The flows in flight on a set of links. add() a flow, then repeatedly ask next() for the time
 * the earliest flow finishes and take() the flows finishing then. Time only moves forward.
 */
export class FlowNet {
  /** Current time. */
  now = 0;
  // Flows (indices reused through `free`). A carrying flow has `left` bytes to go at time `since`.
  private left = new Float64Array(256);
  private since = new Float64Array(256);
  private tag = new Int32Array(256);
  /** Bumped on every new rate: the end-time heap's entries of older versions are stale. */
  private version = new Int32Array(256);
  /** When the flow started carrying (a counter): flows finishing together are told in that order. */
  private startSeq = new Float64Array(256);
  private seq = 0;
  private free: number[] = [];
  private flows = 0;
  /** Flows still in their latency, by the time it ends. */
  private waiting = new MinHeap();
  /** Carrying flows by the time they end at their current rates (stale versions skipped). */
  private ends = new MinHeap();
  /** The flows on their links, and their rates. */
  private readonly rates: MaxMinSystem;
  private readonly solver: MaxMinSolver;
  /** Bytes each link carried (every flow's bytes on every link of its path, counted when it is added), for reports and heat maps. */
  readonly linkBytes: Float64Array;

  /**
   * `compactAbove`: pool entries past which the holes finished flows leave are packed away.
   * `options`: the solver's, for tests (maxmin.ts).
   */
  constructor(
    bandwidth: Float64Array,
    private readonly compactAbove = 1 << 20,
    options: MaxMinOptions = {},
    /** Charged each solve's work (none: unbounded). */
    private readonly meter?: WorkMeter,
  ) {
    this.rates = new MaxMinSystem(bandwidth);
    this.solver = new MaxMinSolver(this.rates, (f, rate) => this.settle(f, rate), options);
    this.linkBytes = new Float64Array(bandwidth.length);
  }

  /** Flows added and not yet taken. */
  get inFlight(): number {
    return this.flows;
  }

  /** How many times rates were solved. */
  get solves(): number {
    return this.solver.solves;
  }

  /** The solves' work (maxmin.ts): one per solve and one per flow it solved again. */
  get work(): number {
    return this.solver.work;
  }

  /**
   * A flow of `bytes` along `path` (link ids) that starts carrying bytes at `from` (>= now: the
   * caller adds its latency). `tag` comes back from take(). Returns the flow's id.
   */
  add(bytes: number, path: ArrayLike<number>, from: number, tag: number): number {
    invariant(bytes > 0 && path.length > 0, () => `FlowNet.add: ${bytes} bytes over ${path.length} links`);
    invariant(from >= this.now - EPS * Math.max(1, this.now), () => `FlowNet.add at ${from} before now ${this.now}`);
    const f = this.free.pop() ?? this.flows + this.free.length;
    if (f >= this.left.length) {
      const n = f + 1;
      this.left = grow(this.left, n);
      this.since = grow(this.since, n);
      this.tag = grow(this.tag, n);
      this.version = grow(this.version, n);
      this.startSeq = grow(this.startSeq, n);
    }
    this.flows++;
    this.left[f] = bytes;
    this.tag[f] = tag;
    this.rates.addPath(f, path);
    const carried = this.linkBytes;
    for (let k = 0; k < path.length; k++) {
      const l = path[k] as number;
      carried[l] = (carried[l] as number) + bytes;
    }
    if (from <= this.now) this.activate(f);
    else this.waiting.push(from, f);
    return f;
  }

  /** The flow starts carrying bytes now. */
  private activate(f: number): void {
    this.since[f] = this.now;
    this.startSeq[f] = this.seq++;
    this.rates.activate(f);
  }

  /** Bytes left now at the flow's old rate (once per instant: a second call subtracts nothing). */
  private settle(f: number, r: number): void {
    if (r > 0) this.left[f] = (this.left[f] as number) - r * (this.now - (this.since[f] as number));
    this.since[f] = this.now;
  }

  /** The earliest end at the current rates, stale heap entries dropped (Infinity when none). */
  private firstEnd(): number {
    const ends = this.ends;
    while (ends.size > 0) {
      const f = ends.topId();
      if (this.rates.isCarrying(f) && ends.topVersion() === this.version[f]) return ends.peek();
      ends.pop();
    }
    return Number.POSITIVE_INFINITY;
  }

  /** When the next thing happens: a flow finishes, or one ends its latency and starts to share links (Infinity when none is in flight). */
  next(): number {
    if (this.rates.dirty) this.solve();
    const end = this.firstEnd();
    const wake = this.waiting.peek();
    return end < wake ? end : wake;
  }

  /**
   * Moves to next() and calls `done(tag)` for every flow finishing then (none when the event
   * was only a flow ending its latency); returns that time.
   */
  take(done: (tag: number) => void): number {
    const t = this.next();
    invariant(Number.isFinite(t), "FlowNet.take: nothing in flight");
    if (t > this.now) this.now = t;
    // What is left would take no more than noise: the flow is done.
    const by = t + EPS * Math.max(1, t);
    const finished: number[] = [];
    while (this.firstEnd() <= by) finished.push(this.ends.pop());
    // Told in the order they started carrying bytes, whatever order their ends came out of the heap.
    if (finished.length > 1) finished.sort((a, b) => (this.startSeq[a] as number) - (this.startSeq[b] as number));
    for (const f of finished) this.rates.deactivate(f);
    while (this.waiting.size > 0 && (this.waiting.peek() <= t || sameInstant(this.waiting.peek(), t))) {
      this.activate(this.waiting.pop());
    }
    for (const f of finished) {
      this.flows--;
      this.free.push(f);
      this.rates.release(f);
      done(this.tag[f] as number);
    }
    if (this.flows === 0) this.rates.clear();
    else this.rates.compact(this.compactAbove, () => [...this.rates.carryingFlows, ...this.waiting.ids()]);
    return t;
  }

  /** New rates where they can have changed, and new end times for the flows whose rate did. */
  private solve(): void {
    const before = this.solver.work;
    const flows = this.solver.solve();
    this.meter?.charge(this.solver.work - before);
    // New ends where the rate changed (the old entries of these flows are now stale); a flow
    // whose rate is what it was still ends when its entry says.
    const { ends, version, now, left } = this;
    const { rate } = this.rates;
    const { was } = this.solver;
    for (let k = 0; k < flows.length; k++) {
      const f = flows[k] as number;
      if (rate[f] === was[k]) continue;
      version[f] = (version[f] as number) + 1;
      ends.push(now + (left[f] as number) / (rate[f] as number), f, version[f] as number);
    }
    if (ends.size > 2 * this.rates.carryingCount + 1024) this.rebuildEnds();
  }

  /** Drops the stale entries of the end heap (it holds every past rate's end otherwise). */
  private rebuildEnds(): void {
    const ends = this.ends;
    ends.clear();
    const { rate } = this.rates;
    for (const f of this.rates.carryingFlows) {
      ends.push((this.since[f] as number) + (this.left[f] as number) / (rate[f] as number), f, this.version[f]);
    }
  }
}
