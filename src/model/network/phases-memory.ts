/**
 * The phases engine's memory, estimated before it starts, and the refusal of a call that would
 * not fit the heap (V8's limit less what is in use, the share policy.ts allows): a clear error
 * saying what would fit instead of a "JavaScript heap out of memory" minutes later. Memory, not
 * a count of operations, is what bounds the engine: a call of many cheap operations runs, and a
 * call of few operations but millions of messages to solve is refused.
 *
 * Three things grow: the operations walked (PHASES_BYTES_PER_OPERATION: copied flat, with the
 * plan being copied, one rank's plan at a time); the message copies solved one by one
 * (PHASES_BYTES_PER_COPY: each distinct round's messages, times the ranks that repeat them under
 * the symmetry, each with its flows, its duration and the links it used, all held until the last
 * round is solved); and the rounds being solved (PHASES_BYTES_PER_SOLVED_COPY: a round's flows
 * on the max-min solver, the largest rounds, one per thread). Checked three times:
 * before the walk on an estimate (checkPhasesMemory), while the walk compiles (walkBudget: the
 * operations it may copy), and after the walk, before any round is solved, on the exact count of
 * copies (checkRoundsMemory). docs/network.md gives the measurements that set the constants.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import type { Plan } from "../../schedule/plan.js";
import type { CollectiveCall } from "../../specs/types.js";
import { estimateOperations, exactHeapBudget, exactMemory, THRESHOLDS } from "./policy.js";

/** Heap per operation walked, bytes. */
export const PHASES_BYTES_PER_OPERATION = THRESHOLDS.PHASES_BYTES_PER_OPERATION.value;
/** Heap per message copy solved on its own, bytes. */
export const PHASES_BYTES_PER_COPY = THRESHOLDS.PHASES_BYTES_PER_COPY.value;
/** Heap per message copy of a round while the solver holds it, bytes. */
export const PHASES_BYTES_PER_SOLVED_COPY = THRESHOLDS.PHASES_BYTES_PER_SOLVED_COPY.value;

const MiB = 2 ** 20;

export interface PhasesMemory {
  /** Operations the walk compiles. */
  readonly walked: number;
  /** Message copies solved one by one (distinct rounds' messages times the ranks repeating them). */
  readonly copies: number;
  /** Of those, the copies on the solver at once (the largest rounds, one per thread). */
  readonly solving: number;
  /** The estimated peak heap, bytes. */
  readonly bytes: number;
}

/**
 * The phases engine's peak heap for a walk of `walked` operations and `copies` message copies to
 * solve, `solving` of them on the solver at once (before the walk, unknown: all of them).
 */
export function phasesMemory(walked: number, copies: number, solving = copies): PhasesMemory {
  return {
    walked,
    copies,
    solving,
    bytes:
      walked * PHASES_BYTES_PER_OPERATION + copies * PHASES_BYTES_PER_COPY + solving * PHASES_BYTES_PER_SOLVED_COPY,
  };
}

/**
 * The message copies a walk will solve, estimated before it: rank 0's messages to distinct
 * (peer, size) pairs are the rounds that differ (a ring has two, pairwise all-to-all n - 1), each
 * repeated by all n ranks; never more than every rank's sends (`sends`, estimated from a few
 * ranks: a linear root's n - 1 messages are n - 1 copies, not n - 1 times n).
 */
export function estimateCopies(rep0: Plan, n: number, sends: number): number {
  const distinct = new Set<string>();
  for (const op of rep0.ops) if (op.kind === "send") distinct.add(`${op.peer} ${op.region.count}`);
  return Math.min(distinct.size * n, Math.max(sends, distinct.size));
}

/** The operations a walk may compile within the heap the model may use, after `copies` message copies are set aside. */
export function walkBudget(copies: number, budget = exactHeapBudget()): number {
  return Math.max(0, Math.floor((budget - phasesMemory(0, copies).bytes) / PHASES_BYTES_PER_OPERATION));
}

/**
 * The refusal of a call whose phases walk would not fit the heap, saying what would fit: the
 * exact engine where its own estimate fits, fewer ranks, a larger segment where the call is cut
 * into several, an algorithm of fewer steps where the call is one segment and its walk is what
 * does not fit, or a larger heap.
 */
