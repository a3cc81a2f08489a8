/**
 * Flows sharing links, max-min fairly: the flow model of SimGrid's network layer (LV08 without
 * its corrections). A message is one flow per path (a multipath route splits its bytes evenly);
 * a flow first waits out its latency (the links' latencies plus the per-hop switching latency),
 * then carries its bytes at the rate progressive filling gives it: every link's bandwidth is
 * shared equally among the flows crossing it, a flow limited elsewhere leaving its share to the
 * others. Rates are re-evaluated whenever a flow starts carrying bytes or finishes, once per
 * instant (every change at one time is applied before rates are solved again).
 *
 * Solving is incremental, with the same rates as solving every flow afresh (up to floating-point
 * noise; test/network-flows.test.ts checks it against a from-scratch solver): rates below the
 * level a change can reach stay (solve() says why), and the flows above it split into connected
 * components of the graph of flows and the links they cross, of which only those holding a link
 * of a flow that started or finished are solved again. A flow's progress is kept as (bytes left at
 * t0, rate, t0), so moving time costs nothing, and the flows' end times sit in a heap (entries
 * made stale by a new rate are skipped by version). Progressive filling takes the links by fair
 * share from a heap, so a solve costs O(I log I) for the I link crossings it covers.
 *
 * Time in microseconds, bandwidth in bytes per microsecond, sizes in bytes. Everything is kept in
 * typed arrays that grow, so 10^5 concurrent flows over 10^5 links stay cheap.
 */
import { invariant } from "../../core/assert.js";

/** Two times closer than this (relative) are one instant: floating-point noise, not an ordering. */
const EPS = 1e-9;

/** Relative slack of the bottleneck test (a link full, no flow faster): above the filling's own noise (EPS). */
const SLACK = 1e-8;

/** Rounds of local repair before a solve falls back to every flow above the changes' level. */
const LOCAL_ROUNDS = 32;

const sameInstant = (a: number, b: number): boolean => Math.abs(a - b) <= EPS * Math.max(1, Math.abs(a), Math.abs(b));

/** A binary min-heap of (key, id, version); the version lets a caller skip entries it has superseded (the phases walker's event queue too). */
export class Heap {
  private k = new Float64Array(64);
  private i = new Int32Array(64);
  private v = new Int32Array(64);
  size = 0;
  push(key: number, id: number, version = 0): void {
    if (this.size === this.k.length) {
      this.k = grow(this.k, this.size * 2);
      this.i = grow(this.i, this.size * 2);
      this.v = grow(this.v, this.size * 2);
    }
    const { k, i: ids, v } = this;
    let at = this.size++;
    while (at > 0) {
      const p = (at - 1) >> 1;
      if ((k[p] as number) <= key) break;
      k[at] = k[p] as number;
      ids[at] = ids[p] as number;
      v[at] = v[p] as number;
      at = p;
    }
    k[at] = key;
    ids[at] = id;
    v[at] = version;
  }
  /** The smallest key (Infinity when empty). */
  peek(): number {
    return this.size > 0 ? (this.k[0] as number) : Number.POSITIVE_INFINITY;
  }
  /** The id and version of the smallest key (size > 0). */
  topId(): number {
    return this.i[0] as number;
  }
  topVersion(): number {
    return this.v[0] as number;
  }
  /** The ids held, in no order. */
  ids(): Int32Array {
    return this.i.subarray(0, this.size);
  }
  clear(): void {
    this.size = 0;
  }
  /** Removes the smallest key; returns its id. */
  pop(): number {
    const { k, i: ids, v } = this;
    const top = ids[0] as number;
    const last = --this.size;
    if (last > 0) {
      const key = k[last] as number;
      const id = ids[last] as number;
      const ver = v[last] as number;
      let at = 0;
      for (;;) {
        let c = 2 * at + 1;
        if (c >= last) break;
        if (c + 1 < last && (k[c + 1] as number) < (k[c] as number)) c++;
        if (key <= (k[c] as number)) break;
        k[at] = k[c] as number;
        ids[at] = ids[c] as number;
        v[at] = v[c] as number;
        at = c;
      }
      k[at] = key;
      ids[at] = id;
      v[at] = ver;
    }
    return top;
  }
}

