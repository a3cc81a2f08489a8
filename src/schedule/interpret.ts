/**
 * The one walk over a schedule: every rank's plan run together as a discrete-event simulation,
 * without data. Sends and receives pair through the one matcher (src/core/match.ts); what
 * happens at each event is the caller's effect: the checker moves symbolic cells, the model
 * charges alpha-beta time, explain records what each rank holds. So check, model and explain
 * agree by construction.
 *
 * Two orders, both of which a schedule must survive:
 *   - 'dataflow' (how the sim and MPI executors run a plan): an operation starts when the
 *     operations it depends on are done (plan.ts); sends and receives per (peer, channel) are
 *     posted in program order;
 *   - 'steps' (bulk-synchronous, how a stream-ordered engine runs it): a rank posts a step's
 *     transfers together, waits for all of them, runs the step's local operations, then goes on.
 * Transfers are rendezvous (a send completes only with its receive), the strictest semantics the
 * simulator models, so a schedule that completes here completes under eager and buffered sends.
 * Time: a transfer takes 1 and a local operation 0 unless the effect says otherwise.
 */
import { MinHeap } from "../core/growable.js";
import { Matcher } from "../core/match.js";
import { scheduling } from "./dataflow.js";
import type { Plan, PlanOp } from "./plan.js";

export type Order = "dataflow" | "steps";

/** An operation of one rank, as effects see it. */
export interface At {
  readonly rank: number;
  readonly index: number;
  readonly op: PlanOp;
}

export interface Effects {
  /** A send matched its receive at `start`; returns when the transfer ends (default start + 1). */
  transfer?(send: At, recv: At, start: number): number | undefined;
  /** A local operation starts at `start`; returns when it ends (default start). */
  local?(at: At, start: number): number | undefined;
  /** An operation completed at `time` (events come in time order). */
  done?(at: At, time: number): void;
}

export interface Outcome {
  /** Every operation of every rank completed. */
  readonly complete: boolean;
  /** When the last operation completed. */
  readonly time: number;
  /** Per rank, when its last operation completed (0 for a rank with none). */
  readonly finish: readonly number[];
  /** Where ranks are stuck when not complete: each rank's oldest unfinished operation and whether it was posted. */
  readonly stuck: readonly (At & { readonly posted: boolean })[];
}

/** A plan's steps as operation ranges: step k of the walk is ops [start[k], start[k+1]). */
interface StepRanges {
  readonly start: Int32Array;
  /** Transfers in each range. */
  readonly transfers: Int32Array;
}

const ranges = new WeakMap<Plan, StepRanges>();

function stepRanges(plan: Plan): StepRanges {
  const have = ranges.get(plan);
  if (have) return have;
  const starts: number[] = [];
  const transfers: number[] = [];
  plan.ops.forEach((op, i) => {
    if (i === 0 || (plan.ops[i - 1] as PlanOp).step !== op.step) {
      starts.push(i);
      transfers.push(0);
    }
    if (op.kind === "send" || op.kind === "recv") transfers[transfers.length - 1]!++;
  });
  starts.push(plan.ops.length);
  const r = { start: Int32Array.from(starts), transfers: Int32Array.from(transfers) };
  ranges.set(plan, r);
  return r;
}

const ats = new WeakMap<Plan, readonly At[]>();

/** A plan's operations as effects see them, made once per plan. */
function atsOf(plan: Plan, rank: number): readonly At[] {
  let have = ats.get(plan);
  if (!have || have[0]?.rank !== rank) {
    have = plan.ops.map((op, index): At => ({ rank, index, op }));
    ats.set(plan, have);
  }
  return have;
}

const isTransfer = (op: PlanOp): boolean => op.kind === "send" || op.kind === "recv";

