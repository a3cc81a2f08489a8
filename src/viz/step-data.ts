/**
 * The step-through data's shapes (steps.ts builds them from explain, notes.ts and the page read
 * them): types only, so the browser code can use them without the checker.
 */
import type { CollectiveCall } from "../specs/types.js";

export interface BufferRow {
  /** 'out[0]', 'tmp[2]'. */
  readonly name: string;
  /** Per rank, the cell as explain prints it ('[0+1]', '.', or '' where the rank has no such element). */
  readonly cells: readonly string[];
}

/** One send or receive a rank posts in a step, in explain's words ('in[3]' sent to rank 1). */
export interface StepTransfer {
  /** The schedule step index it belongs to (the 'step i' of the trace's labels). */
  readonly index: number;
  readonly kind: "send" | "recv";
  readonly peer: number;
  /** The region sent or received into, as explain prints it: 'in[3]', 'out[2:4]', 'tmp[0]'. */
  readonly region: string;
}

export interface StepView {
  /** 'step 0 (local)', 'step 3'. */
  readonly label: string;
  /** Per rank, what it does (explain's text; '-' for nothing). */
  readonly ops: readonly string[];
  /** Per rank, the schedule step indices ('step i' in trace labels) that make up this step. */
  readonly indices: readonly (readonly number[])[];
  /** Per rank, its sends and receives in this step that move data, in posting order (as the ops text names them). */
  readonly transfers: readonly (readonly StepTransfer[])[];
  /** Each buffer row after the step, per rank. */
  readonly rows: readonly BufferRow[];
}

export interface StepThrough {
  readonly ranks: number;
  /** The call's header line, as explain prints it. */
  readonly call: CollectiveCall;
  readonly steps: readonly StepView[];
  /** The checker's complaints, if the schedule is wrong (the page shows them). */
  readonly errors: readonly string[];
}
