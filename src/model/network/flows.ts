/**
 * Flows sharing links, max-min fairly: the flow model of SimGrid's network layer (LV08 without
 * its corrections). A message is one flow per path (a multipath route splits its bytes evenly);
 * a flow first waits out its latency (the links' latencies plus the per-hop switching latency),
 * then carries its bytes at the rate progressive filling gives it: every link's bandwidth is
 * shared equally among the flows crossing it, a flow limited elsewhere leaving its share to the
 * others. Rates are re-evaluated whenever a flow starts carrying bytes or finishes, once per
 * instant (every change at one time is applied before rates are solved again).
 *
 * Time in microseconds, bandwidth in bytes per microsecond, sizes in bytes. Everything is kept in
 * typed arrays that grow, so 10^5 concurrent flows over 10^5 links stay cheap.
 */
import { invariant } from "../../core/assert.js";

/** Two times closer than this (relative) are one instant: floating-point noise, not an ordering. */
const EPS = 1e-9;

const sameInstant = (a: number, b: number): boolean => Math.abs(a - b) <= EPS * Math.max(1, Math.abs(a), Math.abs(b));

/** A binary min-heap of (time, id). */
class TimeHeap {
  private t = new Float64Array(64);
  private id = new Int32Array(64);
  size = 0;
  push(time: number, id: number): void {
    if (this.size === this.t.length) {
      const t = new Float64Array(this.size * 2);
      t.set(this.t);
      this.t = t;
      const ids = new Int32Array(this.size * 2);
      ids.set(this.id);
      this.id = ids;
    }
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((this.t[p] as number) <= time) break;
      this.t[i] = this.t[p] as number;
      this.id[i] = this.id[p] as number;
      i = p;
    }
    this.t[i] = time;
    this.id[i] = id;
  }
  peek(): number {
    return this.size > 0 ? (this.t[0] as number) : Number.POSITIVE_INFINITY;
  }
  /** The ids held, in no order. */
  ids(): Int32Array {
    return this.id.subarray(0, this.size);
  }
  pop(): number {
    const top = this.id[0] as number;
    const last = --this.size;
    if (last > 0) {
      const time = this.t[last] as number;
      const id = this.id[last] as number;
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= last) break;
        if (c + 1 < last && (this.t[c + 1] as number) < (this.t[c] as number)) c++;
        if (time <= (this.t[c] as number)) break;
        this.t[i] = this.t[c] as number;
        this.id[i] = this.id[c] as number;
        i = c;
      }
      this.t[i] = time;
      this.id[i] = id;
    }
    return top;
  }
}

function grow<T extends Float64Array | Int32Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

export interface LinkUse {
  /** Bytes the link carried (every flow's bytes on every link of its path, counted when it is added). */
  readonly bytes: Float64Array;
}

/**
 * The flows in flight on a set of links. add() a flow, then repeatedly ask next() for the time
 * the earliest flow finishes and take() the flows finishing then. Time only moves forward.
 */
export class FlowNet {
  /** Current time. */
  now = 0;
  private readonly cap: Float64Array;
  private readonly nlinks: number;
  // Flows (indices reused through `free`).
  private remaining = new Float64Array(256);
  private rate = new Float64Array(256);
  private pathStart = new Int32Array(256);
  private pathLen = new Int32Array(256);
  private tag = new Int32Array(256);
  private pool = new Int32Array(4096);
  private poolUsed = 0;
  /** Links on the paths of the flows in flight (what the pool must hold). */
  private incidences = 0;
  private free: number[] = [];
  private flows = 0;
  /** Flows carrying bytes now. */
  private active: number[] = [];
  /** Flows still in their latency, by the time it ends. */
  private waiting = new TimeHeap();
  private dirty = false;
  /** When the first active flow ends at the current rates (valid while not dirty). */
  private firstEnd = Number.POSITIVE_INFINITY;
  // Scratch for the solver, per link.
  private readonly left: Float64Array;
  private readonly count: Int32Array;
  private readonly linkFlowStart: Int32Array;
  private readonly linkFlowEnd: Int32Array;
  private linkFlows = new Int32Array(4096);
  private frozen = new Uint8Array(256);
  /** Per-link use, for reports and heat maps. */
  readonly use: LinkUse;
  /** How many times rates were solved (the work the model did). */
  solves = 0;