/** `a`, or a copy with room for `need` elements (at least twice as many): the model's growing typed arrays. */
export function grow<T extends Float64Array | Int32Array | Uint8Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

export interface LinkUse {
  /** Bytes the link carried (every flow's bytes on every link of its path, counted when it is added). */
  readonly bytes: Float64Array;
}

const FREE = 0;
const WAITING = 1;
const ACTIVE = 2;

/**
 * The flows in flight on a set of links. add() a flow, then repeatedly ask next() for the time
 * the earliest flow finishes and take() the flows finishing then. Time only moves forward.
 */
export class FlowNet {
  /** Current time. */
  now = 0;
  private readonly cap: Float64Array;
  private readonly nlinks: number;
  // Flows (indices reused through `free`). A carrying flow has `left` bytes to go at time `since`.
  private left = new Float64Array(256);
  private since = new Float64Array(256);
  private rate = new Float64Array(256);
  private pathStart = new Int32Array(256);
  private pathLen = new Int32Array(256);
  private tag = new Int32Array(256);
  private state = new Uint8Array(256);
  /** Bumped on every new rate: the end-time heap's entries of older versions are stale. */
  private version = new Int32Array(256);
  /** Where the flow sits in `active`. */
  private activePos = new Int32Array(256);
  /** When the flow started carrying (a counter): flows finishing together are told in that order. */
  private startSeq = new Float64Array(256);
  private seq = 0;
  /** The solve (epoch) that last reached the flow, and whether its rate is fixed in that solve. */
  private seen = new Int32Array(256);
  private fixed = new Uint8Array(256);
  /** The link that fixed the flow's rate in its last filling; a link where it was last found bottlenecked (-1: none yet). */
  private fixedBy = new Int32Array(256);
  private hint = new Int32Array(256);
  /** Links of every flow's path, packed; per entry (a crossing), while its flow carries bytes, its place in the link's lists. */
  private pool = new Int32Array(4096);
  private poolPos = new Int32Array(4096);
  private poolUsed = 0;
  /** Links on the paths of the flows in flight (what the pool must hold). */
  private incidences = 0;
  private free: number[] = [];
  private flows = 0;
  /** Flows carrying bytes now. */
  private active = new Int32Array(256);
  private nactive = 0;
  /** Per link, the flows carrying bytes over it, and (in the same order) their pool entries for that link. */
  private readonly crossing: number[][];
  private readonly entries: number[][];
  /** Flows still in their latency, by the time it ends. */
  private waiting = new Heap();
  /** Carrying flows by the time they end at their current rates (stale versions skipped). */
  private ends = new Heap();
  /** Links whose flows changed since the last solve. */
  private touched: number[] = [];
  /** Flows that started carrying bytes since the last solve. */
  private started: number[] = [];
  /** The smallest rate of a flow that ended since the last solve. */
  private floor = Number.POSITIVE_INFINITY;
  private dirty = false;
  private epoch = 0;
  // Scratch for the solver, per link.
  /** Bandwidth not yet given to a fixed flow. */
  private readonly spare: Float64Array;
  private readonly count: Int32Array;
  private readonly linkSeen: Int32Array;
  private readonly linkTouched: Uint8Array;
  private readonly byShare = new Heap();
  /** Per link, the sum and the largest of its flows' rates, valid while statSeen is the current check's. */
  private readonly load: Float64Array;
  private readonly fastest: Float64Array;
  private readonly statSeen: Int32Array;
  private statEpoch = 0;
  /** Per link, the round of local repair that last found a rate on it changed. */
  private readonly linkMoved: Int32Array;
  private moveEpoch = 0;
  /** Per link, during a local repair: the flows of S on it, and the bandwidth the flows outside S hold. */
  private readonly inS: Int32Array;
  private readonly heldOut: Float64Array;
  /**
   * Flows whose hint changed in this solve: where the local repair falls back, the hints it
   * gave may not hold at the rates the fallback finds. (Between solves every carrying flow's hint
   * is a bottleneck it has.)
   */
  private rehinted: number[] = [];
  /** The rates the flows a solve returns had before it (in its order). */
  private was: number[] = [];
  private rehintedIn = new Int32Array(256);
  /** Per-link use, for reports and heat maps. */
  readonly use: LinkUse;
  /**
   * How many times rates were solved (the work the model did): once per instant at which flows
   * started carrying bytes or finished, each solve covering only the components those flows touch.
   */
  solves = 0;

