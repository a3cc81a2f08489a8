/**
 * Max-min fair rates for flows sharing links: the flow model of SimGrid's network layer (LV08
 * without its corrections), its solver kept apart from the clock that drives it (flows.ts), as
 * SimGrid keeps its maxmin solver apart from its System. A flow crosses the links of its path;
 * while it carries bytes, every link's bandwidth is shared equally among the flows crossing it,
 * a flow limited elsewhere leaving its share to the others (progressive filling).
 *
 * Solving is incremental, with the same rates as solving every carrying flow afresh (up to
 * floating-point noise; test/network-flows.test.ts checks it against a from-scratch solver):
 * rates below the level a change can reach stay (solveAbove() says why), and the flows above it
 * split into connected components of the graph of flows and the links they cross, of which only
 * those holding a link of a flow that started or finished are solved again; before that, a local
 * repair (solveLocal()) tries the flows the change can reach. Progressive filling takes the links
 * by fair share from a heap, so a solve costs O(I log I) for the I link crossings it covers.
 *
 * The flows and links it solves live in maxmin-system.ts. Bandwidth in bytes per microsecond.
 */
import { invariant } from "../../core/assert.js";
import { MinHeap } from "../../core/growable.js";
import type { MaxMinSystem } from "./maxmin-system.js";

/** Relative noise of the filling: two shares closer than this are one level. */
const EPS = 1e-9;

/** Relative slack of the bottleneck test (a link full, no flow faster): above the filling's own noise (EPS). */
const SLACK = 1e-8;

/** Rounds of local repair before a solve falls back to every flow above the changes' level. */
const LOCAL_ROUNDS = 32;

export interface MaxMinOptions {
  /** Rounds of local repair before a solve falls back (solveLocal, solveAbove); tests set 0 or 1 to reach the fallback. */
  readonly localRounds?: number;
  /**
   * Check after every solve that no link carries more than its bandwidth and that every carrying
   * flow is bottlenecked at the link it remembers (the rates are max-min fair), at a cost of every
   * flow and link per solve.
   */
  readonly audit?: boolean;
}

/**
 * The max-min fair rates of a system's carrying flows. solve() gives the rates of the flows a
 * change can have moved, settling each (the clock's `settle`, told the old rate) before its rate
 * changes.
 */
export class MaxMinSolver {
  private epoch = 0;
  // Scratch, per link.
  /** Bandwidth not yet given to a fixed flow. */
  private readonly spare: Float64Array;
  private readonly count: Int32Array;
  private readonly linkSeen: Int32Array;
  private readonly byShare = new MinHeap();
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
  /** The rates the flows the last solve returned had before it (in its order). */
  readonly was: number[] = [];
  /**
   * How many times rates were solved: once per instant at which flows started carrying bytes or
   * finished, each solve covering only the components those flows touch.
   */
  solves = 0;
  /** The solves' work: one per solve and one per link crossing it scanned (what a solve's time grows with). */
  work = 0;

  private readonly localRounds: number;
  private readonly audit: boolean;

  constructor(
    private readonly sys: MaxMinSystem,
    /** Called with a flow and its rate before the solve changes it: the clock brings its progress up to now. */
    private readonly settle: (f: number, rate: number) => void,
    options: MaxMinOptions = {},
  ) {
    this.localRounds = options.localRounds ?? LOCAL_ROUNDS;
    this.audit = options.audit ?? false;
    const n = sys.nlinks;
    this.spare = new Float64Array(n);
    this.count = new Int32Array(n);
    this.linkSeen = new Int32Array(n);
    this.load = new Float64Array(n);
    this.fastest = new Float64Array(n);
    this.statSeen = new Int32Array(n);
    this.linkMoved = new Int32Array(n);
    this.inS = new Int32Array(n);
    this.heldOut = new Float64Array(n);
  }