  /** `compactAbove`: pool entries past which the holes finished flows leave are packed away. */
  constructor(
    bandwidth: Float64Array,
    private readonly compactAbove = 1 << 20,
  ) {
    this.nlinks = bandwidth.length;
    this.cap = bandwidth;
    this.left = new Float64Array(this.nlinks);
    this.count = new Int32Array(this.nlinks);
    this.linkFlowStart = new Int32Array(this.nlinks);
    this.linkFlowEnd = new Int32Array(this.nlinks);
    this.use = { bytes: new Float64Array(this.nlinks) };
  }

  /** Flows added and not yet taken. */
  get inFlight(): number {
    return this.flows;
  }

  /**
   * A flow of `bytes` along `path` (link ids) that starts carrying bytes at `from` (>= now: the
   * caller adds its latency). `tag` comes back from take(). Returns the flow's id.
   */
  add(bytes: number, path: readonly number[], from: number, tag: number): number {
    invariant(bytes > 0 && path.length > 0, () => `FlowNet.add: ${bytes} bytes over ${path.length} links`);
    invariant(from >= this.now - EPS * Math.max(1, this.now), () => `FlowNet.add at ${from} before now ${this.now}`);
    const f = this.free.pop() ?? this.flows + this.free.length;
    if (f >= this.remaining.length) {
      const n = f + 1;
      this.remaining = grow(this.remaining, n);
      this.rate = grow(this.rate, n);
      this.pathStart = grow(this.pathStart, n);
      this.pathLen = grow(this.pathLen, n);
      this.tag = grow(this.tag, n);
    }
    this.flows++;
    this.remaining[f] = bytes;
    this.rate[f] = 0;
    this.tag[f] = tag;
    this.pool = grow(this.pool, this.poolUsed + path.length);
    this.pathStart[f] = this.poolUsed;
    this.pathLen[f] = path.length;
    this.incidences += path.length;
    const carried = this.use.bytes;
    for (const l of path) {
      invariant(l >= 0 && l < this.nlinks, () => `FlowNet.add: link ${l} of ${this.nlinks}`);
      this.pool[this.poolUsed++] = l;
      carried[l] = (carried[l] as number) + bytes;
    }
    if (from <= this.now) this.activate(f);
    else this.waiting.push(from, f);
    return f;
  }

  private activate(f: number): void {
    this.active.push(f);
    this.dirty = true;
  }

  /** When the next thing happens: a flow finishes, or one ends its latency and starts to share links (Infinity when none is in flight). */
  next(): number {
    if (this.dirty) this.solve();
    const wake = this.waiting.peek();
    return this.firstEnd < wake ? this.firstEnd : wake;
  }

  /**
   * Moves to next() and calls `done(tag)` for every flow finishing then (none when the event
   * was only a flow ending its latency); returns that time.
   */
  take(done: (tag: number) => void): number {
    const t = this.next();
    invariant(Number.isFinite(t), "FlowNet.take: nothing in flight");
    this.advance(t);
    const still: number[] = [];
    const finished: number[] = [];
    for (const f of this.active) {
      // What is left would take no more than noise: the flow is done.
      if ((this.remaining[f] as number) <= (this.rate[f] as number) * EPS * Math.max(1, t)) finished.push(f);
      else still.push(f);
    }
    if (finished.length > 0) {
      this.active = still;
      this.dirty = true;
    }
    while (this.waiting.size > 0 && (this.waiting.peek() <= t || sameInstant(this.waiting.peek(), t))) {
      this.activate(this.waiting.pop());
    }
    for (const f of finished) {
      this.flows--;
      this.incidences -= this.pathLen[f] as number;
      this.free.push(f);
      if (this.pathStart[f]! + this.pathLen[f]! === this.poolUsed) this.poolUsed = this.pathStart[f] as number;
      done(this.tag[f] as number);
    }
    if (this.flows === 0) this.poolUsed = 0;
    else if (this.poolUsed > this.compactAbove && this.poolUsed > 4 * this.incidences) this.compact();
    return t;
  }

