/**
 * A backend-neutral record of what each rank did: transfers and local operations, with their
 * start and end times. The sim backend records logical ticks (scheduler rounds); real backends
 * record microseconds. Plain data, so a trace serialises to JSON byte-for-byte reproducibly and
 * later tools (Lamport diagrams, byte counts) read it without knowing which backend wrote it.
 */
import type { DType } from "./core/dtype.js";
import type { BlockedOp } from "./core/errors.js";

export type TraceKind = "send" | "recv" | "copy" | "reduce" | "scale";

export interface TraceEvent {
  /** World rank that did the operation. */
  readonly rank: number;
  readonly kind: TraceKind;
  /** World rank of the other side of a transfer; absent for local operations. */
  readonly peer?: number;
  /** Elements moved or touched. */
  readonly count: number;
  readonly dtype: DType;
  readonly bytes: number;
  /** The label the caller gave (e.g. 'allreduce/ring step 3'), if any. */
  readonly label?: string;
  /** When the operation was posted: a logical tick on sim, microseconds on real backends. */
  readonly start: number;
  /** When it completed, in the same unit as start. */
  readonly end: number;
}

/** A deadlock a run hit (sim finds them): when, every blocked operation, and the wait-for cycle. */
export interface DeadlockRecord {
  /** The logical time it was found (sim's round). */
  readonly at: number;
  readonly blocked: readonly BlockedOp[];
  /** World ranks in cycle order; empty when the ranks wait on one that finished. */
  readonly cycle: readonly number[];
  readonly message: string;
}

export class Trace {
  readonly events: TraceEvent[] = [];
  /** Deadlocks found during the run (the pictures draw them; the events' JSON does not carry them). */
  readonly deadlocks: DeadlockRecord[] = [];

  record(e: TraceEvent): void {
    this.events.push(e);
  }

  recordDeadlock(d: DeadlockRecord): void {
    this.deadlocks.push(d);
  }

  /** Bytes each world rank sent, indexed by rank (ranks that sent nothing read 0). */
  bytesSent(size: number): number[] {
    const out = new Array<number>(size).fill(0);
    for (const e of this.events) if (e.kind === "send") out[e.rank] = (out[e.rank] ?? 0) + e.bytes;
    return out;
  }

  toJSON(): TraceEvent[] {
    return this.events;
  }
}
