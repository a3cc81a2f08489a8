/**
 * The phases engine's memory, estimated before it starts, and the refusal of a call that would
 * not fit the heap (V8's limit less what is in use, the share policy.ts allows): a clear error
 * saying what would fit instead of a "JavaScript heap out of memory" minutes later.
 *
 * Two things grow: the operations walked (copied flat, with the plan being copied, ~100 and
 * ~900 bytes an operation, one rank's plan at a time), and the message copies timed one by one
 * (each distinct round's messages, times the ranks that repeat them under the symmetry, each with
 * its own durations and flows). The second is estimated from rank 0's plan: its messages to
 * distinct (peer, size) pairs are the rounds that differ (a ring has two, pairwise all-to-all
 * n - 1), each repeated by all n ranks. Measured on the fat tree (alltoall/pairwise at n = 1,024:
 * 1.0 M copies, out of a 256 MB heap before; allreduce/double_binary_tree at n = 1,024: 215 k
 * operations in a 64 MB heap), with room to spare.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import type { Plan } from "../../schedule/plan.js";
import type { CollectiveCall } from "../../specs/types.js";
import { estimateOperations, exactHeapBudget, exactMemory, THRESHOLDS } from "./policy.js";

/** Heap per operation walked, bytes. */
export const PHASES_BYTES_PER_OPERATION = 256;
/** Heap per message copy timed on its own, bytes. */
export const PHASES_BYTES_PER_COPY = 512;

const MiB = 2 ** 20;

export interface PhasesMemory {
  /** Operations the walk compiles. */
  readonly walked: number;
  /** Message copies timed one by one (distinct rounds' messages times the ranks repeating them). */
  readonly copies: number;
  /** The estimated peak heap, bytes. */
  readonly bytes: number;
}

/** The phases engine's peak heap for a call whose walk compiles `walked` operations; `rep0` is rank 0's plan. */
export function phasesMemory(rep0: Plan, n: number, walked: number): PhasesMemory {
  const distinct = new Set<string>();
  for (const op of rep0.ops) if (op.kind === "send") distinct.add(`${op.peer} ${op.region.count}`);
  const copies = distinct.size * n;
  return { walked, copies, bytes: walked * PHASES_BYTES_PER_OPERATION + copies * PHASES_BYTES_PER_COPY };
}

/**
 * Refuses, before the walk starts, a call within PHASES_MAX_OPERATIONS whose estimate (phasesMemory) is more than the heap
 * the model may use, saying what would fit: the exact engine where its own estimate fits, fewer
 * ranks, a larger segment where the call is cut into several, or a larger heap.
 */
export function checkPhasesMemory(alg: Algorithm, call: CollectiveCall, rep0: Plan, walked: number): void {
  // Past PHASES_MAX_OPERATIONS the walk refuses the call itself, with advice on its steps.
  if (walked > THRESHOLDS.PHASES_MAX_OPERATIONS.value) return;
  const m = phasesMemory(rep0, call.size, walked);
  const budget = exactHeapBudget();
  if (m.bytes <= budget) return;
  const n = call.size;
  // Copies grow up to n^2: the square root of the shortfall is a rank count that fits.
  const ranks = Math.max(2, Math.floor(n * Math.sqrt(budget / m.bytes)));
  const ways = [`fewer ranks (about -n ${ranks.toLocaleString("en")})`];
  if (call.count > call.segment) ways.push("a larger --segment (fewer operations to walk)");
  if (exactMemory(estimateOperations(alg, call)) <= budget) ways.unshift("--engine exact (its estimate fits)");
  const need = Math.ceil(m.bytes / THRESHOLDS.HEAP_SHARE.value / MiB) + 64;
  ways.push(`or give node more heap (NODE_OPTIONS=--max-old-space-size=${need.toLocaleString("en")} or more)`);
  throw new InvalidArgumentError(
    { op: "model", arg: "-n" },
    `phases: ${alg.collective}/${alg.name} at n = ${n.toLocaleString("en")}, ${call.count.toLocaleString("en")} elements in segments of ${call.segment.toLocaleString("en")}: about ${m.walked.toLocaleString("en")} operations to walk and ${m.copies.toLocaleString("en")} message copies to time, about ${Math.ceil(m.bytes / MiB).toLocaleString("en")} MiB at its peak, more than the ${Math.floor(budget / MiB).toLocaleString("en")} MiB of heap it may use; use ${ways.join(", ")}`,
  );
}
