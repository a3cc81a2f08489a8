/**
 * The network model's shortcut for large groups: phases of logical rounds, each computed once.
 *
 * 1. Rounds. The interpreter walks the plans with every transfer taking one unit of time, in
 *    the plan's dataflow order: a transfer's start is its round, the wave of messages that can
 *    be in flight together (a ring step, a recursive-doubling distance, a tree pipeline's tick).
 * 2. Phases. The messages of one round start together on the network and share its links
 *    max-min fairly (flows.ts); the round lasts until its last message arrives, plus the largest
 *    reduction a rank makes after it (gamma). The call takes the sum of its rounds: bulk
 *    synchronous, so a rank never runs ahead into the next round as the exact engine lets it.
 * 3. Same pattern, computed once. Rounds whose messages are the same (sources, destinations,
 *    sizes) have the same time: a ring's 2(n-1) steps are one phase solved once.
 * 4. Symmetry. Where a call's schedule is the same for every rank up to a rotation of the ranks
 *    by a period p (ring: p = 1; Swing: p = 2, parity picks the direction; hierarchical: p = the
 *    group size), or up to an exclusive-or with a multiple of p (recursive doubling and halving
 *    at a power of two: p = 1), only ranks 0..p-1 are walked (peers taken modulo p, each message
 *    keyed by its rank offset), and a round's messages are theirs moved to p, 2p, ... The
 *    symmetry is found by compiling a few witness ranks and comparing them with the moved
 *    representatives (detectSymmetry); the test suite checks it on every rank (symmetryHolds).
 * 5. Fold. A long pipeline with no symmetry (the double binary tree) is walked at a few segments
 *    only, 4·⌈log2 n⌉ + 2, and each further round of its steady state is taken to add the pace
 *    of the last (fold()).
 * 6. Flat. The walks read the plans copied into typed arrays, each rank's plan compiled in its
 *    turn and let go (flatten()), through a dataflow walker with interpret()'s semantics
 *    (dataflow(); the tests hold its start times to interpret()'s).
 *
 * This approximates the exact engine (simulate.ts); test/network-model.test.ts measures the
 * error at n <= 1,024 for every algorithm it is used for, and every result says it is approximate.
 */
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { compile, type Plan, type PlanOp } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { type FlowSet, solveSets } from "./flow-sets.js";
import { grow, Heap } from "./flows.js";
import { checkPhasesMemory } from "./phases-memory.js";
import { phasesBudgetError as budgetError, fewerOperations, THRESHOLDS } from "./policy.js";
import { checkNetworkParams, type NetworkParams, type NetworkResult, Routes } from "./simulate.js";

/** The most operations the phases engine compiles (all ranks, or ranks 0..p-1 under a symmetry). */
export const PHASES_MAX_OPERATIONS = THRESHOLDS.PHASES_MAX_OPERATIONS.value;

interface Round {
  /** Per message: source rank (a representative under a symmetry), rank offset to the destination, bytes. */
  src: number[];
  offset: number[];
  bytes: number[];
  /** Bytes each rank reduces after this round's messages arrive, by (representative) rank. */
  reduced: Map<number, number>;
}

/**
 * How rank r's schedule follows from rank (r mod p)'s: every peer moved by r - (r mod p)
 * ('rotate', modulo n) or exclusive-or'ed with it ('xor', p and n powers of two).
 */
export type Symmetry = { readonly kind: "rotate" | "xor"; readonly p: number };

/** Rank a's offset to rank b under a symmetry: what every rank pair related like (a, b) shares. */
const offsetOf = (kind: Symmetry["kind"], a: number, b: number, n: number): number =>
  kind === "rotate" ? (b - a + n) % n : a ^ b;

/** The rank at an offset from rank a. */
const atOffset = (kind: Symmetry["kind"], a: number, offset: number, n: number): number =>
  kind === "rotate" ? (a + offset) % n : a ^ offset;

/** A peer of rank (r mod p) moved to rank r. */
const moved = (kind: Symmetry["kind"], peer: number, r: number, p: number, n: number): number =>
  kind === "rotate" ? (peer + r - (r % p)) % n : peer ^ (r - (r % p));

/** The operations the model charges: transfers and reductions (copies and scalings cost nothing). */
const charged = (plan: Plan): PlanOp[] => plan.ops.filter((op) => op.kind !== "copy" && op.kind !== "scale");

/**
 * Whether rank r's plan is rank (r mod p)'s with every peer moved to r under the symmetry, as far
 * as the model can tell: the same transfers and reductions in the same order and sizes (local
 * copies, which cost nothing, may differ: Bruck's final rotation does).
 */
function follows(rep: Plan, plan: Plan, r: number, sym: Symmetry, n: number): boolean {
  const a = charged(rep);
  const b = charged(plan);
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as PlanOp;
    const y = b[i] as PlanOp;
    if (x.kind !== y.kind || x.region.count !== y.region.count || x.channel !== y.channel) return false;
    if ((x.kind === "send" || x.kind === "recv") && moved(sym.kind, x.peer, r, sym.p, n) !== y.peer) return false;
  }
  return true;
}

/** Whether every rank's plan follows from rank (r mod p)'s under the symmetry (every rank checked). */
export function symmetryHolds(plans: readonly Plan[], sym: Symmetry): boolean {
  const n = plans.length;
  if (n % sym.p !== 0 || (sym.kind === "xor" && (n & (n - 1)) !== 0)) return false;
  for (let r = sym.p; r < n; r++) if (!follows(plans[r % sym.p] as Plan, plans[r] as Plan, r, sym, n)) return false;
  return true;
}

/** The largest period tried: past it the schedule is walked for every rank. */
export const MAX_PERIOD = THRESHOLDS.MAX_PERIOD.value;

/** The ranks a period is checked on: up to 4 of the next period's ranks, the last rank, and 7 spread over the group. */
function witnesses(n: number, p: number): number[] {
  const out = new Set<number>();
  for (let r = p; r < Math.min(n, p + 4); r++) out.add(r);
  out.add(n - 1);
  for (let i = 1; i < 8; i++) out.add(Math.floor((i * n) / 8) + (i % p));
  return [...out].filter((r) => r >= p && r < n).sort((a, b) => a - b);
}

/**
 * The symmetry of a call's schedule: the smallest p (a divisor of n, at most MAX_PERIOD) for
 * which ranks 0..p-1 compiled, moved by a rotation or an exclusive-or, give the plans of the
 * witness ranks; p = n (every rank walked) when none. A schedule symmetric on the witnesses and
 * not elsewhere would be modelled wrongly: the test suite checks every rank (symmetryHolds) for
 * the algorithms the scale targets name at n <= 1,024.
 */
