/**
 * The one place the step-through page gets what each rank does and holds after each step: the
 * rows `cclab explain` prints (src/schedule/explain.ts's explainSteps over the symbolic checker),
 * as data. The page shows exactly these strings, and the browser test compares them with
 * explain's text, so the page keeps agreeing with explain whatever computes the table.
 */
import { type Algorithm, regionText } from "../schedule/dsl.js";
import { explainCall, explainSteps } from "../schedule/explain.js";
import type { CollectiveCall } from "../specs/types.js";

export interface StepCall {
  readonly size: number;
  readonly count: number;
  readonly root?: number;
  readonly segment?: number;
  readonly inPlace?: boolean;
}

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

/** explain's step table for `alg` on `call` (alltoallv: explain's counts matrix). */
export function stepThrough(alg: Algorithm, call: StepCall): StepThrough {
  const given = Object.fromEntries(Object.entries(call).filter(([, v]) => v !== undefined));
  const args: CollectiveCall = { ...explainCall(alg, call.size), ...given };
  const { errors, steps, plans } = explainSteps(alg, args);
  const transfersOf = (r: number, indices: readonly number[]): StepTransfer[] =>
    indices.flatMap((index) =>
      // A transfer of nothing posts no message (the executor skips it), so no arrow stands for it.
      (plans[r]?.steps[index]?.transfers ?? [])
        .filter((t) => t.region.count > 0)
        .map((t) => ({
          index,
          kind: t.kind,
          peer: t.peer,
          region: regionText(t.region),
        })),
    );
  return {
    ranks: call.size,
    call: args,
    steps: steps.map((s) => ({
      label: s.title,
      ops: s.ops,
      indices: s.indices,
      transfers: s.indices.map((idx, r) => transfersOf(r, idx)),
      rows: s.rows,
    })),
    errors,
  };
}

// Re-exported: the page and the playground read step numbers through steps.js.
export { eventNotes, stepOfIndex } from "./notes.js";
