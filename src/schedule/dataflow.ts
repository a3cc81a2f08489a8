/**
 * A compiled plan as dataflow, in flat arrays (computed once per plan): each operation's
 * dependencies and successors, and the posting queues that keep each peer's transfers in program
 * order. The executor and the MPI fast path run plans with these moves (nextToPost, release);
 * the interpreter (interpret.ts) walks the same graph and queues from scheduling() with its own
 * moves, because it carries simulated time with each (when an operation became ready, when its
 * queue last posted).
 */
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
