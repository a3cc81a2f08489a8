/**
 * The one walker of FlatPlans, shared by both engines: the plans run in dataflow order, with the
 * semantics and the event order of the one interpreter (src/schedule/interpret.ts; a test holds
 * every operation's start to interpret()'s), each transfer timed by the caller's Timing and each
 * local operation by its `local`.
 */
import { MinHeap } from "../../core/growable.js";
import { type FlatPlans, REDUCE, SEND } from "./flat-plans.js";

/**
 * How a walk times its transfers (operations are FlatPlans indices). A transfer whose end is
 * known when it starts (the phases engine's walks: knownEnds) comes back from start(); one whose
 * end depends on the traffic around it (the exact engine's flow network) is reported later,
 * through take(), when the timing's clock reaches it.
 */
export interface Timing {
  /** The clock: nothing it holds ends before it (Infinity for a timing that never holds a transfer: the walk then never asks next()). */
  readonly now: number;
  /** A send met its receive at `at`: the transfer's end, or undefined if take() reports it later. */
  start(send: number, recv: number, at: number): number | undefined;
  /** When the next transfer it holds ends (Infinity when it holds none). */
  next(): number;
  /** Moves to that time and calls done(send, recv) for each transfer ending then; returns the time. */
  take(done: (send: number, recv: number) => void): number;
}

/** The Timing of transfers whose end is known when they start: `end(send, recv, start)`. */
export function knownEnds(end: (send: number, recv: number, start: number) => number): Timing {
  const never = () => Number.POSITIVE_INFINITY;
  return { now: Number.POSITIVE_INFINITY, start: end, next: never, take: never };
}

/**
 * The plans run in dataflow order, as interpret() runs them (src/schedule/interpret.ts): an
 * operation is ready when the operations it depends on are done; a queue's transfers are posted
 * in program order, each when it and those before it are ready; the k-th send of a queue meets
 * the k-th receive of its partner queue and the transfer starts when both are posted, timed by
 * `timing`; a local operation ends at `local(g, start)`. Operations end in interpret()'s order:
 * by time, ties in the order their ends became known (a transfer's send, then its receive), and
 * a transfer the timing reports later is taken before any event after it, events up to the
 * timing's clock first (what they start cannot end before it, so one instant's transfers are
 * timed together). The exact engine's times depend on that order (which transfer of a
 * connection goes first), the phases engine's where two transfers of one connection start
 * together. `unit`: every time is a whole number (the unit-time walk), so the operations ending
 * wait in one bucket per time instead of a heap. Returns each operation's start and each rank's
 * finish, and the ranks that never finished.
 */