  /**
   * Max-min fair rates where they can have changed since the last solve: first locally
   * (solveLocal), and where that does not settle in a few rounds, every flow at or above the
   * smallest level the changes can reach (solveAbove). Returns the flows solved again, their
   * rates before in `was` (same order); each was settled at its old rate before it changed.
   */
  solve(): readonly number[] {
    this.sys.dirty = false;
    this.solves++;
    const { pool, crossing, pathStart, pathLen, cap } = this.sys;
    let floor = this.sys.floor;
    for (const g of this.sys.started) {
      if (!this.sys.carrying[g]) continue;
      const s = pathStart[g] as number;
      for (let i = s; i < s + (pathLen[g] as number); i++) {
        const l = pool[i] as number;
        floor = Math.min(floor, (cap[l] as number) / (crossing[l] as number[]).length);
      }
    }
    this.sys.started.length = 0;
    this.sys.floor = Number.POSITIVE_INFINITY;
    const seeds = this.sys.touched;
    this.sys.touched = [];
    for (const l of seeds) this.sys.linkTouched[l] = 0;
    this.rehinted.length = 0;
    // Where the changes touch a large part of the flows (many starting at once), one pass over
    // every flow above their level costs less than a local repair.
    let touching = 0;
    for (const l of seeds) touching += crossing[l]?.length ?? 0;
    // Rates below `keep` stay (a margin well above the noise of the filling's own rounding).
    const keep = floor * (1 - 1e-6);
    const flows =
      (8 * touching > this.sys.incidences ? undefined : this.solveLocal(seeds)) ?? this.solveAbove(seeds, keep);
    if (this.audit) this.check();
    this.work += 1;
    return flows;
  }

