/**
 * The walked ranks' plans flattened once into typed arrays (FlatPlans), the one structure both
 * engines' walks read (the exact engine's every rank, the phases engine's in the form it walks):
 * each rank's plan compiled in its turn, copied in and let go (a compiled plan holds about 900
 * bytes an operation; these arrays and a walk's state under 100).
 */
import { Growable } from "../../core/growable.js";
import type { FlatOrder } from "../../schedule/flat.js";
import type { Plan, PlanOp } from "../../schedule/plan.js";
import { offsetOf, type Symmetry } from "./symmetry.js";

/**
 * The walked ranks' plans in flat arrays, operation g of all of them (rank r's operations are
 * base[r] .. base[r+1]-1), without the compiled plans' objects.
 */
export interface FlatPlans extends FlatOrder {
  /** Walked ranks and operations. */
  readonly ranks: number;
  readonly ops: number;
  readonly base: Int32Array;
  /** Per operation: SEND, RECV, REDUCE or LOCAL (copy, scale), its rank, and its bytes. */
  readonly kind: Uint8Array;
  readonly rank: Int32Array;
  readonly bytes: Float64Array;
  /** Per send: the offset its message is keyed by (the destination rank when every rank is walked), and its (rank, offset) pair's number. */
  readonly offset: Int32Array;
  readonly pair: Int32Array;
  readonly pairs: number;
  /** Queues here are per rank, peer, channel and kind, in program order; the queue whose members pair with each queue's. */
  readonly partner: Int32Array;
}

/** An operation's kind in FlatPlans.kind. */
export const SEND = 0;
export const RECV = 1;
export const REDUCE = 2;
export const LOCAL = 3;

/**
 * Copies the walked ranks' plans into flat arrays, compiling rank r's (seen from the quotient
 * under a symmetry: peers modulo p, each transfer's channel keyed by the sender's offset) only
 * when it is its turn and letting it go after. Past `maxOps` operations it calls `limit` with the
 * walk's operations extrapolated from the ranks compiled so far (which throws).
 */