export function walkDataflow(
  f: FlatPlans,
  timing: Timing,
  local: (g: number, start: number) => number,
  unit = false,
): { complete: boolean; time: number; finish: Float64Array; start: Float64Array; stuck: number[] } {
  const { ops, kind, succStart, succ, queueOf, queueStart, members, partner } = f;
  const pending = f.indeg.slice();
  const readyAt = new Float64Array(ops).fill(-1);
  const start = new Float64Array(ops);
  const done = new Uint8Array(ops);
  /** A transfer's receive, kept under its send: the pair ends as one event, the send first. */
  const mate = new Int32Array(ops).fill(-1);
  const queues = queueStart.length - 1;
  const qpos = new Int32Array(queues);
  const qlast = new Float64Array(queues);
  const finish = new Float64Array(f.ranks);
  // Events at the current time, first in first out. Nothing ends before the event that starts
  // it: an operation starts when the event that lets it is taken, and ends no earlier.
  let nowOps = new Int32Array(1024);
  let nowTimes = new Float64Array(1024);
  let nowHead = 0;
  let nowTail = 0;
  let now = 0;
  // Later ones: a min-heap of (time, operation), equal times in the order pushed, or (unit) a
  // bucket per time. A time's events move to the queue above, in that order, when it comes.
  const heap = new MinHeap(true);
  const buckets: number[][] = [];
  let bucket = 0;
  let pendingInBuckets = 0;
  const push = (time: number, g: number) => {
    if (time <= now) {
      if (nowTail === nowOps.length) {
        const live = nowTail - nowHead;
        const b = new Int32Array(Math.max(1024, 2 * live));
        b.set(nowOps.subarray(nowHead, nowTail));
        nowOps = b;
        const bt = new Float64Array(b.length);
        bt.set(nowTimes.subarray(nowHead, nowTail));
        nowTimes = bt;
        nowHead = 0;
        nowTail = live;
      }
      nowOps[nowTail] = g;
      nowTimes[nowTail++] = time;
      return;
    }
    if (unit) {
      let b = buckets[time];
      if (!b) buckets[time] = b = [];
      b.push(g);
      pendingInBuckets++;
      return;
    }
    heap.push(time, g);
  };
  /** When the next later event is (Infinity when there is none). */
  const later = (): number => {
    if (!unit) return heap.peek();
    if (pendingInBuckets === 0) return Number.POSITIVE_INFINITY;
    while (!buckets[bucket] || (buckets[bucket] as number[]).length === 0) bucket++;
    return bucket;
  };
  /** The clock moves to `time`, the next later event's: its events join the current ones. */
  const advance = (time: number) => {
    now = time;
    if (unit) {
      const b = buckets[time] as number[];
      buckets[time] = [];
      pendingInBuckets -= b.length;
      for (const x of b) push(time, x);
      return;
    }
    while (heap.size > 0 && heap.peek() === time) push(time, heap.pop());
  };
  const post = (g: number, time: number, k: number) => {
    start[g] = time;
    const q2 = partner[queueOf[g] as number] as number;
    // The partner's k-th member, once posted, makes the pair.
    if (q2 < 0 || (qpos[q2] as number) <= k) return;
    const h = members[(queueStart[q2] as number) + k] as number;
    const at = Math.max(time, start[h] as number);
    start[g] = at;
    start[h] = at;
    const s = kind[g] === SEND ? g : h;
    mate[s] = s === g ? h : g;
    const end = timing.start(s, mate[s] as number, at);
    if (end !== undefined) push(end, s);
  };
  const ready = (g: number, time: number) => {
    readyAt[g] = time;
    const q = queueOf[g] as number;
    if (q < 0) {
      start[g] = time;
      push(local(g, time), g);
      return;
    }
    const first = queueStart[q] as number;
    const last = queueStart[q + 1] as number;
    while (first + (qpos[q] as number) < last) {
      const k = qpos[q] as number;
      const i = members[first + k] as number;
      const t = readyAt[i] as number;
      if (t < 0 || (pending[i] as number) > 0) break;
      qpos[q] = k + 1;
      if (t > (qlast[q] as number)) qlast[q] = t;
      post(i, qlast[q] as number, k);
    }
  };
  const end = (g: number, time: number) => {
    done[g] = 1;
    const r = f.rank[g] as number;
    if (time > (finish[r] as number)) finish[r] = time;
    for (let e = succStart[g] as number; e < (succStart[g + 1] as number); e++) {
      const s = succ[e] as number;
      if (time > (readyAt[s] as number)) readyAt[s] = time;
      if (--(pending[s] as number) === 0) ready(s, readyAt[s] as number);
    }
  };
  // A transfer the timing reports: its pair's event, at the time take() moved to.
  let taken = 0;
  const arrived = (s: number) => push(taken, s);
  for (let g = 0; g < ops; g++) if (pending[g] === 0) ready(g, 0);
  let last = 0;
  for (;;) {
    const te = nowHead < nowTail ? (nowTimes[nowHead] as number) : later();
    if (te > timing.now) {
      const t = timing.next();
      if (t < Number.POSITIVE_INFINITY && t <= te) {
        taken = t;
        timing.take(arrived);
        continue;
      }
    }
    if (nowHead === nowTail) {
      if (te === Number.POSITIVE_INFINITY) break;
      advance(te);
      continue;
    }
    const g = nowOps[nowHead] as number;
    const time = nowTimes[nowHead] as number;
    // A transfer's send ends first; its receive, left in its place, is the next event.
    const h = mate[g] as number;
    if (h >= 0) nowOps[nowHead] = h;
    else nowHead++;
    if (time > last) last = time;
    end(g, time);
  }
  const stuck: number[] = [];
  for (let r = 0; r < f.ranks; r++) {
    for (let q = f.base[r] as number; q < (f.base[r + 1] as number); q++) {
      if (!done[q]) {
        stuck.push(r);
        break;
      }
    }
  }
  return { complete: stuck.length === 0, time: last, finish, start, stuck };
}

/** Reductions cost gamma per byte, one at a time per rank (schedule/model.ts reductions, on flat operations). */
export function reductionsOf(f: FlatPlans, gamma: number): (g: number, start: number) => number {
  const compute = new Float64Array(f.ranks);
  return (g, start) => {
    if (f.kind[g] !== REDUCE || gamma === 0) return start;
    const r = f.rank[g] as number;
    const end = Math.max(start, compute[r] as number) + gamma * (f.bytes[g] as number);
    compute[r] = end;
    return end;
  };
}