/** Runs every rank's plan (plans[r] is rank r's) and reports what completed and when. */
export function interpret(plans: readonly Plan[], effects: Effects = {}, order: Order = "dataflow"): Outcome {
  const n = plans.length;
  // Events by time, ties in the order they were scheduled: id the rank, version the operation.
  const events = new MinHeap(true);
  const matcher = new Matcher<At, At>();
  const key = (src: number, dst: number, channel: number) => (channel * n + src) * n + dst;

  const ranks = plans.map((plan, rank) => {
    const m = plan.ops.length;
    const sched = scheduling(plan, true);
    return {
      plan,
      sched,
      steps: stepRanges(plan),
      at: atsOf(plan, rank),
      pending: sched.indeg.slice(),
      /** When each operation became ready, or -1. */
      readyAt: new Float64Array(m).fill(-1),
      postAt: new Float64Array(m),
      posted: new Uint8Array(m),
      doneOp: new Uint8Array(m),
      qpos: new Int32Array(sched.queues.length),
      /** Per queue, the latest post time (program order per queue). */
      qlast: new Float64Array(sched.queues.length),
      /** steps order: the current range, its unfinished transfers and when they finished. */
      range: -1,
      left: 0,
      end: 0,
      finish: 0,
    };
  });
  type RankState = (typeof ranks)[number];

  const post = (st: RankState, index: number, time: number) => {
    const me = st.at[index] as At;
    const op = me.op;
    st.posted[index] = 1;
    st.postAt[index] = time;
    const other =
      op.kind === "send"
        ? matcher.send(key(me.rank, op.peer, op.channel), me)
        : matcher.recv(key(op.peer, me.rank, op.channel), me);
    if (!other) return;
    const s = op.kind === "send" ? me : other;
    const r = op.kind === "send" ? other : me;
    const start = Math.max(ranks[s.rank]!.postAt[s.index] as number, ranks[r.rank]!.postAt[r.index] as number);
    const end = effects.transfer?.(s, r, start) ?? start + 1;
    events.push(end, s.rank, s.index);
    events.push(end, r.rank, r.index);
  };

  /** dataflow: an operation's dependencies are done at `time`. */
  const ready = (st: RankState, index: number, time: number) => {
    st.readyAt[index] = time;
    const op = st.plan.ops[index] as PlanOp;
    if (!isTransfer(op)) {
      st.posted[index] = 1;
      events.push(effects.local?.(st.at[index] as At, time) ?? time, st.at[index]!.rank, index);
      return;
    }
    // Post what program order per (peer, channel, kind) allows: the queue's next transfers whose
    // dependencies are all done (readyAt alone is set by the first of them).
    const q = st.sched.queueOf[index] as number;
    const members = st.sched.queues[q] as Int32Array;
    while ((st.qpos[q] as number) < members.length) {
      const i = members[st.qpos[q] as number] as number;
      const t = st.readyAt[i] as number;
      if (t < 0 || (st.pending[i] as number) > 0) break;
      st.qpos[q] = (st.qpos[q] as number) + 1;
      st.qlast[q] = Math.max(st.qlast[q] as number, t);
      post(st, i, st.qlast[q] as number);
    }
  };

  /** steps: start the next range of a rank at `time` (its transfers, or its local operations if it has none). */
  const enter = (st: RankState, time: number) => {
    const r = ++st.range;
    if (r >= st.steps.transfers.length) return;
    st.left = st.steps.transfers[r] as number;
    st.end = time;
    if (st.left === 0) {
      runLocals(st, time);
      return;
    }
    for (let i = st.steps.start[r] as number; i < (st.steps.start[r + 1] as number); i++) {
      if (!isTransfer(st.plan.ops[i] as PlanOp)) continue;
      st.readyAt[i] = time;
      post(st, i, time);
    }
  };

  const runLocals = (st: RankState, time: number) => {
    let t = time;
    let any = false;
    for (let i = st.steps.start[st.range] as number; i < (st.steps.start[st.range + 1] as number); i++) {
      if (isTransfer(st.plan.ops[i] as PlanOp)) continue;
      st.readyAt[i] = t;
      st.posted[i] = 1;
      t = effects.local?.(st.at[i] as At, t) ?? t;
      events.push(t, st.at[i]!.rank, i);
      any = true;
    }
    // Locals complete in program order; the last one enters the next range.
    if (!any) enter(st, t);
  };

  for (const st of ranks) {
    if (order === "steps") enter(st, 0);
    else for (let i = 0; i < st.plan.ops.length; i++) if (st.pending[i] === 0) ready(st, i, 0);
  }

  let last = 0;
  while (events.size > 0) {
    const time = events.peek();
    const index = events.topVersion();
    const st = ranks[events.pop()] as RankState;
    st.doneOp[index] = 1;
    if (time > st.finish) st.finish = time;
    if (time > last) last = time;
    const at = st.at[index] as At;
    effects.done?.(at, time);
    if (order === "steps") {
      if (isTransfer(at.op)) {
        if (time > st.end) st.end = time;
        if (--st.left === 0) runLocals(st, st.end);
      } else if (index === lastLocal(st, st.range)) enter(st, time);
    } else {
      const { succStart, succ } = st.sched;
      for (let k = succStart[index] as number; k < (succStart[index + 1] as number); k++) {
        const s = succ[k] as number;
        if (time > (st.readyAt[s] as number)) st.readyAt[s] = time;
        if (--(st.pending[s] as number) === 0) ready(st, s, st.readyAt[s] as number);
      }
    }
  }

  const stuck: (At & { posted: boolean })[] = [];
  for (const st of ranks) {
    const i = st.doneOp.indexOf(0);
    if (i >= 0) stuck.push({ ...(st.at[i] as At), posted: st.posted[i] === 1 });
  }
  return { complete: stuck.length === 0, time: last, finish: ranks.map((s) => s.finish), stuck };
}

/** The last local operation of a range. */
function lastLocal(st: { plan: Plan; steps: StepRanges }, r: number): number {
  for (let i = (st.steps.start[r + 1] as number) - 1; i >= (st.steps.start[r] as number); i--) {
    if (!isTransfer(st.plan.ops[i] as PlanOp)) return i;
  }
  return -1;
}