export function flattenPlans(
  planOf: (r: number) => Plan,
  n: number,
  sym: Symmetry,
  elementBytes: number,
  maxOps: number,
  limit: (ops: number) => never,
): FlatPlans {
  const p = sym.p;
  const base = new Int32Array(p + 1);
  const kind = new Growable(new Uint8Array(1024));
  const rank = new Growable(new Int32Array(1024));
  const bytes = new Growable(new Float64Array(1024));
  const offset = new Growable(new Int32Array(1024));
  const pair = new Growable(new Int32Array(1024));
  const indeg = new Growable(new Int32Array(1024));
  const queueOf = new Growable(new Int32Array(1024));
  const from = new Growable(new Int32Array(1024));
  const to = new Growable(new Int32Array(1024));
  const members = new Growable(new Int32Array(1024));
  /** Per queue: where its members start, its key ((channel · p + peer) · 2 + kind) and its rank. */
  const queueStart = new Growable(new Int32Array(1024));
  const queueKey = new Growable(new Float64Array(1024));
  /** Per walked rank: its queues are queueBase[r] .. queueBase[r+1]-1. */
  const queueBase = new Int32Array(p + 1);
  let ops = 0;
  let edges = 0;
  let pairs = 0;
  // One rank's queues (by key, their members) and (rank, offset) pairs (by offset, their
  // number) while it is copied: a map each, since a rank of an all-to-all has n of them.
  const keys = new Map<number, number>();
  const lists: number[][] = [];
  const offs = new Map<number, number>();
  for (let r = 0; r < p; r++) {
    const plan = planOf(r);
    const list = plan.ops;
    const m = list.length;
    const g0 = ops;
    base[r] = g0;
    if (g0 + m > maxOps) limit(Math.ceil(((g0 + m) / (r + 1)) * p));
    ops = g0 + m;
    for (const c of [kind, rank, bytes, offset, pair, indeg, queueOf]) c.ensure(ops);
    let e = 0;
    for (let i = 0; i < m; i++) e += (list[i] as PlanOp).deps.length;
    from.ensure(edges + e);
    to.ensure(edges + e);
    const K = kind.a;
    const R = rank.a;
    const B = bytes.a;
    const O = offset.a;
    const P = pair.a;
    const D = indeg.a;
    const Q = queueOf.a;
    const F = from.a;
    const T = to.a;
    keys.clear();
    lists.length = 0;
    offs.clear();
    for (let i = 0; i < m; i++) {
      const op = list[i] as PlanOp;
      const g = g0 + i;
      const send = op.kind === "send";
      const transfer = send || op.kind === "recv";
      K[g] = send ? SEND : transfer ? RECV : op.kind === "reduce" ? REDUCE : LOCAL;
      R[g] = r;
      B[g] = op.region.count * elementBytes;
      const deps = op.deps;
      D[g] = deps.length;
      for (let j = 0; j < deps.length; j++) {
        F[edges] = g0 + (deps[j] as number);
        T[edges++] = g;
      }
      O[g] = 0;
      P[g] = -1;
      Q[g] = -1;
      if (!transfer) continue;
      // A send to peer q and the receive that peer posts from us share the sender's offset.
      const off = p === n ? op.peer : send ? offsetOf(sym.kind, r, op.peer, n) : offsetOf(sym.kind, op.peer, r, n);
      if (send) {
        O[g] = off;
        let id = offs.get(off);
        if (id === undefined) offs.set(off, (id = pairs++));
        P[g] = id;
      }
      const channel = p === n ? op.channel : op.channel * n + off;
      const k = (channel * p + (op.peer % p)) * 2 + (send ? 1 : 0);
      let at = keys.get(k);
      if (at === undefined) {
        keys.set(k, (at = lists.length));
        lists.push([]);
      }
      (lists[at] as number[]).push(g);
    }
    queueBase[r] = queueStart.length;
    for (const [k, j] of keys) {
      const id = queueStart.length;
      queueStart.push(members.length);
      queueKey.push(k);
      for (const g of lists[j] as number[]) {
        members.push(g);
        queueOf.a[g] = id;
      }
    }
  }
  base[p] = ops;
  queueBase[p] = queueStart.length;
  queueStart.push(members.length);
  kind.length = rank.length = bytes.length = offset.length = pair.length = indeg.length = queueOf.length = ops;
  from.length = to.length = edges;
  // Each queue's partner: on its peer, the queue of the other kind with this rank as its peer,
  // found by bisection in the peer's queues sorted by key.
  const queues = queueKey.length;
  const qk = queueKey.a;
  const byKey = new Int32Array(queues);
  for (let q = 0; q < queues; q++) byKey[q] = q;
  for (let r = 0; r < p; r++)
    byKey.subarray(queueBase[r], queueBase[r + 1]).sort((x, y) => (qk[x] as number) - (qk[y] as number));
  const partner = new Int32Array(queues).fill(-1);
  for (let r = 0; r < p; r++) {
    for (let q = queueBase[r] as number; q < (queueBase[r + 1] as number); q++) {
      const k = qk[q] as number;
      const half = Math.floor(k / 2);
      const peer = half % p;
      const want = ((half - peer) / p) * p * 2 + r * 2 + (1 - (k % 2));
      let lo = queueBase[peer] as number;
      let hi = queueBase[peer + 1] as number;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((qk[byKey[mid] as number] as number) < want) lo = mid + 1;
        else hi = mid;
      }
      if (lo < (queueBase[peer + 1] as number) && qk[byKey[lo] as number] === want) partner[q] = byKey[lo] as number;
    }
  }
  // Successors from the dependencies (counting sort by the operation depended on).
  const f = from.done();
  const t = to.done();
  const succStart = new Int32Array(ops + 1);
  for (const d of f) succStart[d + 1]!++;
  for (let g = 0; g < ops; g++) succStart[g + 1] = (succStart[g + 1] as number) + (succStart[g] as number);
  const fill = succStart.slice(0, ops);
  const succ = new Int32Array(f.length);
  for (let e = 0; e < f.length; e++) succ[fill[f[e] as number]!++] = t[e] as number;
  return {
    ranks: p,
    ops,
    base,
    kind: kind.done(),
    rank: rank.done(),
    bytes: bytes.done(),
    offset: offset.done(),
    pair: pair.done(),
    pairs,
    indeg: indeg.done(),
    succStart,
    succ,
    queueOf: queueOf.done(),
    queueStart: queueStart.done(),
    members: members.done(),
    partner,
  };
}
