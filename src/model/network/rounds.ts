/**
 * A call walked into rounds: the plans (FlatPlans) run in dataflow order with every transfer
 * taking one unit of time, so that a transfer's start is its round, the wave of messages that can
 * be in flight together (a ring step, a recursive-doubling distance, a tree pipeline's tick).
 * Rounds whose messages are the same (sources, destinations, sizes) share a pattern key and are
 * solved once (round-solve.ts): a ring's 2(n-1) steps are one pattern.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { compile, type Plan } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { knownEnds, walkDataflow } from "./dataflow.js";
import { type FlatPlans, flattenPlans, REDUCE } from "./flat-plans.js";
import { phasesMemory, phasesMemoryError, walkBudget } from "./phases-memory.js";
import { movedPlan, type Probe, type Symmetry } from "./symmetry.js";

/** One round's messages. */
export interface Round {
  /** Per message: source rank (a representative under a symmetry), rank offset to the destination, bytes. */
  src: number[];
  offset: number[];
  bytes: number[];
  /** Bytes each rank reduces after this round's messages arrive, by (representative) rank. */
  reduced: Map<number, number>;
}

/** A call walked into rounds: its messages grouped by the unit-time round they start in. */
export interface RoundsWalk {
  readonly sym: Symmetry;
  /** The plans walked, flat: the representatives seen from the quotient (every rank's plan when p = n). */
  readonly flat: FlatPlans;
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
  /** Every rank walked, ranks p.. with their representatives' plans moved under this symmetry (the 'moved' form). */
  readonly movedUnder?: Symmetry;
}

/** The rounds of a call: a unit-time walk in the plans' dataflow order. */
function roundsOf(flat: FlatPlans, n: number, sym: Symmetry): RoundsWalk {
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
  const out = walkDataflow(
    flat,
    knownEnds((s, _r, start) => {
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
    }),
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
 * How the plans are walked: 'every-rank', every rank's plan compiled; 'moved', every rank walked
 * with its representative's plan (rank r mod p) moved to it under the symmetry; 'quotient', only
 * ranks 0..p-1, each message keyed by its rank offset (the per-copy walk times it).
 */
export type WalkForm = "every-rank" | "moved" | "quotient";

/** A call's plans flattened in the form asked for and walked into rounds. */
export function walkCall(
  alg: Algorithm,
  call: CollectiveCall,
  elementBytes: number,
  probe: Probe,
  form: WalkForm,
): RoundsWalk {
  const n = call.size;
  // The walk's operations bounded by the heap (the rounds' message copies are checked after the
  // walk, on their count: phases-memory.ts).
  const maxOps = walkBudget(0);
  const limit = (ops: number): never => {
    throw phasesMemoryError(alg, call, phasesMemory(ops, 0));
  };
  const every: Symmetry = { kind: "rotate", p: n };
  const rep0 = probe.plan(0);
  if (form === "moved") {
    const sym = probe.sym;
    const reps: Plan[] = [];
    const planOf = (r: number): Plan => {
      const k = r % sym.p;
      reps[k] ??= k === 0 ? rep0 : compile(alg, rankCall(call, k));
      return movedPlan(reps[k] as Plan, r, sym, n);
    };
    return { ...roundsOf(flattenPlans(planOf, n, every, elementBytes, maxOps, limit), n, every), movedUnder: sym };
  }
  const sym = form === "quotient" ? probe.sym : every;
  // Under a symmetry every walked rank is rank 0 moved; every rank walked, a few ranks' plans
  // estimate it (probeSymmetry: a linear root's n - 1 transfers are not every rank's).
  const estimate = sym.p < n ? rep0.ops.length * sym.p : probe.everyRank;
  if (estimate > maxOps) limit(estimate);
  // Each walked rank compiled in its turn, copied flat and let go (rank 0's size is only an
  // estimate: the budget is checked again on what is compiled).
  const flat = flattenPlans((r) => compile(alg, rankCall(call, r)), n, sym, elementBytes, maxOps, limit);
  return roundsOf(flat, n, sym);
}
