/**
 * The walker every timed walk of the phases engine shares: FlatPlans run in dataflow order, with
 * the semantics of the one interpreter (src/schedule/interpret.ts; a test holds every operation's
 * start to interpret()'s), each transfer and local operation timed by the caller.
 */
import { MinHeap } from "../../core/growable.js";
import { type FlatPlans, REDUCE, SEND } from "./flat-plans.js";

/**
 * The plans run in dataflow order, as interpret() runs them (src/schedule/interpret.ts): an
 * operation is ready when the operations it depends on are done; a queue's transfers are posted
 * in program order, each when it and those before it are ready; the k-th send of a queue meets
 * the k-th receive of its partner queue and the transfer starts when both are posted, ending at
 * `transfer(send, recv, start)`; a local operation ends at `local(g, start)`. Operations end in
 * time order (ties in no set order). `unit`: every time is a whole number (the unit-time walk),
 * so the operations ending wait in one bucket per time instead of a heap. Returns each
 * operation's start and each rank's finish.
 */
export function walkDataflow(
  f: FlatPlans,
  transfer: (send: number, recv: number, start: number) => number,
  local: (g: number, start: number) => number,
  unit = false,
): { complete: boolean; time: number; finish: Float64Array; start: Float64Array; stuck: number[] } {
  const { ops, kind, succStart, succ, queueOf, queueStart, members, partner } = f;
  const pending = f.indeg.slice();
  const readyAt = new Float64Array(ops).fill(-1);
  const start = new Float64Array(ops);
  const done = new Uint8Array(ops);
  /** The other end of a transfer: the pair ends as one event, kept under its send. */
  const mate = new Int32Array(ops).fill(-1);
  const queues = queueStart.length - 1;
  const qpos = new Int32Array(queues);
  const qlast = new Float64Array(queues);
  const finish = new Float64Array(f.ranks);
  // Operations ending no later than the one being taken: taken next, first in first out.
  let nowOps = new Int32Array(1024);
  let nowTimes = new Float64Array(1024);
  let nowHead = 0;
  let nowTail = 0;
  let now = 0;
  // Later ones: a binary min-heap of (time, operation), or (unit) a bucket per time.
  const heap = new MinHeap();
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
  const post = (g: number, time: number, k: number) => {
    start[g] = time;
    const q2 = partner[queueOf[g] as number] as number;
    // The partner's k-th member, once posted, makes the pair.
    if (q2 < 0 || (qpos[q2] as number) <= k) return;
    const h = members[(queueStart[q2] as number) + k] as number;
    const at = Math.max(time, start[h] as number);
    start[g] = at;
    start[h] = at;
    mate[g] = h;
    push(kind[g] === SEND ? transfer(g, h, at) : transfer(h, g, at), g);
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
  for (let g = 0; g < ops; g++) if (pending[g] === 0) ready(g, 0);
  let last = 0;
  for (;;) {
    let g: number;
    let time: number;
    if (nowHead < nowTail) {
      g = nowOps[nowHead] as number;
      time = nowTimes[nowHead++] as number;
    } else if (unit) {
      if (pendingInBuckets === 0) break;
      while (!buckets[bucket] || (buckets[bucket] as number[]).length === 0) bucket++;
      now = bucket;
      const b = buckets[bucket] as number[];
      buckets[bucket] = [];
      pendingInBuckets -= b.length;
      for (const x of b) push(now, x);
      continue;
    } else {
      if (heap.size === 0) break;
      time = heap.peek();
      g = heap.pop();
      if (time > now) now = time;
    }
    if (time > last) last = time;
    end(g, time);
    const h = mate[g] as number;
    if (h >= 0) end(h, time);
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
