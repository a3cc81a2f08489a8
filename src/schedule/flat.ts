/**
 * A compiled plan in flat typed arrays, and the static proof's walk over every rank's flat plan.
 *
 * The proof at hundreds or thousands of ranks holds every rank's plan at once: as plan.ts's
 * objects (steps, regions, labels, one object and one dependency array per operation) that is
 * hundreds of bytes an operation, and the garbage collector spent most of the proof scanning them.
 * Here each rank's plan is compiled (plan.ts, the one compiler), linted, and kept only as numbers:
 * kind, peer, element count and places per operation, its dependencies and successors, its
 * posting queues (with their channel) and step ranges, about sixty bytes an operation. Labels and
 * regions, which only messages need, come from compiling that one rank again (compile is a pure
 * function of the algorithm and the call).
 *
 * walk() is interpret.ts's walk (the same two orders, the same rendezvous pairing per peer and
 * channel in posting order, the same event order: a transfer ends one tick after it pairs, a
 * local operation at once, ties in the order they were scheduled), without the clock the model
 * needs: its events live in two first-in first-out buckets, now and the next tick, which is the
 * order interpret's (time, sequence) heap gives when every transfer takes 1 and every local
 * operation 0.
 *
 * Why the proof of a data plan walks the steps order only: where every rank's plan completes in
 * the steps order, it completes in the dataflow order too, each send paired with the same receive.
 *   - Pairing: the i-th send from a to b on a channel pairs with b's i-th receive from a on it,
 *     in both orders, since both post a queue's transfers in program order.
 *   - By induction over the order in which the steps walk ends operations: say every operation
 *     that ended before o there ends in the dataflow walk. o's dependencies ended before o
 *     (a transfer's lie in earlier steps; a local's in earlier steps, its step's transfers or
 *     its step's earlier locals, which end in program order), so the dataflow walk readies o;
 *     a local then runs. A transfer's queue holds before it only transfers of its step or
 *     earlier ones, whose dependencies all lie in steps that ended before o's began: the
 *     dataflow walk readies them, so it posts o. Its partner p was posted before o ended, and
 *     the same holds for p's dependencies and p's queue: the dataflow walk posts p. The two
 *     pair, as said, and end.
 * The data is the same in both orders (dependencies come from memory: dataflow only reorders
 * operations that touch different memory). test/verify-walk.test.ts checks the claim on random
 * plans and every registered algorithm. (A plan that deadlocks in the steps order may still
 * complete as dataflow: the proof reports the steps order's deadlock.)
 */
import { invariant } from "../core/assert.js";
import { Growable } from "../core/growable.js";
import type { Layout, RankCall } from "../specs/types.js";
import type { Order } from "./interpret.js";
import type { Plan } from "./plan.js";

/** Operation kinds, as stored in FlatPlan.kind. */
export const SEND = 0;
export const RECV = 1;
export const COPY = 2;
export const REDUCE = 3;
export const SCALE = 4;
const KIND = { send: SEND, recv: RECV, copy: COPY, reduce: REDUCE, scale: SCALE } as const;

/** What a flat walk reads of a plan's order: its dependencies and its posting queues. */
export interface FlatOrder {
  /** Dependencies per operation, and successors: succ[succStart[i] .. succStart[i+1]). */
  readonly indeg: Int32Array;
  readonly succStart: Int32Array;
  readonly succ: Int32Array;
  /** Posting queue of each transfer (-1 for locals); queue q is members[queueStart[q] .. queueStart[q+1]). */
  readonly queueOf: Int32Array;
  readonly queueStart: Int32Array;
  readonly members: Int32Array;
}