export function phasesMemoryError(
  alg: Algorithm,
  call: CollectiveCall,
  m: PhasesMemory,
  budget = exactHeapBudget(),
): InvalidArgumentError {
  const n = call.size;
  // Copies grow up to n^2, operations up to n^2 for a one-segment call: the square root of the
  // shortfall is a rank count that fits.
  const ranks = Math.max(2, Math.floor(n * Math.sqrt(budget / m.bytes)));
  const ways = [`fewer ranks (about -n ${ranks.toLocaleString("en")})`];
  const walkBound = m.walked * PHASES_BYTES_PER_OPERATION > m.bytes / 2;
  if (call.count > call.segment) ways.push("a larger --segment (fewer operations to walk)");
  else if (walkBound) {
    ways.push(
      "an algorithm of fewer steps (e.g. recursive_doubling, a log2(n)-step one: the call is one segment, so its plans' steps grow with n whatever its size)",
    );
  }
  let exact = false;
  try {
    exact = exactMemory(estimateOperations(alg, call)) <= budget;
  } catch {
    // An algorithm that cannot plan the call is refused elsewhere.
  }
  if (exact) ways.unshift("--engine exact (its estimate fits)");
  const need = Math.ceil(m.bytes / THRESHOLDS.HEAP_SHARE.value / MiB) + 64;
  ways.push(`or give node more heap (NODE_OPTIONS=--max-old-space-size=${need.toLocaleString("en")} or more)`);
  return new InvalidArgumentError(
    { op: "model", arg: "-n" },
    `phases: ${alg.collective}/${alg.name} at n = ${n.toLocaleString("en")}, ${call.count.toLocaleString("en")} element${call.count === 1 ? "" : "s"} in segments of ${call.segment.toLocaleString("en")}: about ${m.walked.toLocaleString("en")} operations to walk and ${m.copies.toLocaleString("en")} message copies to solve, about ${Math.ceil(m.bytes / MiB).toLocaleString("en")} MiB at its peak, more than the ${Math.floor(budget / MiB).toLocaleString("en")} MiB of heap it may use; use ${ways.join(", ")}`,
  );
}

/**
 * Refuses, before the walk starts, a call whose estimate (phasesMemory of the operations to walk
 * and estimateCopies) is more than the heap the model may use, saying what would fit.
 */
export function checkPhasesMemory(
  alg: Algorithm,
  call: CollectiveCall,
  rep0: Plan,
  walked: number,
  sends: number,
): void {
  const m = phasesMemory(walked, estimateCopies(rep0, call.size, sends));
  const budget = exactHeapBudget();
  if (m.bytes > budget) throw phasesMemoryError(alg, call, m, budget);
}

/** What copiesOf reads of a walk (rounds.ts's RoundsWalk; written out here, since rounds.ts imports this file). */
interface WalkedRounds {
  readonly rounds: readonly ({ readonly src: readonly number[] } | undefined)[];
  readonly keys: readonly (string | undefined)[];
  readonly sym: { readonly p: number };
  readonly operations: number;
}

/**
 * The message copies a walk's distinct rounds hold (each distinct round's messages, every copy),
 * and those of its `threads` largest rounds (on the solver at once).
 */
export function copiesOf(w: WalkedRounds, n: number, threads = 1): { copies: number; solving: number } {
  const seen = new Set<string>();
  const sizes: number[] = [];
  w.rounds.forEach((rd, t) => {
    const key = w.keys[t];
    if (!rd || key === undefined || seen.has(key)) return;
    seen.add(key);
    sizes.push(rd.src.length);
  });
  const copies = n / w.sym.p;
  sizes.sort((a, b) => b - a);
  let all = 0;
  for (const m of sizes) all += m;
  let solving = 0;
  for (const m of sizes.slice(0, Math.max(1, threads))) solving += m;
  return { copies: all * copies, solving: solving * copies };
}

/**
 * Refuses, after the walk and before any round is solved, a call whose rounds would not fit: the
 * walk's operations and its distinct rounds' message copies, counted, not estimated.
 */
export function checkRoundsMemory(alg: Algorithm, call: CollectiveCall, w: WalkedRounds, threads = 1): void {
  const { copies, solving } = copiesOf(w, call.size, threads);
  const m = phasesMemory(w.operations, copies, solving);
  const budget = exactHeapBudget();
  if (m.bytes > budget) throw phasesMemoryError(alg, call, m, budget);
}
