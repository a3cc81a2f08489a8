/**
 * A compiled plan as dataflow, in flat arrays (computed once per plan): each operation's
 * dependencies and successors, and the posting queues that keep each peer's transfers in program
 * order; and how the compiler (plan.ts) finds those dependencies from the memory each operation
 * reads and writes (Intervals, Deps). The executor and the MPI fast path run plans with these moves (nextToPost, release);
 * the interpreter (interpret.ts) walks the same graph and queues from scheduling() with its own
 * moves, because it carries simulated time with each (when an operation became ready, when its
 * queue last posted).
 */
import { invariant } from "../core/assert.js";
import { lastAtMost } from "../core/extent.js";
import { grow } from "../core/growable.js";
import type { Plan } from "./plan.js";

/** What an executor needs to run a plan as dataflow, computed once per plan. */
export interface Scheduling {
  /** Dependencies per operation. */
  readonly indeg: Int32Array;
  /** Successors of operation i: succ[succStart[i] .. succStart[i+1]). */
  readonly succStart: Int32Array;
  readonly succ: Int32Array;
  /** Posting queue of each transfer (-1 for local operations), and each queue's transfers in program order. */
  readonly queueOf: Int32Array;
  readonly queues: readonly Int32Array[];
}

/**
 * The next transfer of queue q that may be posted: the one at the queue's position once it is
 * ready (its dependencies done), which advances the position; -1 when there is none. Posting in
 * this order is what pairs each send with its receive (per-peer program order).
 */
export function nextToPost(sched: Scheduling, qpos: Int32Array, isReady: Uint8Array, q: number): number {
  const members = sched.queues[q] as Int32Array;
  const p = qpos[q] as number;
  if (p >= members.length) return -1;
  const j = members[p] as number;
  if (!isReady[j]) return -1;
  qpos[q] = p + 1;
  return j;
}

/** Operation i is done: each successor whose dependencies are now all done goes on `ready`. */
export function release(sched: Scheduling, pending: Int32Array, i: number, ready: number[]): void {
  const { succStart, succ } = sched;
  for (let k = succStart[i] as number; k < (succStart[i + 1] as number); k++) {
    const s = succ[k] as number;
    if (--(pending[s] as number) === 0) ready.push(s);
  }
}

const schedulings = new WeakMap<Plan, Map<boolean, Scheduling>>();

/**
 * The plan's dependency graph in arrays, and its posting queues: one per (peer, kind) and, where
 * the backend keeps channels apart, per channel. Cached per plan.
 */
export function scheduling(plan: Plan, channels: boolean): Scheduling {
  let byMode = schedulings.get(plan);
  if (!byMode) schedulings.set(plan, (byMode = new Map()));
  const have = byMode.get(channels);
  if (have) return have;
  const m = plan.ops.length;
  const indeg = new Int32Array(m);
  const count = new Int32Array(m + 1);
  for (const op of plan.ops) for (const d of op.deps) count[d + 1]!++;
  const succStart = new Int32Array(m + 1);
  for (let i = 0; i < m; i++) succStart[i + 1] = (succStart[i] as number) + (count[i + 1] as number);
  const succ = new Int32Array(succStart[m] as number);
  const fill = succStart.slice();
  const queueOf = new Int32Array(m).fill(-1);
  const ids = new Map<number, number[]>();
  const size = plan.call.size;
  plan.ops.forEach((op, i) => {
    indeg[i] = op.deps.length;
    for (const d of op.deps) succ[fill[d]!++] = i;
    if (op.kind === "send" || op.kind === "recv") {
      const k = ((channels ? op.channel : 0) * size + op.peer) * 2 + (op.kind === "send" ? 1 : 0);
      let q = ids.get(k);
      if (!q) ids.set(k, (q = []));
      q.push(i);
    }
  });
  const queues = [...ids.values()].map((q, qi) => {
    for (const i of q) queueOf[i] = qi;
    return Int32Array.from(q);
  });
  const s: Scheduling = { indeg, succStart, succ, queueOf, queues };
  byMode.set(channels, s);
  return s;
}