export interface FlatPlan extends FlatOrder {
  readonly rank: number;
  readonly call: RankCall;
  readonly layout: Layout;
  /** Scratch elements the plan needs. */
  readonly scratch: number;
  /** Operations. */
  readonly m: number;
  readonly kind: Uint8Array;
  /** Transfers: the peer (-1 for local operations). */
  readonly peer: Int32Array;
  /** Each posting queue's channel (a queue is one channel, peer and kind): one number a queue, not one an operation. */
  readonly queueChannel: Int32Array;
  /** Elements of the operation's region (written, or read by a send). */
  readonly count: Int32Array;
  /** Plan.places: for op i at 6i..6i+5, memory and first element of its region, src and with. */
  readonly places: Int32Array;
  /**
   * The steps walked: range k is ops [rangeStart[k], rangeStart[k+1]), its rangeTransfers[k]
   * transfers first, then its local operations (the order compile emits a step in).
   */
  readonly rangeStart: Int32Array;
  readonly rangeTransfers: Int32Array;
}

export const isTransferKind = (k: number): boolean => k <= RECV;

/** A plan's numbers, without its objects. Queues keep channels apart, as interpret's do. */
export function flatPlan(plan: Plan): FlatPlan {
  const { ops } = plan;
  const m = ops.length;
  const size = plan.call.size;
  const kind = new Uint8Array(m);
  const peer = new Int32Array(m);
  const count = new Int32Array(m);
  const indeg = new Int32Array(m);
  const succStart = new Int32Array(m + 1);
  const queueOf = new Int32Array(m).fill(-1);
  const ids = new Map<number, number>();
  const queueSize: number[] = [];
  const queueChannel: number[] = [];
  const starts: number[] = [];
  const transfers: number[] = [];
  for (let i = 0; i < m; i++) {
    const op = ops[i] as Plan["ops"][number];
    const k = KIND[op.kind];
    kind[i] = k;
    peer[i] = op.peer;
    count[i] = op.region.count;
    indeg[i] = op.deps.length;
    for (const d of op.deps) succStart[d + 1]!++;
    if (i === 0 || (ops[i - 1] as Plan["ops"][number]).step !== op.step) {
      starts.push(i);
      transfers.push(0);
    }
    if (isTransferKind(k)) {
      // The walk's steps order relies on it: a step's transfers before its local operations.
      invariant(
        i === starts[starts.length - 1]! + transfers[transfers.length - 1]!,
        () => `rank ${plan.call.rank}, step ${op.step}: a transfer after a local operation`,
      );
      transfers[transfers.length - 1]!++;
      // Any one-to-one key of (channel, peer, kind) will do: its arithmetic's mutants are keys too.
      // Stryker disable next-line ArithmeticOperator,EqualityOperator
      const key = (op.channel * size + op.peer) * 2 + (k === SEND ? 1 : 0);
      let q = ids.get(key);
      if (q === undefined) {
        q = queueSize.length;
        ids.set(key, q);
        queueSize.push(0);
        queueChannel.push(op.channel);
      }
      queueOf[i] = q;
      queueSize[q]!++;
    }
  }
  starts.push(m);
  for (let i = 0; i < m; i++) succStart[i + 1]! += succStart[i] as number;
  const succ = new Int32Array(succStart[m] as number);
  const fill = succStart.slice(0, m);
  for (let i = 0; i < m; i++) for (const d of (ops[i] as Plan["ops"][number]).deps) succ[fill[d]!++] = i;
  const queueStart = new Int32Array(queueSize.length + 1);
  for (let q = 0; q < queueSize.length; q++) queueStart[q + 1] = (queueStart[q] as number) + (queueSize[q] as number);
  const members = new Int32Array(queueStart[queueSize.length] as number);
  const qfill = queueStart.slice(0, queueSize.length);
  for (let i = 0; i < m; i++) {
    const q = queueOf[i] as number;
    if (q >= 0) members[qfill[q]!++] = i;
  }
  return {
    rank: plan.call.rank,
    call: plan.call,
    layout: plan.layout,
    scratch: plan.scratch,
    m,
    kind,
    peer,
    queueChannel: Int32Array.from(queueChannel),
    count,
    places: plan.places,
    indeg,
    succStart,
    succ,
    queueOf,
    queueStart,
    members,
    rangeStart: Int32Array.from(starts),
    rangeTransfers: Int32Array.from(transfers),
  };
}

