/**
 * The flows and links max-min sharing works on (SimGrid's System): each flow's path, the flows
 * carrying bytes over each link, and what changed since the rates were last solved (maxmin.ts
 * solves them). Paths are packed in one pool of link ids; a flow's entries there, while it
 * carries bytes, know their place in the links' lists, so a flow joins and leaves in O(path).
 * Flows are numbered by the caller (the clock, flows.ts); the per-flow arrays grow to the
 * largest id. The fields are the solver's to read and update: nothing outside the two uses them.
 */
import { invariant } from "../../core/assert.js";
import { grow } from "../../core/growable.js";

export class MaxMinSystem {
  readonly nlinks: number;
  /** Per flow: its rate (bytes per microsecond; 0 until its first solve), and where its path sits in the pool. */
  rate = new Float64Array(256);
  pathStart = new Int32Array(256);
  pathLen = new Int32Array(256);
  /** Whether the flow carries bytes now, and where it sits in `active`. */
  carrying = new Uint8Array(256);
  activePos = new Int32Array(256);
  /** The solver's per flow: the solve (epoch) that last reached it, and whether its rate is fixed in that solve. */
  seen = new Int32Array(256);
  fixed = new Uint8Array(256);
  /** The link that fixed the flow's rate in its last filling; a link where it was last found bottlenecked (-1: none yet). */
  fixedBy = new Int32Array(256);
  hint = new Int32Array(256);
  /** The solve in which the flow's hint last changed. */
  rehintedIn = new Int32Array(256);
  /** Links of every flow's path, packed; per entry (a crossing), while its flow carries bytes, its place in the link's lists. */
  pool = new Int32Array(4096);
  poolPos = new Int32Array(4096);
  poolUsed = 0;
  /** Links on the paths of the flows added and not released (what the pool must hold). */
  incidences = 0;
  /** Flows carrying bytes now. */
  active = new Int32Array(256);
  nactive = 0;
  /** Per link, the flows carrying bytes over it, and (in the same order) their pool entries for that link. */
  readonly crossing: number[][];
  readonly entries: number[][];
  /** Links whose flows changed since the last solve (marked in linkTouched). */
  touched: number[] = [];
  readonly linkTouched: Uint8Array;
  /** Flows that started carrying bytes since the last solve. */
  started: number[] = [];
  /** The smallest rate of a flow that ended since the last solve. */
  floor = Number.POSITIVE_INFINITY;
  /** Whether a flow started or stopped carrying since the last solve. */
  dirty = false;

  constructor(readonly cap: Float64Array) {
    this.nlinks = cap.length;
    this.linkTouched = new Uint8Array(this.nlinks);
    this.crossing = new Array(this.nlinks);
    this.entries = new Array(this.nlinks);
  }

  /** Flows carrying bytes now, in no order (the first `carryingCount`). */
  get carryingFlows(): Int32Array {
    return this.active.subarray(0, this.nactive);
  }

  get carryingCount(): number {
    return this.nactive;
  }

  isCarrying(f: number): boolean {
    return this.carrying[f] === 1;
  }

  /** Flow `f`'s path (link ids), before it carries bytes; its rate starts at 0. */
  addPath(f: number, path: ArrayLike<number>): void {
    if (f >= this.rate.length) {
      const n = f + 1;
      this.rate = grow(this.rate, n);
      this.pathStart = grow(this.pathStart, n);
      this.pathLen = grow(this.pathLen, n);
      this.carrying = grow(this.carrying, n);
      this.activePos = grow(this.activePos, n);
      this.seen = grow(this.seen, n);
      this.fixed = grow(this.fixed, n);
      this.fixedBy = grow(this.fixedBy, n);
      this.hint = grow(this.hint, n);
      this.rehintedIn = grow(this.rehintedIn, n);
      this.active = grow(this.active, n);
    }
    this.rate[f] = 0;
    this.hint[f] = -1;
    const need = this.poolUsed + path.length;
    this.pool = grow(this.pool, need);
    this.poolPos = grow(this.poolPos, need);
    this.pathStart[f] = this.poolUsed;
    this.pathLen[f] = path.length;
    this.incidences += path.length;
    for (let k = 0; k < path.length; k++) {
      const l = path[k] as number;
      invariant(l >= 0 && l < this.nlinks, () => `max-min: flow ${f} crosses link ${l} of ${this.nlinks}`);
      this.pool[this.poolUsed++] = l;
    }
  }

  /** The flow's path is no longer needed (it stopped carrying): its pool entries may be reused. */
  release(f: number): void {
    this.incidences -= this.pathLen[f] as number;
    if (this.pathStart[f]! + this.pathLen[f]! === this.poolUsed) this.poolUsed = this.pathStart[f] as number;
  }

  /** No flow is left: the pool starts again from its front. */
  clear(): void {
    this.poolUsed = 0;
  }

  private touch(l: number): void {
    if (this.linkTouched[l]) return;
    this.linkTouched[l] = 1;
    this.touched.push(l);
  }

  /** The flow starts carrying bytes now: it joins its links' lists. */
  activate(f: number): void {
    this.carrying[f] = 1;
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
  deactivate(f: number): void {
    this.carrying[f] = 0;
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

  /**
   * Paths of released flows leave holes in the pool: past `above` entries, and four times what
   * the live flows need, the paths of `live` (every flow not released) are packed to its front.
   */
  compact(above: number, live: () => Iterable<number>): void {
    if (this.poolUsed <= above || this.poolUsed <= 4 * this.incidences) return;
    const size = Math.max(4096, 2 * this.incidences);
    const pool = new Int32Array(size);
    const poolPos = new Int32Array(size);
    let used = 0;
    for (const f of live()) {
      const s = this.pathStart[f] as number;
      const len = this.pathLen[f] as number;
      const carrying = this.carrying[f] === 1;
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
}