  private readonly localRounds: number;
  private readonly audit: boolean;

  /**
   * `compactAbove`: pool entries past which the holes finished flows leave are packed away.
   * Options, for tests: `localRounds`, rounds of local repair before a solve falls back
   * (solveLocal, solveAbove); `audit`, check after every solve that no link carries more than its
   * bandwidth and that every carrying flow is bottlenecked at the link it remembers (the rates
   * are max-min fair), at a cost of every flow and link per solve.
   */
  constructor(
    bandwidth: Float64Array,
    private readonly compactAbove = 1 << 20,
    options: { readonly localRounds?: number; readonly audit?: boolean } = {},
  ) {
    this.localRounds = options.localRounds ?? LOCAL_ROUNDS;
    this.audit = options.audit ?? false;
    this.nlinks = bandwidth.length;
    this.cap = bandwidth;
    this.spare = new Float64Array(this.nlinks);
    this.count = new Int32Array(this.nlinks);
    this.linkSeen = new Int32Array(this.nlinks);
    this.linkTouched = new Uint8Array(this.nlinks);
    this.load = new Float64Array(this.nlinks);
    this.fastest = new Float64Array(this.nlinks);
    this.statSeen = new Int32Array(this.nlinks);
    this.linkMoved = new Int32Array(this.nlinks);
    this.inS = new Int32Array(this.nlinks);
    this.heldOut = new Float64Array(this.nlinks);
    this.crossing = new Array(this.nlinks);
    this.entries = new Array(this.nlinks);
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
  add(bytes: number, path: ArrayLike<number>, from: number, tag: number): number {
    invariant(bytes > 0 && path.length > 0, () => `FlowNet.add: ${bytes} bytes over ${path.length} links`);
    invariant(from >= this.now - EPS * Math.max(1, this.now), () => `FlowNet.add at ${from} before now ${this.now}`);
    const f = this.free.pop() ?? this.flows + this.free.length;
    if (f >= this.left.length) {
      const n = f + 1;
      this.left = grow(this.left, n);
      this.since = grow(this.since, n);
      this.rate = grow(this.rate, n);
      this.pathStart = grow(this.pathStart, n);
      this.pathLen = grow(this.pathLen, n);
      this.tag = grow(this.tag, n);
      this.state = grow(this.state, n);
      this.version = grow(this.version, n);
      this.activePos = grow(this.activePos, n);
      this.startSeq = grow(this.startSeq, n);
      this.seen = grow(this.seen, n);
      this.fixed = grow(this.fixed, n);
      this.fixedBy = grow(this.fixedBy, n);
      this.hint = grow(this.hint, n);
      this.rehintedIn = grow(this.rehintedIn, n);
      this.active = grow(this.active, n);
    }
    this.flows++;
    this.left[f] = bytes;
    this.rate[f] = 0;
    this.hint[f] = -1;
    this.tag[f] = tag;
    const need = this.poolUsed + path.length;
    this.pool = grow(this.pool, need);
    this.poolPos = grow(this.poolPos, need);
    this.pathStart[f] = this.poolUsed;
    this.pathLen[f] = path.length;
    this.incidences += path.length;
    const carried = this.use.bytes;
    for (let k = 0; k < path.length; k++) {
      const l = path[k] as number;
      invariant(l >= 0 && l < this.nlinks, () => `FlowNet.add: link ${l} of ${this.nlinks}`);
      this.pool[this.poolUsed++] = l;
      carried[l] = (carried[l] as number) + bytes;
    }
    if (from <= this.now) this.activate(f);
    else {
      this.state[f] = WAITING;
      this.waiting.push(from, f);
    }
    return f;
  }

  private touch(l: number): void {
    if (this.linkTouched[l]) return;
    this.linkTouched[l] = 1;
    this.touched.push(l);
  }

  /** The flow starts carrying bytes now: it joins its links' lists. */
  private activate(f: number): void {
    this.state[f] = ACTIVE;
    this.since[f] = this.now;
    this.startSeq[f] = this.seq++;
    this.activePos[f] = this.nactive;
    this.active[this.nactive++] = f;
    this.started.push(f);
    const s = this.pathStart[f] as number;
    for (let i = s; i < s + (this.pathLen[f] as number); i++) {
      const l = this.pool[i] as number;
      let list = this.crossing[l];
      let entries = this.entries[l];
      if (list === undefined || entries === undefined) {
        list = [];
        entries = [];
        this.crossing[l] = list;
        this.entries[l] = entries;
      }
      this.poolPos[i] = list.length;
      list.push(f);
      entries.push(i);
      this.touch(l);
    }
    this.dirty = true;
  }

  /** The flow stops carrying bytes: it leaves its links' lists and the active set. */
  private deactivate(f: number): void {
    this.state[f] = FREE;
    this.floor = Math.min(this.floor, this.rate[f] as number);
    const at = this.activePos[f] as number;
    const last = this.active[--this.nactive] as number;
    this.active[at] = last;
    this.activePos[last] = at;
    const s = this.pathStart[f] as number;
    for (let i = s; i < s + (this.pathLen[f] as number); i++) {
      const l = this.pool[i] as number;
      const list = this.crossing[l] as number[];
      const entries = this.entries[l] as number[];
      const movedFlow = list.pop() as number;
      const moved = entries.pop() as number;
      if (moved !== i) {
        const p = this.poolPos[i] as number;
        list[p] = movedFlow;
        entries[p] = moved;
        this.poolPos[moved] = p;
      }
      this.touch(l);
    }
    this.dirty = true;
  }

  /** The earliest end at the current rates, stale heap entries dropped (Infinity when none). */
  private firstEnd(): number {
    const ends = this.ends;
    while (ends.size > 0) {
      const f = ends.topId();
      if (this.state[f] === ACTIVE && ends.topVersion() === this.version[f]) return ends.peek();
      ends.pop();
    }
    return Number.POSITIVE_INFINITY;
  }

  /** When the next thing happens: a flow finishes, or one ends its latency and starts to share links (Infinity when none is in flight). */
  next(): number {
    if (this.dirty) this.solve();
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
    for (const f of finished) this.deactivate(f);
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

  /** Paths of finished flows leave holes in the pool: past a size, the live ones are packed to its front. */
  private compact(): void {
    const live = [...this.active.subarray(0, this.nactive), ...this.waiting.ids()];
    const size = Math.max(4096, 2 * this.incidences);
    const pool = new Int32Array(size);
    const poolPos = new Int32Array(size);
    let used = 0;
    for (const f of live) {
      const s = this.pathStart[f] as number;
      const len = this.pathLen[f] as number;
      const carrying = this.state[f] === ACTIVE;
      for (let k = 0; k < len; k++) {
        const l = this.pool[s + k] as number;
        pool[used + k] = l;
        if (carrying) {
          const p = this.poolPos[s + k] as number;
          poolPos[used + k] = p;
          (this.entries[l] as number[])[p] = used + k;
        }
      }
      this.pathStart[f] = used;
      used += len;
    }
    this.pool = pool;
    this.poolPos = poolPos;
    this.poolUsed = used;
  }

  /**
   * Max-min fair rates where they can have changed since the last solve: first locally
   * (solveLocal), and where that does not settle in a few rounds, every flow at or above the
   * smallest level the changes can reach (solveAbove).
   */
  private solve(): void {
    this.dirty = false;
    this.solves++;
    const { pool, crossing, pathStart, pathLen, cap } = this;
    let floor = this.floor;
    for (const g of this.started) {
      if (this.state[g] !== ACTIVE) continue;
      const s = pathStart[g] as number;
      for (let i = s; i < s + (pathLen[g] as number); i++) {
        const l = pool[i] as number;
        floor = Math.min(floor, (cap[l] as number) / (crossing[l] as number[]).length);
      }
    }
    this.started.length = 0;
    this.floor = Number.POSITIVE_INFINITY;
    const seeds = this.touched;
    this.touched = [];
    for (const l of seeds) this.linkTouched[l] = 0;
    this.rehinted.length = 0;
    // Where the changes touch a large part of the flows (many starting at once), one pass over
    // every flow above their level costs less than a local repair.
    let touching = 0;
    for (const l of seeds) touching += crossing[l]?.length ?? 0;
    // Rates below `keep` stay (a margin well above the noise of the filling's own rounding).
    const keep = floor * (1 - 1e-6);
    const flows = (8 * touching > this.incidences ? undefined : this.solveLocal(seeds)) ?? this.solveAbove(seeds, keep);
    // New ends where the rate changed (the old entries of these flows are now stale); a flow
    // whose rate is what it was still ends when its entry says.
    const { ends, version, now, left, rate, was } = this;
    for (let k = 0; k < flows.length; k++) {
      const f = flows[k] as number;
      if (rate[f] === was[k]) continue;
      version[f] = (version[f] as number) + 1;
      ends.push(now + (left[f] as number) / (rate[f] as number), f, version[f] as number);
    }
    if (ends.size > 2 * this.nactive + 1024) this.rebuildEnds();
    if (this.audit) this.check();
  }

  /** The audit: rates feasible, and every carrying flow bottlenecked at its hint. */
  private check(): void {
    const stat = ++this.statEpoch;
    for (let k = 0; k < this.nactive; k++) {
      const f = this.active[k] as number;
      const h = this.hint[f] as number;
      invariant(
        h >= 0 && this.bottleneckAt(f, h, stat),
        () => `FlowNet audit: flow ${f} is not bottlenecked at link ${h}`,
      );
    }
    for (let l = 0; l < this.nlinks; l++) {
      if (this.statSeen[l] !== stat) continue;
      invariant(
        (this.load[l] as number) <= (this.cap[l] as number) * (1 + SLACK),
        () => `FlowNet audit: link ${l} carries ${this.load[l]} of ${this.cap[l]}`,
      );
    }
  }

  /** Bytes left now at the flow's old rate (once per instant: a second call subtracts nothing). */
  private settle(f: number): void {
    const r = this.rate[f] as number;
    if (r > 0) this.left[f] = (this.left[f] as number) - r * (this.now - (this.since[f] as number));
    this.since[f] = this.now;
  }

  /**
   * Local repair. Rates are max-min fair exactly when every flow has a bottleneck: a full link
   * on its path where no flow is faster (Bertsekas and Gallager, Data Networks, 6.5). Starting
   * from the flows that started and those on a changed link that lost their bottleneck (a flow
   * whose bottleneck is elsewhere keeps its rate while nothing else moves), the set S of flows is
   * solved by progressive filling
   * in what the other flows leave of each link; then every flow of S must be no slower than the
   * others on the link that fixed it, and every other flow on a link S crosses must still have a
   * bottleneck. The flows that fail join S, and S is solved again. When nothing fails, every flow
   * has a bottleneck (a flow on no link of S or of a change has its links as they were): the rates
   * are the max-min fair ones. Returns the flows solved, or undefined (their old rates put back)
   * where S did not settle within LOCAL_ROUNDS.
   */
  private solveLocal(seeds: readonly number[]): number[] | undefined {
    const epoch = ++this.epoch;
    const { pool, crossing, linkSeen, linkMoved, seen, pathStart, pathLen, rate, cap, count, spare } = this;
    const { fixedBy, hint } = this;
    const flows: number[] = [];
    const was = this.was;
    was.length = 0;
    /** Per flow of S, its rate after the last round (before the first: `was`). */
    const prev: number[] = [];
    const links: number[] = [];
    // Per link of S's paths, the flows of S on it and the bandwidth the others hold, kept up to
    // date as flows join S (a flow outside S keeps its rate through the solve).
    const { inS, heldOut } = this;
    const addLink = (l: number) => {
      if (linkSeen[l] === epoch) return;
      linkSeen[l] = epoch;
      links.push(l);
      let n = 0;
      let held = 0;
      for (const f of crossing[l] ?? []) {
        if (seen[f] === epoch) n++;
        else held += rate[f] as number;
      }
      inS[l] = n;
      heldOut[l] = held;
    };
    const addFlow = (f: number) => {
      if (seen[f] === epoch) return;
      seen[f] = epoch;
      const r = rate[f] as number;
      flows.push(f);
      was.push(r);
      prev.push(r);
      this.settle(f);
      const s = pathStart[f] as number;
      const e = s + (pathLen[f] as number);
      for (let i = s; i < e; i++) {
        const m = pool[i] as number;
        if (linkSeen[m] !== epoch) continue;
        inS[m] = (inS[m] as number) + 1;
        heldOut[m] = (heldOut[m] as number) - r;
      }
      for (let i = s; i < e; i++) addLink(pool[i] as number);
    };
    for (const l of seeds) addLink(l);
    // S starts as the flows that started and those on a changed link left with no bottleneck.
    const before = ++this.statEpoch;
    for (const l of seeds) {
      for (const g of crossing[l] ?? []) {
        if (seen[g] !== epoch && ((rate[g] as number) === 0 || !this.bottlenecked(g, before))) addFlow(g);
      }
    }
    for (let round = 0; flows.length > 0; round++) {
      // Over a large part of the flows, one pass over every flow above the changes' level costs less.
      if (round === this.localRounds || 8 * flows.length > this.nactive) {
        // Put back; the hints these flows were given may not hold at the rates the fallback finds.
        flows.forEach((f, k) => {
          rate[f] = was[k] as number;
          this.rehinted.push(f);
        });
        return undefined;
      }
      // What the flows outside S leave of each link S crosses.
      for (const l of links) {
        count[l] = inS[l] as number;
        spare[l] = Math.max(0, (cap[l] as number) - (heldOut[l] as number));
      }
      this.fill(flows, links, epoch, true);
      const stat = ++this.statEpoch;
      const solved = flows.length;
      for (let k = 0; k < solved; k++) {
        const f = flows[k] as number;
        const l = fixedBy[f] as number;
        const most = (rate[f] as number) * (1 + SLACK);
        let ok = true;
        for (const g of crossing[l] as number[]) {
          if (seen[g] !== epoch && (rate[g] as number) > most) {
            addFlow(g);
            ok = false;
          }
        }
        if (ok) hint[f] = l;
      }
      // The links that moved: those of a change (in the first round), and those of a flow of S
      // whose rate is not what it was after the last round (before the first: before this
      // solve). A flow outside S was found bottlenecked at its hint when that link last moved
      // (or holds it from before this solve): where it did not move, the flow still is.
      const moved = ++this.moveEpoch;
      const changed: number[] = [];
      const mark = (l: number) => {
        if (linkMoved[l] === moved) return;
        linkMoved[l] = moved;
        changed.push(l);
      };
      if (round === 0) for (const l of seeds) mark(l);
      for (let k = 0; k < solved; k++) {
        const f = flows[k] as number;
        if (rate[f] === prev[k]) continue;
        prev[k] = rate[f] as number;
        const s = pathStart[f] as number;
        for (let i = s; i < s + (pathLen[f] as number); i++) mark(pool[i] as number);
      }
      for (const l of changed) {
        for (const g of crossing[l] ?? []) {
          if (seen[g] === epoch) continue;
          const h = hint[g] as number;
          if (h >= 0 && linkMoved[h] !== moved) continue;
          if (!this.bottlenecked(g, stat)) addFlow(g);
        }
      }
      if (flows.length === solved) break;
    }
    for (const f of flows) invariant((rate[f] as number) > 0, () => `FlowNet: flow ${f} left no bandwidth`);
    return flows;
  }

  /** Whether flow `g` has a bottleneck at the current rates (link statistics cached per `stat`); remembers it. */
  private bottlenecked(g: number, stat: number): boolean {
    const h = this.hint[g] as number;
    if (h >= 0 && this.bottleneckAt(g, h, stat)) return true;
    const s = this.pathStart[g] as number;
    for (let i = s; i < s + (this.pathLen[g] as number); i++) {
      const m = this.pool[i] as number;
      if (m !== h && this.bottleneckAt(g, m, stat)) {
        this.hint[g] = m;
        if (this.rehintedIn[g] !== this.epoch) {
          this.rehintedIn[g] = this.epoch;
          this.rehinted.push(g);
        }
        return true;
      }
    }
    return false;
  }

  /** Whether link `m` is full and no flow on it is faster than `g` (which crosses it). */
  private bottleneckAt(g: number, m: number, stat: number): boolean {
    const { load, fastest, rate } = this;
    if (this.statSeen[m] !== stat) {
      this.statSeen[m] = stat;
      let sum = 0;
      let most = 0;
      for (const f of this.crossing[m] as number[]) {
        const r = rate[f] as number;
        sum += r;
        if (r > most) most = r;
      }
      load[m] = sum;
      fastest[m] = most;
    }
    return (
      (load[m] as number) >= (this.cap[m] as number) * (1 - SLACK) &&
      (rate[g] as number) >= (fastest[m] as number) * (1 - SLACK)
    );
  }

  /**
   * The fallback. Progressive filling raises every rate together and fixes a link's flows when
   * the link fills. A flow that ended had not been fixed below its rate r, so no link it crossed
   * filled below r: without it, the filling goes the same way up to r. A flow that started gets at
   * least the smallest fair share cap/n over its links (a link fills at no less than that), so the
   * filling goes the same way up to that bound too. Below the smallest such level, every rate
   * stays (rates below `keep`); the flows at or above it share what the kept flows leave of each
   * link, a problem that splits into the components of the graph of those flows and their links,
   * and only the components holding a link that changed are solved again.
   */
  private solveAbove(seeds: readonly number[], keep: number): number[] {
    const epoch = ++this.epoch;
    const { pool, crossing, linkSeen, seen, pathStart, pathLen, rate, cap, count, spare } = this;
    const kept = (r: number) => r > 0 && r < keep;
    // From the changed links, every flow to solve on a link reached and every link of such a
    // flow; per link, the flows to solve on it and the bandwidth the kept ones leave.
    const links: number[] = [];
    const flows: number[] = [];
    for (const l of seeds) {
      if (linkSeen[l] === epoch) continue;
      linkSeen[l] = epoch;
      links.push(l);
    }
    for (let next = 0; next < links.length; next++) {
      const l = links[next] as number;
      let solving = 0;
      let held = 0;
      for (const f of crossing[l] ?? []) {
        const r = rate[f] as number;
        if (kept(r)) {
          held += r;
          continue;
        }
        solving++;
        if (seen[f] === epoch) continue;
        seen[f] = epoch;
        flows.push(f);
        const s = pathStart[f] as number;
        for (let i = s; i < s + (pathLen[f] as number); i++) {
          const m = pool[i] as number;
          if (linkSeen[m] === epoch) continue;
          linkSeen[m] = epoch;
          links.push(m);
        }
      }
      count[l] = solving;
      spare[l] = Math.max(0, (cap[l] as number) - held);
    }
    const was = this.was;
    was.length = 0;
    for (const f of flows) {
      was.push(rate[f] as number);
      this.settle(f);
    }
    this.fill(flows, links, epoch, false);
    for (const f of flows) this.hint[f] = this.fixedBy[f] as number;
    // A flow kept on a link where one started, and one the local repair gave a hint, may need another.
    const stat = ++this.statEpoch;
    const rehint = (g: number) => {
      if (seen[g] === epoch || this.state[g] !== ACTIVE) return;
      invariant(this.bottlenecked(g, stat), () => `FlowNet: flow ${g} has no bottleneck after a full solve`);
    };
    for (let k = 0, n = this.rehinted.length; k < n; k++) rehint(this.rehinted[k] as number);
    for (const l of seeds) for (const g of crossing[l] ?? []) rehint(g);
    return flows;
  }

  /**
   * Progressive filling of `flows` (those marked `epoch`) over `links`, given per link the flows
   * to fill on it (`count`) and the bandwidth left them (`spare`): the link with the smallest fair
   * share fixes the rate of every flow crossing it (with every link within noise of that share);
   * those flows leave, and their rate is taken from every other link they cross, whose fair share
   * can only grow. A share of zero (a link the others fill) is allowed where `zero`.
   */
  private fill(flows: readonly number[], links: readonly number[], epoch: number, zero: boolean): void {
    const { pool, crossing, seen, pathStart, pathLen, rate, count, spare, fixed, fixedBy, byShare } = this;
    for (const f of flows) fixed[f] = 0;
    byShare.clear();
    for (const l of links) {
      const c = count[l] as number;
      if (c > 0) byShare.push((spare[l] as number) / c, l);
    }
    let unfixed = flows.length;
    while (unfixed > 0) {
      const level = this.smallestShare();
      invariant(
        Number.isFinite(level) && (level > 0 || (zero && level === 0)),
        () => `FlowNet: no positive share (${level}) for ${unfixed} flows`,
      );
      const bound = level * (1 + EPS);
      while (this.smallestShare() <= bound) {
        const l = byShare.pop();
        for (const f of crossing[l] as number[]) {
          if (seen[f] !== epoch || fixed[f]) continue;
          fixed[f] = 1;
          unfixed--;
          rate[f] = level;
          fixedBy[f] = l;
          const s = pathStart[f] as number;
          for (let i = s; i < s + (pathLen[f] as number); i++) {
            const m = pool[i] as number;
            spare[m] = Math.max(0, (spare[m] as number) - level);
            const k = (count[m] as number) - 1;
            count[m] = k;
          }
        }
      }
    }
  }

  /**
   * The smallest current fair share among the links still holding unfixed flows. A link's share
   * only grows as flows are fixed, so its key in the heap is a lower bound: a link whose key is
   * out of date goes back in at its current share when it comes to the top (and one with no
   * unfixed flow left goes).
   */
  private smallestShare(): number {
    const { byShare: h, count, spare } = this;
    while (h.size > 0) {
      const l = h.topId();
      const c = count[l] as number;
      if (c === 0) {
        h.pop();
        continue;
      }
      const share = (spare[l] as number) / c;
      if (share > h.peek()) {
        h.pop();
        h.push(share, l);
        continue;
      }
      return share;
    }
    return Number.POSITIVE_INFINITY;
  }

  /** Drops the stale entries of the end heap (it holds every past rate's end otherwise). */
  private rebuildEnds(): void {
    const ends = this.ends;
    ends.clear();
    for (let k = 0; k < this.nactive; k++) {
      const f = this.active[k] as number;
      ends.push((this.since[f] as number) + (this.left[f] as number) / (this.rate[f] as number), f, this.version[f]);
    }
  }
}