/** What happens at the walk's events: a send paired with its receive, a local operation run. */
export interface FlatEffects {
  transfer?(sendRank: number, send: number, recvRank: number, recv: number): void;
  local?(rank: number, index: number): void;
}

export interface FlatOutcome {
  readonly complete: boolean;
  /** Where ranks are stuck: each rank's oldest unfinished operation and whether it was posted. */
  readonly stuck: readonly { readonly rank: number; readonly index: number; readonly posted: boolean }[];
}

/** One (channel, sender, receiver) key's waiting items, all of one side, as rank, operation, rank, ... from head. */
interface Waiting {
  items: number[];
  head: number;
  side: 0 | 1;
}

/** Pairs sends with receives per key, oldest first; an item is (rank, operation). */
class PairQueues {
  private readonly keys = new Map<number, Waiting>();
  /** The item the last post() paired with. */
  rank = 0;
  index = 0;
  /** Posts one side (0 send, 1 receive); true when it pairs with the other side's oldest waiting item (then in rank, index). */
  post(side: 0 | 1, key: number, rank: number, index: number): boolean {
    const q = this.keys.get(key);
    if (q === undefined) {
      this.keys.set(key, { items: [rank, index], head: 0, side });
      return false;
    }
    if (q.head < q.items.length && q.side !== side) {
      this.rank = q.items[q.head] as number;
      this.index = q.items[q.head + 1] as number;
      q.head += 2;
      // Memory only: an emptied queue starts its list again.
      // Stryker disable next-line ConditionalExpression,BlockStatement
      if (q.head === q.items.length) {
        q.items.length = 0;
        q.head = 0;
      }
      return true;
    }
    q.items.push(rank, index);
    q.side = side;
    return false;
  }
}

// A walk keeps what it reads and writes of operation i at op[4i .. 4i+3]: dependencies not yet
// done, the kind with the walk's flags, the peer, the posting queue. An event then touches one
// cache line of its rank instead of one per array (the walk waits on memory: each event is
// another rank's).
const PENDING = 0;
const BITS = 1;
const PEER = 2;
const QUEUE = 3;
/** BITS: the kind in the low three bits, then the walk's flags. */
const KIND_MASK = 7;
const READIED = 8;
const POSTED = 16;
const DONE = 32;