/**
 * Last writer and readers since, per interval of one memory. The intervals are fixed before any
 * operation is recorded: every boundary any operation of the plan names starts one (an interval
 * split later would inherit its whole's writer and readers, so cutting it first changes nothing).
 * Cutting as operations came, into sorted arrays, moved every later interval at each cut: PAT
 * reduce-scatter at 1,024 ranks made about twenty million such moves a rank. Readers are lists
 * threaded through typed arrays (a pool of nodes that grows and is not reused after a write), so
 * recording them makes no object.
 */
export class Intervals {
  private readonly starts: Float64Array;
  private readonly writer: Int32Array;
  /** Per interval its oldest and newest reader node (-1 none); node k is reader op readerOp[k], then node readerNext[k]. */
  private readonly head: Int32Array;
  private readonly tail: Int32Array;
  private readerOp = new Int32Array(64);
  private readerNext = new Int32Array(64);
  private nodes = 0;

  /** `bounds`: every boundary operations name in this memory, in any order, repeats allowed. */
  constructor(bounds: readonly number[]) {
    const sorted = new Float64Array(bounds.length + 1);
    sorted.set(bounds);
    sorted.sort();
    let k = 0;
    for (let i = 0; i < sorted.length; i++)
      if (i === 0 || sorted[i] !== sorted[k - 1]) sorted[k++] = sorted[i] as number;
    this.starts = sorted.slice(0, k);
    this.writer = new Int32Array(k).fill(-1);
    this.head = new Int32Array(k).fill(-1);
    this.tail = new Int32Array(k).fill(-1);
  }

  /** The interval that starts at `at` (a boundary the constructor was given). */
  private find(at: number): number {
    const lo = lastAtMost(this.starts, at);
    invariant(this.starts[lo] === at, () => `interval boundary ${at} was not announced`);
    return lo;
  }

  /** The intervals [from, to) spans: [first, end). */
  private span(from: number, to: number): [number, number] {
    const i0 = this.find(from);
    return [i0, to === from ? i0 : this.find(to)];
  }

  /** Operations [from, to) depends on: the last writer, and also the readers when it writes. */
  depsOf(from: number, to: number, writes: boolean, into: Deps): void {
    if (from >= to) return;
    const [i0, i1] = this.span(from, to);
    for (let i = i0; i < i1; i++) {
      const w = this.writer[i] as number;
      if (w >= 0) into.add(w);
      if (writes)
        for (let k = this.head[i] as number; k >= 0; k = this.readerNext[k] as number)
          into.add(this.readerOp[k] as number);
    }
  }

  record(from: number, to: number, op: number, writes: boolean): void {
    if (from >= to) return;
    const [i0, i1] = this.span(from, to);
    for (let i = i0; i < i1; i++) {
      if (writes) {
        this.writer[i] = op;
        this.head[i] = -1;
        this.tail[i] = -1;
      } else {
        if (this.nodes === this.readerOp.length) {
          this.readerOp = grow(this.readerOp, 2 * this.nodes);
          this.readerNext = grow(this.readerNext, 2 * this.nodes);
        }
        const node = this.nodes++;
        this.readerOp[node] = op;
        this.readerNext[node] = -1;
        const last = this.tail[i] as number;
        if (last < 0) this.head[i] = node;
        else this.readerNext[last] = node;
        this.tail[i] = node;
      }
    }
  }
}

/** One operation's dependencies, each once: seen[op] holds the stamp of the operation that last added it. */
export class Deps {
  private seen = new Int32Array(64);
  private stamp = 0;
  list: number[] = [];
  /** Starts a new operation's set. */
  reset(): void {
    this.stamp++;
    this.list = [];
  }
  add(op: number): void {
    if (op >= this.seen.length) {
      const grown = new Int32Array(Math.max(op + 1, 2 * this.seen.length));
      grown.set(this.seen);
      this.seen = grown;
    }
    if (this.seen[op] === this.stamp) return;
    this.seen[op] = this.stamp;
    this.list.push(op);
  }
}