  /** The audit: rates feasible, and every carrying flow bottlenecked at its hint. */
  private check(): void {
    const stat = ++this.statEpoch;
    for (let k = 0; k < this.sys.nactive; k++) {
      const f = this.sys.active[k] as number;
      const h = this.sys.hint[f] as number;
      invariant(
        h >= 0 && this.bottleneckAt(f, h, stat),
        () => `max-min audit: flow ${f} is not bottlenecked at link ${h}`,
      );
    }
    for (let l = 0; l < this.sys.nlinks; l++) {
      if (this.statSeen[l] !== stat) continue;
      invariant(
        (this.load[l] as number) <= (this.sys.cap[l] as number) * (1 + SLACK),
        () => `max-min audit: link ${l} carries ${this.load[l]} of ${this.sys.cap[l]}`,
      );
    }
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
    const { pool, crossing, seen, pathStart, pathLen, cap } = this.sys;
    const { linkSeen, linkMoved, count, spare } = this;
    const rate = this.sys.rate;
    const { fixedBy, hint } = this.sys;
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
      this.work += crossing[l]?.length ?? 0;
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
      this.settle(f, rate[f] as number);
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
    for (const l of seeds) {
      addLink(l);
      this.work += crossing[l]?.length ?? 0;
    }
    // S starts as the flows that started and those on a changed link left with no bottleneck.
    const before = ++this.statEpoch;
    for (const l of seeds) {
      for (const g of crossing[l] ?? []) {
        if (seen[g] !== epoch && ((rate[g] as number) === 0 || !this.bottlenecked(g, before))) addFlow(g);
      }
    }
    for (let round = 0; flows.length > 0; round++) {
      // Over a large part of the flows, one pass over every flow above the changes' level costs less.
      if (round === this.localRounds || 8 * flows.length > this.sys.nactive) {
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
      // Every flow of S must be no slower than the others on the link that fixed it: each such link
      // is scanned once, not once per flow it fixed. A flow outside S faster than the slowest flow
      // of S fixed there joins S; a flow of S is confirmed there (its hint) where no flow outside
      // was faster. (Where one joins, another round follows and confirms every flow of S again.)
      const slowest = new Map<number, number>();
      for (let k = 0; k < solved; k++) {
        const f = flows[k] as number;
        const l = fixedBy[f] as number;
        const low = slowest.get(l);
        if (low === undefined || (rate[f] as number) < low) slowest.set(l, rate[f] as number);
      }
      const fastestOut = new Map<number, number>();
      for (const [l, low] of slowest) {
        const on = crossing[l] as number[];
        this.work += on.length;
        let fast = 0;
        for (const g of on) {
          if (seen[g] === epoch) continue;
          const rg = rate[g] as number;
          if (rg > fast) fast = rg;
          if (rg > low * (1 + SLACK)) addFlow(g);
        }
        fastestOut.set(l, fast);
      }
      for (let k = 0; k < solved; k++) {
        const f = flows[k] as number;
        const l = fixedBy[f] as number;
        if ((fastestOut.get(l) as number) <= (rate[f] as number) * (1 + SLACK)) hint[f] = l;
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
        this.work += crossing[l]?.length ?? 0;
        for (const g of crossing[l] ?? []) {
          if (seen[g] === epoch) continue;
          const h = hint[g] as number;
          if (h >= 0 && linkMoved[h] !== moved) continue;
          if (!this.bottlenecked(g, stat)) addFlow(g);
        }
      }
      if (flows.length === solved) break;
    }
    for (const f of flows) invariant((rate[f] as number) > 0, () => `max-min: flow ${f} left no bandwidth`);
    return flows;
  }

  /** Whether flow `g` has a bottleneck at the current rates (link statistics cached per `stat`); remembers it. */
  private bottlenecked(g: number, stat: number): boolean {
    const h = this.sys.hint[g] as number;
    if (h >= 0 && this.bottleneckAt(g, h, stat)) return true;
    const s = this.sys.pathStart[g] as number;
    for (let i = s; i < s + (this.sys.pathLen[g] as number); i++) {
      const m = this.sys.pool[i] as number;
      if (m !== h && this.bottleneckAt(g, m, stat)) {
        this.sys.hint[g] = m;
        if (this.sys.rehintedIn[g] !== this.epoch) {
          this.sys.rehintedIn[g] = this.epoch;
          this.rehinted.push(g);
        }
        return true;
      }
    }
    return false;
  }

  /** Whether link `m` is full and no flow on it is faster than `g` (which crosses it). */
  private bottleneckAt(g: number, m: number, stat: number): boolean {
    const { load, fastest } = this;
    const rate = this.sys.rate;
    if (this.statSeen[m] !== stat) {
      this.statSeen[m] = stat;
      let sum = 0;
      let most = 0;
      const on = this.sys.crossing[m] as number[];
      this.work += on.length;
      for (const f of on) {
        const r = rate[f] as number;
        sum += r;
        if (r > most) most = r;
      }
      load[m] = sum;
      fastest[m] = most;
    }
    return (
      (load[m] as number) >= (this.sys.cap[m] as number) * (1 - SLACK) &&
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
    const { pool, crossing, seen, pathStart, pathLen, cap } = this.sys;
    const { linkSeen, count, spare } = this;
    const rate = this.sys.rate;
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
      this.settle(f, rate[f] as number);
    }
    this.fill(flows, links, epoch, false);
    for (const f of flows) this.sys.hint[f] = this.sys.fixedBy[f] as number;
    // A flow kept on a link where one started, and one the local repair gave a hint, may need another.
    const stat = ++this.statEpoch;
    const rehint = (g: number) => {
      if (seen[g] === epoch || !this.sys.carrying[g]) return;
      invariant(this.bottlenecked(g, stat), () => `max-min: flow ${g} has no bottleneck after a full solve`);
    };
    for (let k = 0, n = this.rehinted.length; k < n; k++) rehint(this.rehinted[k] as number);
    for (const l of seeds) for (const g of crossing[l] ?? []) rehint(g);
    for (const l of links) this.work += crossing[l]?.length ?? 0;
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
    const { pool, crossing, seen, pathStart, pathLen, fixed, fixedBy } = this.sys;
    const { count, spare, byShare } = this;
    const rate = this.sys.rate;
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
        () => `max-min: no positive share (${level}) for ${unfixed} flows`,
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
}