  private advance(t: number): void {
    const dt = t - this.now;
    if (dt > 0) {
      for (const f of this.active) this.remaining[f] = (this.remaining[f] as number) - (this.rate[f] as number) * dt;
    }
    if (t > this.now) this.now = t;
  }

  /** Paths of finished flows leave holes in the pool: past a size, the live ones are packed to its front. */
  private compact(): void {
    const live = [...this.active, ...this.waiting.ids()];
    const pool = new Int32Array(Math.max(4096, 2 * this.incidences));
    let used = 0;
    for (const f of live) {
      const s = this.pathStart[f] as number;
      const len = this.pathLen[f] as number;
      pool.set(this.pool.subarray(s, s + len), used);
      this.pathStart[f] = used;
      used += len;
    }
    this.pool = pool;
    this.poolUsed = used;
  }

  /** Max-min fair rates for the active flows by progressive filling. */
  private solve(): void {
    this.dirty = false;
    this.solves++;
    const flows = this.active;
    if (flows.length === 0) {
      this.firstEnd = Number.POSITIVE_INFINITY;
      return;
    }
    const { count, left, linkFlowStart, cap } = this;
    // Links in use, and per link the flows crossing it (CSR).
    const used: number[] = [];
    let incidences = 0;
    for (const f of flows) {
      const s = this.pathStart[f] as number;
      for (let i = s; i < s + (this.pathLen[f] as number); i++) {
        const l = this.pool[i] as number;
        if (count[l] === 0) used.push(l);
        count[l] = (count[l] as number) + 1;
        incidences++;
      }
    }
    this.linkFlows = grow(this.linkFlows, incidences);
    const end = this.linkFlowEnd;
    let acc = 0;
    for (const l of used) {
      linkFlowStart[l] = acc;
      end[l] = acc;
      acc += count[l] as number;
      left[l] = cap[l] as number;
    }
    for (const f of flows) {
      const s = this.pathStart[f] as number;
      for (let i = s; i < s + (this.pathLen[f] as number); i++) {
        const l = this.pool[i] as number;
        this.linkFlows[end[l]!++] = f;
      }
    }
    if (this.frozen.length < this.remaining.length) this.frozen = new Uint8Array(this.remaining.length);
    const frozen = this.frozen;
    for (const f of flows) frozen[f] = 0;
    // Progressive filling: the link with the smallest fair share fixes the rate of every flow
    // crossing it; those flows leave, and their rate is taken from every other link they cross.
    let open = used.slice();
    let unfixed = flows.length;
    while (unfixed > 0) {
      let share = Number.POSITIVE_INFINITY;
      const next: number[] = [];
      for (const l of open) {
        if ((count[l] as number) === 0) continue;
        next.push(l);
        const s = (left[l] as number) / (count[l] as number);
        if (s < share) share = s;
      }
      open = next;
      invariant(
        Number.isFinite(share) && share > 0,
        () => `FlowNet: no positive share (${share}) for ${unfixed} flows`,
      );
      for (const l of open) {
        const c = count[l] as number;
        if (c === 0 || (left[l] as number) / c > share * (1 + EPS)) continue;
        for (let k = linkFlowStart[l] as number; k < (end[l] as number); k++) {
          const f = this.linkFlows[k] as number;
          if (frozen[f]) continue;
          frozen[f] = 1;
          unfixed--;
          this.rate[f] = share;
          const s = this.pathStart[f] as number;
          for (let i = s; i < s + (this.pathLen[f] as number); i++) {
            const m = this.pool[i] as number;
            left[m] = Math.max(0, (left[m] as number) - share);
            count[m] = (count[m] as number) - 1;
          }
        }
      }
    }
    for (const l of used) count[l] = 0;
    this.ends();
  }

  /** The first end at the current rates. */
  private ends(): void {
    let t = Number.POSITIVE_INFINITY;
    for (const f of this.active) {
      const end = this.now + (this.remaining[f] as number) / (this.rate[f] as number);
      if (end < t) t = end;
    }
    this.firstEnd = t;
  }
}