/** Runs every rank's flat plan (plans[r] is rank r's) in one order; reports whether all completed. */
export function walk(plans: readonly FlatPlan[], order: Order, effects: FlatEffects = {}): FlatOutcome {
  const n = plans.length;
  const pairs = new PairQueues();
  const ranks = plans.map((p) => {
    const op = new Int32Array(4 * p.m);
    for (let i = 0; i < p.m; i++) {
      op[4 * i + PENDING] = p.indeg[i] as number;
      op[4 * i + BITS] = p.kind[i] as number;
      op[4 * i + PEER] = p.peer[i] as number;
      op[4 * i + QUEUE] = p.queueOf[i] as number;
    }
    return { p, op, qpos: p.queueStart.slice(0, p.queueStart.length - 1), range: -1, left: 0 };
  });
  type State = (typeof ranks)[number];
  // Events, as (rank, operation) pairs: now and the next tick.
  let now = new Growable(new Int32Array(1024));
  let next = new Growable(new Int32Array(1024));
  const event = (b: Growable<Int32Array>, rank: number, index: number) => {
    b.push(rank);
    b.push(index);
  };

  const post = (st: State, index: number) => {
    const op = st.op;
    const bits = (op[4 * index + BITS] as number) | POSTED;
    op[4 * index + BITS] = bits;
    const send = (bits & KIND_MASK) === SEND;
    const other = op[4 * index + PEER] as number;
    const me = st.p.rank;
    // (channel, sender, receiver), one to one (as in flatPlan, any such key will do).
    const channel = st.p.queueChannel[op[4 * index + QUEUE] as number] as number;
    // Stryker disable next-line ArithmeticOperator
    const key = (channel * n + (send ? me : other)) * n + (send ? other : me);
    if (!pairs.post(send ? 0 : 1, key, me, index)) return;
    if (send) {
      effects.transfer?.(me, index, pairs.rank, pairs.index);
      event(next, me, index);
      event(next, pairs.rank, pairs.index);
    } else {
      effects.transfer?.(pairs.rank, pairs.index, me, index);
      event(next, pairs.rank, pairs.index);
      event(next, me, index);
    }
  };

  const ready = (st: State, index: number) => {
    const op = st.op;
    const bits = (op[4 * index + BITS] as number) | READIED;
    if (!isTransferKind(bits & KIND_MASK)) {
      op[4 * index + BITS] = bits | POSTED;
      effects.local?.(st.p.rank, index);
      event(now, st.p.rank, index);
      return;
    }
    op[4 * index + BITS] = bits;
    // Post what program order per (peer, channel, kind) allows: the queue's next transfers that are ready.
    const p = st.p;
    const q = op[4 * index + QUEUE] as number;
    const end = p.queueStart[q + 1] as number;
    while ((st.qpos[q] as number) < end) {
      const i = p.members[st.qpos[q] as number] as number;
      // READIED: its dependencies are done (ready() was called for it).
      if (((op[4 * i + BITS] as number) & READIED) === 0) break;
      st.qpos[q]!++;
      post(st, i);
    }
  };

  // A range's transfers come first, then its local operations (flatPlan holds compile to that).
  const enter = (st: State) => {
    const p = st.p;
    const r = ++st.range;
    if (r >= p.rangeTransfers.length) return;
    st.left = p.rangeTransfers[r] as number;
    if (st.left === 0) {
      runLocals(st);
      return;
    }
    const first = p.rangeStart[r] as number;
    const end = first + st.left;
    for (let i = first; i < end; i++) post(st, i);
  };

  const runLocals = (st: State) => {
    const p = st.p;
    const op = st.op;
    const end = p.rangeStart[st.range + 1] as number;
    const first = (p.rangeStart[st.range] as number) + (p.rangeTransfers[st.range] as number);
    if (first === end) {
      enter(st);
      return;
    }
    for (let i = first; i < end; i++) {
      op[4 * i + BITS] = (op[4 * i + BITS] as number) | POSTED;
      effects.local?.(p.rank, i);
      event(now, p.rank, i);
    }
  };

  for (const st of ranks) {
    if (order === "steps") enter(st);
    else for (let i = 0; i < st.p.m; i++) if (st.op[4 * i + PENDING] === 0) ready(st, i);
  }

  for (;;) {
    if (now.length === 0) {
      if (next.length === 0) break;
      [now, next] = [next, now];
      next.length = 0;
    }
    // Events scheduled now run in the order they were scheduled, those they schedule now after them.
    for (let e = 0; e < now.length; e += 2) {
      const st = ranks[now.a[e] as number] as State;
      const index = now.a[e + 1] as number;
      const op = st.op;
      const bits = (op[4 * index + BITS] as number) | DONE;
      op[4 * index + BITS] = bits;
      if (order === "steps") {
        if (isTransferKind(bits & KIND_MASK)) {
          if (--st.left === 0) runLocals(st);
        } else if (index === (st.p.rangeStart[st.range + 1] as number) - 1) enter(st);
      } else {
        const p = st.p;
        for (let k = p.succStart[index] as number; k < (p.succStart[index + 1] as number); k++) {
          const s = p.succ[k] as number;
          const left = (op[4 * s + PENDING] as number) - 1;
          op[4 * s + PENDING] = left;
          if (left === 0) ready(st, s);
        }
      }
    }
    now.length = 0;
  }

  const stuck: { rank: number; index: number; posted: boolean }[] = [];
  for (const st of ranks) {
    for (let i = 0; i < st.p.m; i++) {
      const bits = st.op[4 * i + BITS] as number;
      if ((bits & DONE) === 0) {
        stuck.push({ rank: st.p.rank, index: i, posted: (bits & POSTED) !== 0 });
        break;
      }
    }
  }
  return { complete: stuck.length === 0, stuck };
}