function detectSymmetry(n: number, plan: (r: number) => Plan): Symmetry {
  const pow2 = (n & (n - 1)) === 0;
  for (let p = 1; p <= Math.min(MAX_PERIOD, n / 2); p++) {
    if (n % p !== 0) continue;
    for (const kind of ["rotate", "xor"] as const) {
      if (kind === "xor" && !(pow2 && (p & (p - 1)) === 0)) continue;
      const sym = { kind, p };
      if (witnesses(n, p).every((r) => follows(plan(r % p), plan(r), r, sym, n))) return sym;
    }
  }
  return { kind: "rotate", p: n };
}

/** Past this many segments the symmetry is looked for on the call cut to PROBE_SEGMENTS first. */
const PROBE_SEGMENTS = 32;

/**
 * detectSymmetry for a call of many segments: looked for first on the same call cut to
 * PROBE_SEGMENTS segments (its witnesses' plans a fraction of the size), and a period found
 * there checked again on the full call's witnesses. A symmetry that only the full count has
 * would be missed: every rank is then walked, slower, not wrong.
 */
function findSymmetry(alg: Algorithm, call: CollectiveCall, plan: (r: number) => Plan): Symmetry {
  const n = call.size;
  if (call.count / call.segment <= 2 * PROBE_SEGMENTS) return detectSymmetry(n, plan);
  let small: Symmetry;
  try {
    const cut = { ...call, count: PROBE_SEGMENTS * call.segment };
    const made = new Map<number, Plan>();
    small = detectSymmetry(n, (r) => {
      let have = made.get(r);
      if (!have) made.set(r, (have = compile(alg, rankCall(cut, r))));
      return have;
    });
  } catch {
    return detectSymmetry(n, plan);
  }
  if (small.p === n) return small;
  const found = witnesses(n, small.p).every((r) => follows(plan(r % small.p), plan(r), r, small, n));
  return found ? small : detectSymmetry(n, plan);
}

/** The period (p = n: every rank), and the size of a walk of ranks 0..p-1 and of every rank, estimated from rank 0's plan. */
function representatives(
  alg: Algorithm,
  call: CollectiveCall,
  symmetric = true,
): { sym: Symmetry; estimate: number; everyRank: number; plan: (r: number) => Plan } {
  const n = call.size;
  const made = new Map<number, Plan>();
  let ops = 0;
  let witnessing = true;
  const plan = (r: number): Plan => {
    const have = made.get(r);
    if (have) return have;
    const made1 = compile(alg, rankCall(call, r));
    // While a period is looked for, witnesses past the largest period are compared and dropped.
    if (witnessing && r >= MAX_PERIOD) return made1;
    ops += made1.ops.length;
    if (ops > PHASES_MAX_OPERATIONS) {
      throw new InvalidArgumentError(
        { op: "model", arg: "-n" },
        `${alg.collective}/${alg.name} at n = ${n}, ${call.count} elements in segments of ${call.segment}: more than ${PHASES_MAX_OPERATIONS.toLocaleString("en")} operations to walk (${ops.toLocaleString("en")} in ${made.size + 1} ranks), past what the model holds in memory, and no rotation symmetry of period <= ${MAX_PERIOD} to walk fewer ranks; ${fewerOperations(call, (ops / (made.size + 1)) * n)}`,
      );
    }
    made.set(r, made1);
    return made1;
  };
  const sym: Symmetry = symmetric ? findSymmetry(alg, call, plan) : { kind: "rotate", p: n };
  witnessing = false;
  // With no symmetry every rank is walked: rank 0's size says how much that is.
  const everyRank = plan(0).ops.length * n;
  const estimate = plan(0).ops.length * sym.p;
  return { sym, estimate, everyRank, plan };
}

/**
 * The walked ranks' plans in flat arrays, operation g of all of them (rank r's operations are
 * base[r] .. base[r+1]-1): what the two walks read, without the compiled plans' objects (a plan
 * holds ~900 bytes an operation; these and the walks' state under 100), so a plan is let go as soon as it is copied in.
 */
interface Flat {
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
  /** Dependencies: how many each operation waits for, and its successors succ[succStart[g] ..]. */
  readonly indeg: Int32Array;
  readonly succStart: Int32Array;
  readonly succ: Int32Array;
  /** Posting queues (per rank, peer, channel and kind, in program order): each transfer's, the members, and the queue whose members pair with them. */
  readonly queueOf: Int32Array;
  readonly queueStart: Int32Array;
  readonly members: Int32Array;
  readonly partner: Int32Array;
}

const SEND = 0;
const RECV = 1;
const REDUCE = 2;
const LOCAL = 3;

/** Typed arrays that grow as operations are appended. */
class Grow<T extends Int32Array | Float64Array | Uint8Array> {
  length = 0;
  constructor(public a: T) {}
  /** Room for n elements (the length is the caller's to set). */
  ensure(n: number): void {
    this.a = grow(this.a, n);
  }
  push(x: number): void {
    if (this.length === this.a.length) this.a = grow(this.a, this.length + 1);
    this.a[this.length++] = x;
  }
  done(): T {
    return this.a.slice(0, this.length) as T;
  }
}

/**
 * Copies the walked ranks' plans into flat arrays, compiling rank r's (seen from the quotient
 * under a symmetry: peers modulo p, each transfer's channel keyed by the sender's offset) only
 * when it is its turn and letting it go after.
 */
function flatten(
  planOf: (r: number) => Plan,
  n: number,
  sym: Symmetry,
  elementBytes: number,
  limit: (ops: number) => never,
): Flat {
  const p = sym.p;
  const base = new Int32Array(p + 1);
  const kind = new Grow(new Uint8Array(1024));
  const rank = new Grow(new Int32Array(1024));
  const bytes = new Grow(new Float64Array(1024));
  const offset = new Grow(new Int32Array(1024));
  const pair = new Grow(new Int32Array(1024));
  const indeg = new Grow(new Int32Array(1024));
  const queueOf = new Grow(new Int32Array(1024));
  const from = new Grow(new Int32Array(1024));
  const to = new Grow(new Int32Array(1024));
  const members = new Grow(new Int32Array(1024));
  /** Per queue: where its members start, its key ((channel · p + peer) · 2 + kind) and its rank. */
  const queueStart = new Grow(new Int32Array(1024));
  const queueKey = new Grow(new Float64Array(1024));
  /** Per walked rank: its queues are queueBase[r] .. queueBase[r+1]-1. */
  const queueBase = new Int32Array(p + 1);
  let ops = 0;
  let edges = 0;
  let pairs = 0;
  // One rank's queues and (rank, offset) pairs while it is copied: few, so searched in order.
  const keys: number[] = [];
  const lists: number[][] = [];
  const offs: number[] = [];
  const ids: number[] = [];
  for (let r = 0; r < p; r++) {
    const plan = planOf(r);
    const list = plan.ops;
    const m = list.length;
    const g0 = ops;
    base[r] = g0;
    if (g0 + m > PHASES_MAX_OPERATIONS) limit(g0 + m);
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
    keys.length = 0;
    lists.length = 0;
    offs.length = 0;
    ids.length = 0;
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
        let at = offs.indexOf(off);
        if (at < 0) {
          at = offs.length;
          offs.push(off);
          ids.push(pairs++);
        }
        P[g] = ids[at] as number;
      }
      const channel = p === n ? op.channel : op.channel * n + off;
      const k = (channel * p + (op.peer % p)) * 2 + (send ? 1 : 0);
      let at = keys.indexOf(k);
      if (at < 0) {
        at = keys.length;
        keys.push(k);
        lists.push([]);
      }
      (lists[at] as number[]).push(g);
    }
    queueBase[r] = queueStart.length;
    for (let j = 0; j < keys.length; j++) {
      const id = queueStart.length;
      queueStart.push(members.length);
      queueKey.push(keys[j] as number);
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
  // Each queue's partner: on its peer, the queue of the other kind with this rank as its peer.
  const queues = queueKey.length;
  const qk = queueKey.a;
  const partner = new Int32Array(queues).fill(-1);
  for (let r = 0; r < p; r++) {
    for (let q = queueBase[r] as number; q < (queueBase[r + 1] as number); q++) {
      const k = qk[q] as number;
      const half = Math.floor(k / 2);
      const peer = half % p;
      const want = ((half - peer) / p) * p * 2 + r * 2 + (1 - (k % 2));
      for (let q2 = queueBase[peer] as number; q2 < (queueBase[peer + 1] as number); q2++) {
        if (qk[q2] === want) {
          partner[q] = q2;
          break;
        }
      }
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
function dataflow(
  f: Flat,
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
  const heap = new Heap();
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

/**
 * The flat walk of every rank's compiled plan, for the tests that hold it to interpret(): each
 * operation's start by rank, and each rank's finish, transfers taking `duration(rank, index)` of
 * their send (`unit`: whole numbers, the unit-time walk's buckets).
 */
export function walkStarts(
  plans: readonly Plan[],
  duration: (rank: number, index: number) => number,
  unit = false,
): { complete: boolean; starts: Float64Array[]; finish: Float64Array } {
  const n = plans.length;
  const f = flatten(
    (r) => plans[r] as Plan,
    n,
    { kind: "rotate", p: n },
    1,
    (ops) => {
      throw new InvalidArgumentError({ op: "model", arg: "plans" }, `${ops} operations: past the walk's budget`);
    },
  );
  const at = (g: number) => [f.rank[g] as number, g - (f.base[f.rank[g] as number] as number)] as const;
  const out = dataflow(
    f,
    (send, _recv, start) => start + duration(...at(send)),
    (_g, start) => start,
    unit,
  );
  const starts = plans.map((_, r) => out.start.slice(f.base[r] as number, f.base[r + 1] as number));
  return { complete: out.complete, starts, finish: out.finish };
}

/** Reductions cost gamma per byte, one at a time per rank (schedule/model.ts reductions, on flat operations). */
function reductionsOf(f: Flat, gamma: number): (g: number, start: number) => number {
  const compute = new Float64Array(f.ranks);
  return (g, start) => {
    if (f.kind[g] !== REDUCE || gamma === 0) return start;
    const r = f.rank[g] as number;
    const end = Math.max(start, compute[r] as number) + gamma * (f.bytes[g] as number);
    compute[r] = end;
    return end;
  };
}

/** A call walked into rounds: its messages grouped by the unit-time round they start in. */
export interface Walk {
  readonly sym: Symmetry;
  /** The plans walked, flat: the representatives seen from the quotient (every rank's plan when p = n). */
  readonly flat: Flat;
  /** Rounds by start time (a time with no message has none). */
  readonly rounds: readonly (Round | undefined)[];
  /** Each round's pattern key (its messages in canonical order, and its largest reduction). */
  readonly keys: readonly (string | undefined)[];
  /** Per round, each message's place in the canonical order. */
  readonly places: readonly (Int32Array | undefined)[];
  /** Per walked operation (flat index): the round of a send (-1 none) and its message in the round. */
  readonly roundOf: Int32Array;
  readonly messageOf: Int32Array;
  readonly operations: number;
  /** Every rank walked, ranks p.. with their representatives' plans moved under this symmetry (walk's moveRanks). */
  readonly movedUnder?: Symmetry;
}

/** The rounds of a call: a unit-time walk in the plans' dataflow order. */
function roundsOf(flat: Flat, n: number, sym: Symmetry): Walk {
  const p = sym.p;
  const rounds: Round[] = [];
  const roundOf = new Int32Array(flat.ops).fill(-1);
  const messageOf = new Int32Array(flat.ops);
  // Per (rank, offset) pair: the last round it sent in, and its message there.
  const lastRound = new Int32Array(flat.pairs).fill(-1);
  const lastAt = new Int32Array(flat.pairs);
  const round = (t: number): Round => {
    let r = rounds[t];
    if (!r) {
      r = { src: [], offset: [], bytes: [], reduced: new Map() };
      rounds[t] = r;
    }
    return r;
  };
  const out = dataflow(
    flat,
    (s, _r, start) => {
      const bytes = flat.bytes[s] as number;
      if (bytes > 0) {
        const rd = round(start);
        // Messages a rank sends one peer in one round go down one connection, one after another
        // (NCCL's and MPI's per-peer order): one flow of their total.
        const pid = flat.pair[s] as number;
        let at: number;
        if (lastRound[pid] === start) {
          at = lastAt[pid] as number;
          rd.bytes[at] = (rd.bytes[at] as number) + bytes;
        } else {
          at = rd.src.length;
          lastRound[pid] = start;
          lastAt[pid] = at;
          rd.src.push(flat.rank[s] as number);
          rd.offset.push(flat.offset[s] as number);
          rd.bytes.push(bytes);
        }
        roundOf[s] = start;
        messageOf[s] = at;
      }
      return start + 1;
    },
    (g, start) => {
      if (flat.kind[g] === REDUCE && start > 0) {
        // A reduction at time t follows the messages of round t - 1.
        const rd = round(start - 1);
        const rank = flat.rank[g] as number;
        rd.reduced.set(rank, (rd.reduced.get(rank) ?? 0) + (flat.bytes[g] as number));
      }
      return start;
    },
    true,
  );
  if (!out.complete) {
    throw new InvalidArgumentError(
      { op: "model", arg: "algorithm" },
      `cannot complete at n = ${n}${p < n ? ` under its symmetry (${sym.kind}, period ${p})` : ""}: ranks ${out.stuck
        .slice(0, 8)
        .join(", ")} wait for transfers no peer posts (run cclab verify)`,
    );
  }
  const keys: (string | undefined)[] = [];
  const places: (Int32Array | undefined)[] = [];
  rounds.forEach((rd, t) => {
    // Canonical order: by source, then offset (a pair appears once in a round).
    const order = rd.src
      .map((_, i) => i)
      .sort(
        (x, y) => (rd.src[x] as number) - (rd.src[y] as number) || (rd.offset[x] as number) - (rd.offset[y] as number),
      );
    const place = new Int32Array(order.length);
    order.forEach((i, k) => {
      place[i] = k;
    });
    let reduced = 0;
    for (const b of rd.reduced.values()) reduced = Math.max(reduced, b);
    keys[t] = `${order.map((i) => `${rd.src[i]}>${rd.offset[i]}:${rd.bytes[i]}`).join(",")}/${reduced}`;
    places[t] = place;
  });
  return { sym, flat, rounds, keys, places, roundOf, messageOf, operations: flat.ops };
}

/**
 * Up to this many operations in all (rank 0's plan times n), a call with a symmetry is walked
 * rank by rank all the same, each rank's plan its representative's moved (compiled once per
 * representative): every copy of a message then keeps its own duration, where the quotient
 * charges each the slowest copy's at every round.
 */
export const MOVED_OPERATIONS = THRESHOLDS.MOVED_OPERATIONS.value;

/** Rank r's plan from its representative's (rank r mod p), every peer moved under the symmetry. */
function movedPlan(rep: Plan, r: number, sym: Symmetry, n: number): Plan {
  if (r < sym.p) return rep;
  return {
    ...rep,
    ops: rep.ops.map((op) =>
      op.kind === "send" || op.kind === "recv" ? { ...op, peer: moved(sym.kind, op.peer, r, sym.p, n) } : op,
    ),
  };
}

function walk(
  alg: Algorithm,
  call: CollectiveCall,
  elementBytes: number,
  symmetric = true,
  probe?: ReturnType<typeof representatives>,
  /** Under a symmetry, walk every rank with moved plans where that fits (MOVED_OPERATIONS). */
  moveRanks = true,
): Walk {
  let sym: Symmetry;
  let rep0: Plan;
  if (probe && (symmetric || probe.sym.p === call.size)) {
    // The probe found the symmetry (or none).
    sym = probe.sym;
    rep0 = probe.plan(0);
  } else {
    const r = representatives(alg, call, symmetric);
    sym = r.sym;
    rep0 = r.plan(0);
  }
  const estimate = rep0.ops.length * sym.p;
  const n = call.size;
  const limit = (ops: number): never => {
    throw budgetError(alg, call, ops);
  };
  if (sym.p < n && moveRanks && rep0.ops.length * n <= MOVED_OPERATIONS) {
    const reps: Plan[] = [];
    const planOf = (r: number): Plan => {
      const k = r % sym.p;
      reps[k] ??= k === 0 ? rep0 : compile(alg, rankCall(call, k));
      return movedPlan(reps[k] as Plan, r, sym, n);
    };
    const every: Symmetry = { kind: "rotate", p: n };
    return { ...roundsOf(flatten(planOf, n, every, elementBytes, limit), n, every), movedUnder: sym };
  }
  if (estimate > PHASES_MAX_OPERATIONS) throw budgetError(alg, call, estimate);
  // Each walked rank compiled in its turn, copied flat and let go (rank 0's size is only an
  // estimate: the budget is checked again on what is compiled).
  const flat = flatten((r) => compile(alg, rankCall(call, r)), n, sym, elementBytes, limit);
  return roundsOf(flat, n, sym);
}

/** One distinct round solved: each message's duration (canonical order), and the bytes it put on each link. */
interface Phase {
  readonly duration: Float64Array;
  /** Each message's route latency (of the copy that ends last): the part of its duration before its bytes move. */
  readonly latency: Float64Array;
  /** Per message and copy (message · copies + copy): each copy's own duration and route latency. */
  readonly copyDuration: Float64Array;
  readonly copyLatency: Float64Array;
  readonly bytes: Float64Array;
  uses: number;
}

/**
 * Times a walk: each distinct round's messages start together and share the links (solved once
 * per pattern), which gives every message a duration (its latency and its bytes at the rates
 * that sharing leaves it; under a symmetry, the slowest of the ranks it stands for); then the
 * plans run again in dataflow order with those durations, reductions costing gamma.
 */
function timeWalk(
  w: Walk,
  n: number,
  params: NetworkParams,
  /** Under a symmetry, time every copy on its own where copiesWalk can (the fold reads `start`, which that walk does not give). */
  perCopy = false,
): {
  time: number;
  messages: number;
  solves: number;
  phases: Map<string, Phase>;
  rounds: number;
  critical: number;
  /** Each walked operation's start in the timed walk (empty where every copy was timed on its own). */
  start: Float64Array;
  /** Whether every copy was timed on its own (copiesWalk). */
  perCopy: boolean;
} {
  const { topology, placement } = params;
  const gamma = params.gamma ?? 0;
  const { sym } = w;
  const p = sym.p;
  const routes = new Routes(topology);
  const memo = new Map<string, Phase>();
  const phaseOf: (Phase | undefined)[] = [];
  let messages = 0;
  let rounds = 0;
  const copies = n / p;
  // Each distinct round once: its messages (every copy under a symmetry) as a set of flows, all
  // starting together, solved to their ends (in parallel threads where there are cores).
  const sets: FlowSet[] = [];
  const solving: { key: string; m: number; lats: Float64Array }[] = [];
  const queued = new Set<string>();
  w.rounds.forEach((rd, t) => {
    if (!rd) return;
    rounds++;
    messages += rd.src.length * copies;
    const key = w.keys[t] as string;
    if (queued.has(key)) return;
    queued.add(key);
    const place = w.places[t] as Int32Array;
    const m = rd.src.length;
    const lats = new Float64Array(m * copies);
    const bytes = new Grow(new Float64Array(1024));
    const from = new Grow(new Float64Array(1024));
    const tag = new Grow(new Int32Array(1024));
    const pathStart = new Grow(new Int32Array(1024));
    const links = new Grow(new Int32Array(4096));
    for (let i = 0; i < m; i++) {
      const size = rd.bytes[i] as number;
      for (let j = 0; j < copies; j++) {
        const src = (rd.src[i] as number) + j * p;
        const dst = p === n ? (rd.offset[i] as number) : atOffset(sym.kind, src, rd.offset[i] as number, n);
        const a = placement[src] as number;
        const b = placement[dst] as number;
        if (a === b) continue;
        const { paths, latency } = routes.get(a, b);
        const tg = (place[i] as number) * copies + j;
        paths.forEach((path, k) => {
          lats[tg] = Math.max(lats[tg] as number, latency[k] as number);
          bytes.push(size / paths.length);
          from.push(latency[k] as number);
          tag.push(tg);
          pathStart.push(links.length);
          for (const l of path) links.push(l);
        });
      }
    }
    pathStart.push(links.length);
    sets.push({
      bytes: bytes.done(),
      from: from.done(),
      tag: tag.done(),
      pathStart: pathStart.done(),
      links: links.done(),
      tags: m * copies,
    });
    solving.push({ key, m, lats });
  });
  const solved = solveSets(topology.links.bandwidth, sets, {
    ...(params.threads !== undefined ? { threads: params.threads } : {}),
    ...(params.onProgress
      ? { onDone: (done: number, total: number) => params.onProgress?.(done, total, "rounds") }
      : {}),
  });
  let solves = 0;
  solved.forEach(({ ends, linkBytes, solves: k }, j) => {
    const { key, m, lats } = solving[j] as (typeof solving)[number];
    solves += k;
    // A message stands for its copies: the slowest of them.
    const duration = new Float64Array(m);
    const latency = new Float64Array(m);
    for (let i = 0; i < m; i++) {
      for (let c = 0; c < copies; c++) {
        if ((ends[i * copies + c] as number) < (duration[i] as number)) continue;
        duration[i] = ends[i * copies + c] as number;
        latency[i] = lats[i * copies + c] as number;
      }
    }
    memo.set(key, { duration, latency, copyDuration: ends, copyLatency: lats, bytes: linkBytes, uses: 0 });
  });
  w.rounds.forEach((rd, t) => {
    if (!rd) return;
    const phase = memo.get(w.keys[t] as string) as Phase;
    phase.uses++;
    phaseOf[t] = phase;
  });
  // One connection per (sender, receiver), in order, as in the exact engine. A round's transfers
  // to one peer were solved as one flow: each takes its own bytes' part of that flow's time (its
  // mean rate), once its latency is over and the transfers before it on the connection (this
  // round's or an earlier one's) are through. Charging each the whole flow's time made a
  // pipeline like PAT's, with many chunks to one peer in a round, wait for the last chunk.
  if (p < n && perCopy && gamma === 0) {
    const v = copiesWalk(w, n, phaseOf);
    if (v) return { ...v, messages, solves, phases: memo, rounds, start: new Float64Array(0), perCopy: true };
  }
  const pairFree = new Float64Array(w.flat.pairs);
  const out = dataflow(
    w.flat,
    (snd, _rcv, start) => {
      const t = w.roundOf[snd] as number;
      if (t < 0) return start;
      const msg = w.messageOf[snd] as number;
      const rd = w.rounds[t] as Round;
      const place = (w.places[t] as Int32Array)[msg] as number;
      const phase = phaseOf[t] as Phase;
      const d = phase.duration[place] as number;
      const l = Math.min(d, phase.latency[place] as number);
      const share = (w.flat.bytes[snd] as number) / (rd.bytes[msg] as number);
      // The connection: the sender's (rank, offset) pair.
      const pair = w.flat.pair[snd] as number;
      const end = Math.max(start + l, pairFree[pair] as number) + (d - l) * share;
      pairFree[pair] = end;
      return end;
    },
    reductionsOf(w.flat, gamma),
  );
  let critical = 0;
  out.finish.forEach((t, r) => {
    if (t > (out.finish[critical] as number)) critical = r;
  });
  return { time: out.time, messages, solves, phases: memo, rounds, critical, start: out.start, perCopy: false };
}

/**
 * The most memory copiesWalk's time vectors may hold at once before it gives up (the quotient
 * walk then serves). The ring all-reduce at 16,384 ranks needs 2 GiB and 128 KiB: its all-gather
 * receives (one vector each, 128 KiB) wait from the reduce-scatter step that last read their
 * chunk until the ring comes round; with the rest of the call that stays under 2.6 GiB.
 */
const COPIES_WALK_BYTES = 2.5 * 2 ** 30;

/** Thrown inside copiesWalk where a slab cannot be had, caught by it: it gives way as past its bound. */
const GIVE_WAY = Symbol("copiesWalk gives way");

/**
 * The timed walk under a symmetry with every copy timed on its own, without walking every rank:
 * the representatives' plans are run once with each operation's time a vector over its C = n/p
 * copies (copy j of rank r is rank r + j·p). A transfer's copy j meets its peer's copy σ(j)
 * (rotation: (b + j) mod C; exclusive-or: b xor j, b the copy of copy 0's peer) and takes its own
 * copy's duration from the round's solve. This is dataflow()'s walk of every rank in max-plus
 * form: an operation starts at the latest of its dependencies' ends, a queue posts in program
 * order, a transfer starts when both ends are posted and ends after its latency, its
 * connection's previous transfer and its bytes. That needs no order of events, and so gives the
 * every-rank walk's times, where reductions cost nothing (gamma 0, checked by the caller) and
 * no connection carries two posting queues (else undefined, as where the vectors alive would pass
 * COPIES_WALK_BYTES). Each step is a loop over C numbers, so a ring at 16,384 ranks (1.3·10^9
 * operations over every rank) takes seconds where walking every rank does not fit.
 */
function copiesWalk(
  w: Walk,
  n: number,
  phaseOf: readonly (Phase | undefined)[],
): { time: number; critical: number } | undefined {
  const f = w.flat;
  const { kind: symKind, p } = w.sym;
  const C = n / p;
  const { ops, succStart, succ, queueOf, queueStart, members, partner } = f;
  // A connection (the sender's (rank, offset) pair) must carry one posting queue: its transfers
  // then follow that queue's order whatever the times.
  const pairQueue = new Int32Array(f.pairs).fill(-1);
  for (let g = 0; g < ops; g++) {
    if (f.kind[g] !== SEND) continue;
    const pr = f.pair[g] as number;
    const q = queueOf[g] as number;
    if (pairQueue[pr] === -1) pairQueue[pr] = q;
    else if (pairQueue[pr] !== q) return undefined;
  }
  // Vectors are recycled through a free list: a ring at 16,384 ranks makes hundreds of thousands
  // of them, 128 KiB each, and letting the collector take them cost as much as the walk. A vector
  // from the list holds old numbers: every user writes it whole before it reads it. New ones are
  // cut from slabs that double (each buffer allocated moves V8's external-memory count, and every
  // 64 MiB or so of it cost a full collection: 37 of them, 5 s, at 2 GiB); a slab's pages not yet
  // cut are never touched, so they take no memory.
  let live = 0;
  const spare: Float64Array[] = [];
  let slab = new ArrayBuffer(0);
  let carved = 0;
  let made = 0;
  const vector = (): Float64Array => {
    live += C * 8;
    const v = spare.pop();
    if (v) return v;
    if (carved === slab.byteLength) {
      // Past what the process may allocate, give way (the caller takes the quotient walk).
      try {
        slab = new ArrayBuffer(Math.max(16, made) * C * 8);
      } catch {
        throw GIVE_WAY;
      }
      carved = 0;
    }
    made++;
    carved += C * 8;
    return new Float64Array(slab, carved - C * 8, C);
  };
  const drop = (v: Float64Array) => {
    live -= C * 8;
    spare.push(v);
  };
  const pending = f.indeg.slice();
  const ready: (Float64Array | undefined)[] = new Array(ops);
  const qpos = new Int32Array(queueStart.length - 1);
  // A queue's posting times (the running latest of its members' ready times) are snapshots shared
  // by the members posted while it does not move (a ring's receives are all posted at 0), kept
  // while a posted member or the queue still holds them.
  const zeros = new Float64Array(C);
  const snaps: (Float64Array | undefined)[] = [zeros];
  const refs: number[] = [1];
  const release = (id: number) => {
    if (--(refs[id] as number) > 0 || id === 0) return;
    drop(snaps[id] as Float64Array);
    snaps[id] = undefined;
  };
  const qlast = new Int32Array(queueStart.length - 1);
  const posted = new Int32Array(ops);
  const pairFree: (Float64Array | undefined)[] = new Array(f.pairs);
  const finish = Array.from({ length: p }, () => new Float64Array(C));
  let done = 0;
  const work: number[] = [];
  const end = (g: number, at: Float64Array) => {
    done++;
    // A rank finishes with its last operations (those nothing waits for): an end is never
    // earlier than its dependencies'.
    if (succStart[g] === succStart[g + 1]) {
      const fin = finish[f.rank[g] as number] as Float64Array;
      for (let j = 0; j < C; j++) if ((at[j] as number) > (fin[j] as number)) fin[j] = at[j] as number;
    }
    for (let e = succStart[g] as number; e < (succStart[g + 1] as number); e++) {
      const x = succ[e] as number;
      const r = ready[x];
      if (!r) {
        const v = vector();
        v.set(at);
        ready[x] = v;
      } else for (let j = 0; j < C; j++) if ((at[j] as number) > (r[j] as number)) r[j] = at[j] as number;
      if (--(pending[x] as number) === 0) work.push(x);
    }
  };
  // The transfer of send `snd` and receive `rcv` (the k-th of their queues), both posted.
  const transfer = (snd: number, rcv: number) => {
    const ps = snaps[posted[snd] as number] as Float64Array;
    const pr = snaps[posted[rcv] as number] as Float64Array;
    const r = f.rank[snd] as number;
    const peer0 = atOffset(symKind, r, f.offset[snd] as number, n);
    const b = Math.floor(peer0 / p);
    const rotate = symKind === "rotate";
    const out = vector();
    const back = vector();
    const t = w.roundOf[snd] as number;
    if (t < 0) {
      for (let j = 0, k = b; j < C; j++, k++) {
        const x = rotate ? (k >= C ? k - C : k) : b ^ j;
        const e = Math.max(ps[j] as number, pr[x] as number);
        out[j] = e;
        back[x] = e;
      }
    } else {
      const msg = w.messageOf[snd] as number;
      const place = (w.places[t] as Int32Array)[msg] as number;
      const phase = phaseOf[t] as Phase;
      const share = (f.bytes[snd] as number) / ((w.rounds[t] as Round).bytes[msg] as number);
      const pair = f.pair[snd] as number;
      let free = pairFree[pair];
      if (!free) {
        free = vector().fill(0);
        pairFree[pair] = free;
      }
      const durations = phase.copyDuration;
      const latencies = phase.copyLatency;
      const base = place * C;
      for (let j = 0, k = b; j < C; j++, k++) {
        const x = rotate ? (k >= C ? k - C : k) : b ^ j;
        const start = Math.max(ps[j] as number, pr[x] as number);
        const d = durations[base + j] as number;
        const l = Math.min(d, latencies[base + j] as number);
        const e = Math.max(start + l, free[j] as number) + (d - l) * share;
        free[j] = e;
        out[j] = e;
        back[x] = e;
      }
    }
    release(posted[snd] as number);
    release(posted[rcv] as number);
    end(snd, out);
    end(rcv, back);
    drop(out);
    drop(back);
  };
  const take = (g: number) => {
    const q = queueOf[g] as number;
    if (q < 0) {
      end(g, ready[g] ?? zeros);
      if (ready[g]) drop(ready[g] as Float64Array);
      ready[g] = undefined;
      return;
    }
    // Post the queue's members in order while each is ready.
    const first = queueStart[q] as number;
    const last = queueStart[q + 1] as number;
    while (first + (qpos[q] as number) < last) {
      const k = qpos[q] as number;
      const i = members[first + k] as number;
      if ((pending[i] as number) > 0) break;
      qpos[q] = k + 1;
      const r = ready[i];
      if (r) {
        const cur = qlast[q] as number;
        const ql = snaps[cur] as Float64Array;
        let later = false;
        for (let j = 0; j < C && !later; j++) later = (r[j] as number) > (ql[j] as number);
        if (later) {
          // A new snapshot: the old one stays with the members posted at it.
          for (let j = 0; j < C; j++) if ((ql[j] as number) > (r[j] as number)) r[j] = ql[j] as number;
          snaps.push(r);
          refs.push(1);
          qlast[q] = snaps.length - 1;
          release(cur);
        } else drop(r);
        ready[i] = undefined;
      }
      posted[i] = qlast[q] as number;
      refs[posted[i] as number]!++;
      const q2 = partner[q] as number;
      if (q2 >= 0 && (qpos[q2] as number) > k) {
        const h = members[(queueStart[q2] as number) + k] as number;
        if (f.kind[i] === SEND) transfer(i, h);
        else transfer(h, i);
      }
    }
  };
  for (let g = 0; g < ops; g++) if (pending[g] === 0) work.push(g);
  try {
    while (work.length > 0) {
      take(work.pop() as number);
      if (live > COPIES_WALK_BYTES) return undefined;
    }
  } catch (e) {
    if (e === GIVE_WAY) return undefined;
    throw e;
  }
  if (done < ops) return undefined;
  let time = 0;
  let critical = 0;
  for (let r = 0; r < p; r++) {
    const fin = finish[r] as Float64Array;
    for (let j = 0; j < C; j++) {
      if ((fin[j] as number) > time) {
        time = fin[j] as number;
        critical = r + j * p;
      }
    }
  }
  return { time, critical };
}

/** What the note adds on a hashed (ECMP) network, where the rounds' copies fall out of step. */
const HASHED_CAVEAT = `; on an ECMP-hashed network the shortcut is least accurate for the log-step algorithms (recursive doubling, Swing, Bruck; their measured error: docs/network-validation.md), and 'auto' gives calls of up to ${THRESHOLDS.AUTO_EXACT_HASHED_MAX_OPERATIONS.value.toLocaleString("en")} operations the exact engine`;

/** Up to this many operations (every rank's plan) the phases engine walks every rank, symmetry or not. */
export const EVERY_RANK_OPERATIONS = THRESHOLDS.EVERY_RANK_OPERATIONS.value;

/** Above this many operations a pipelined call with no symmetry is folded (below, walking it is quick). */
export const FOLD_OPERATIONS = THRESHOLDS.FOLD_OPERATIONS.value;

/** A walk timed (timeWalk's answer). */
type Timed = ReturnType<typeof timeWalk>;

/**
 * A pipeline folded: the call walked at a smaller count of whole segments, M. A pipeline's rounds
 * are its fill, its steady round (every stage busy) repeated, and its drain; each further c
 * segments (c: the segments that enter the pipeline a round; the double binary tree's two trees
 * take one each, c = 2) add one more steady round, and in the timed walk each steady round
 * starts a fixed time (its pace) after the one before, or, where a connection's backlog builds
 * up, no sooner than that connection carries a round's bytes. So the full call takes the walk's
 * time plus that pace for each further steady round. The walk is folded only where its rounds show
 * that shape: one round pattern at least twice in a row, other rounds before and after it and
 * nowhere else; c is read from the walk (a steady round's sends against all the sends of the
 * call: every segment makes as many) and must come out a whole number.
 *
 * A tree pipeline is full once its first segment has gone up ⌈log2 n⌉ levels and down again, so
 * M starts at 4·⌈log2 n⌉ + 2 segments (two steady rounds for the double binary tree), doubled
 * while the shape does not show. Walking at M and M + 2 and taking the line through the two
 * times, as this did before, gives the same times (to 0.001%, double binary tree at n = 64 to
 * 1,024 on tori and the fat-tree) for twice the walking.
 */
function fold(
  alg: Algorithm,
  call: CollectiveCall,
  elementBytes: number,
  everyRank: number,
  estimate: number,
  time: (w: Walk) => Timed,
  moveRanks = true,
):
  | {
      t: Timed;
      perSegment: number;
      perRound: number;
      c: number;
      sym: Symmetry;
      movedUnder: Symmetry | undefined;
      operations: number;
      steady: string;
      m: number;
      repeats: number;
    }
  | undefined {
  const n = call.size;
  const segments = call.count / call.segment;
  for (let m = Math.max(16, 4 * Math.ceil(Math.log2(n)) + 2); m + 2 < segments; m *= 2) {
    // Every rank walked where the smaller call makes that cheap (everyRank: the whole call's operations).
    const symmetric = (everyRank * m) / segments > EVERY_RANK_OPERATIONS;
    // It must fit what the model holds (flatten() also counts what it compiles).
    if (((symmetric ? estimate : everyRank) * m) / segments > PHASES_MAX_OPERATIONS) return undefined;
    let w: Walk;
    try {
      w = walk(alg, { ...call, count: m * call.segment }, elementBytes, symmetric, undefined, moveRanks);
    } catch {
      return undefined;
    }
    // The rounds with messages, and the longest run of one pattern among them: [end - repeats, end).
    const ts: number[] = [];
    w.keys.forEach((k, t) => {
      if (k !== undefined) ts.push(t);
    });
    let repeats = 0;
    let end = 0;
    for (let i = 0, run = 0; i < ts.length; i++) {
      run = i > 0 && w.keys[ts[i] as number] === w.keys[ts[i - 1] as number] ? run + 1 : 1;
      if (run > repeats) {
        repeats = run;
        end = i + 1;
      }
    }
    const steady = w.keys[ts[end - 1] as number] as string;
    if (repeats < 2 || end === repeats || end === ts.length) continue;
    if (ts.some((t, i) => (i < end - repeats || i >= end) && w.keys[t] === steady)) continue;
    // Segments a round: the last steady round's sends against the call's (each counted once).
    const a = ts[end - 2] as number;
    const b = ts[end - 1] as number;
    let sends = 0;
    let inRound = 0;
    for (let g = 0; g < w.flat.ops; g++) {
      const r = w.roundOf[g] as number;
      if (r < 0) continue;
      sends++;
      if (r === b) inRound++;
    }
    const c = Math.round((inRound * m) / sends);
    if (c < 1 || Math.abs((inRound * m) / sends - c) > 0.05 * c) continue;
    const t = time(w);
    // The pace: how much later the last steady round starts (its latest message) than the one before.
    let sa = 0;
    let sb = 0;
    for (let g = 0; g < w.flat.ops; g++) {
      const r = w.roundOf[g] as number;
      if (r === a) sa = Math.max(sa, t.start[g] as number);
      else if (r === b) sb = Math.max(sb, t.start[g] as number);
    }
    // In the long run a round comes no faster than its busiest connection carries its bytes
    // (each connection's messages go one after another): where a backlog builds up later than
    // the walk shows (torus:10x10, n = 100: the pace grows from 14.2 to 15.7 µs after seven
    // steady rounds), that is the pace.
    const phase = t.phases.get(steady) as Phase;
    let busiest = 0;
    for (let k = 0; k < phase.duration.length; k++) {
      const d = phase.duration[k] as number;
      busiest = Math.max(busiest, d - Math.min(d, phase.latency[k] as number));
    }
    const pace = Math.max(sb - sa, busiest);
    // A steady round's messages, every rank's (a walked rank's stand for n / p).
    const perRound = (w.rounds[b] as Round).src.length * (n / w.sym.p);
    return {
      t,
      perSegment: pace / c,
      c,
      perRound,
      sym: w.sym,
      movedUnder: w.movedUnder,
      operations: w.operations,
      steady,
      m,
      repeats,
    };
  }
  return undefined;
}

/** Times one call with the phases shortcut. */
export function networkTimePhases(
  alg: Algorithm,
  call: CollectiveCall,
  params: NetworkParams & {
    /** Fold a long pipeline: above FOLD_OPERATIONS (default, true), never (false), or wherever it can ('always'). */
    readonly fold?: boolean | "always";
    /** Walk every rank (true), or under the schedule's symmetry where it has one (false); default: every rank up to EVERY_RANK_OPERATIONS. */
    readonly everyRank?: boolean;
    /** Under a symmetry, every rank walked with its representative's plan moved where that fits (true; the default where reductions cost gamma > 0), or only the representatives (false; the default with gamma 0, timed per copy by copiesWalk). */
    readonly moveRanks?: boolean;
    /** Walking only the representatives, time every copy on its own where copiesWalk can (true, default), or charge each message its slowest copy (false). */
    readonly perCopy?: boolean;
  },
): NetworkResult {
  const n = call.size;
  checkNetworkParams(params, n);
  const s = dtypeInfo(call.dtype as DType).bytes;
  const probe = representatives(alg, call);
  const { topology } = params;
  const linkBytes = new Float64Array(topology.links.count);
  const addBytes = (phases: Map<string, Phase>, times = 1, only?: string) => {
    for (const [key, ph] of phases) {
      const uses = only === undefined ? ph.uses * times : key === only ? times : 0;
      if (uses === 0) continue;
      for (let l = 0; l < linkBytes.length; l++)
        linkBytes[l] = (linkBytes[l] as number) + uses * (ph.bytes[l] as number);
    }
  };
  let sym: Symmetry;
  let operations: number;
  let time: number;
  let t: Timed;
  let rounds: number;
  let solves: number;
  let messages: number;
  let folded = "";
  let movedUnder: Symmetry | undefined;
  const everyRank = params.everyRank ?? probe.everyRank <= EVERY_RANK_OPERATIONS;
  const work = everyRank ? probe.everyRank : probe.estimate;
  const f =
    params.fold === "always" || (work > FOLD_OPERATIONS && params.fold !== false)
      ? fold(alg, call, s, probe.everyRank, probe.estimate, (w) => timeWalk(w, n, params), params.moveRanks ?? true)
      : undefined;
  if (f) {
    t = f.t;
    sym = f.sym;
    movedUnder = f.movedUnder;
    operations = f.operations;
    solves = t.solves;
    // Each further c segments: one more steady round, its pace later.
    const more = call.count / call.segment - f.m;
    time = t.time + more * f.perSegment;
    rounds = t.rounds + more / f.c;
    messages = t.messages + (more / f.c) * f.perRound;
    addBytes(t.phases);
    addBytes(t.phases, more / f.c, f.steady);
    folded = `, the pipeline folded: walked at ${f.m} segments, its steady round (every stage busy) ${f.repeats} times in a row, ${f.c} segment${f.c === 1 ? "" : "s"} a round; each further round taken to add the last one's pace, to ${Number((call.count / call.segment).toFixed(2))} segments`;
  } else {
    // Every rank walked where that is cheap: each message then keeps its own duration (a
    // straggler delays only what waits for it). Under a symmetry, with reductions free, the
    // per-copy walk (copiesWalk) gives the same times from the representatives alone, 10 – 60
    // times faster; the moved walk serves where they cost gamma.
    // Refused before the walk where its memory estimate does not fit the heap (phases-memory.ts).
    checkPhasesMemory(alg, call, probe.plan(0), work);
    const w = walk(alg, call, s, !everyRank, probe, params.moveRanks ?? (params.gamma ?? 0) > 0);
    t = timeWalk(w, n, params, params.perCopy ?? true);
    sym = w.sym;
    movedUnder = w.movedUnder;
    operations = w.operations;
    solves = t.solves;
    messages = t.messages;
    time = t.time;
    rounds = t.rounds;
    addBytes(t.phases);
  }
  // Messages priced round by round may overlap on a link in the dataflow order: no link carries
  // more than its bandwidth allows, so the call takes at least its busiest link's bytes at its rate.
  let floor = 0;
  for (let l = 0; l < linkBytes.length; l++) {
    const need = (linkBytes[l] as number) / (topology.links.bandwidth[l] as number);
    if (need > floor) floor = need;
  }
  if (floor > time) time = floor;
  const p = sym.p;
  const named = (y: Symmetry) => `(${y.kind === "rotate" ? "rotation" : "exclusive-or"}, period ${y.p})`;
  const symText = movedUnder
    ? `, every rank walked, ranks ${movedUnder.p}.. with the plans of ranks 0..${movedUnder.p - 1} moved under the schedule's symmetry ${named(movedUnder)}`
    : p < n
      ? `, ranks 0..${p - 1} walked under the schedule's symmetry ${named(sym)}, ${t.perCopy ? `each of their operations timed for its ${n / p} copies at once, each copy with its own messages' durations` : `each message charged the slowest of its ${n / p} copies (slow on an ECMP fabric: docs/network-validation.md)`}`
      : "";
  return {
    time,
    // Under a symmetry the walked rank stands for every rank of its class.
    criticalRank: t.critical,
    messages,
    operations,
    engine: "phases",
    ...(movedUnder ? { symmetry: movedUnder } : p < n ? { symmetry: sym } : {}),
    approximate: true,
    note: `approximate: ${Number(rounds.toFixed(2))} logical rounds, each round's messages sharing the links as if started together (${t.phases.size} distinct), then timed in dataflow order${symText}${folded}${params.topology.hashed ? HASHED_CAVEAT : ""}`,
    linkBytes,
    solves,
  };
}
