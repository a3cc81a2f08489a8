/**
 * The one place the step-through page gets what each rank does and holds after each step: the
 * rows `cclab explain` prints (src/schedule/explain.ts's explainSteps over the symbolic checker),
 * as data. The page shows exactly these strings, and the browser test compares them with
 * explain's text, so the page keeps agreeing with explain whatever computes the table.
 */
import type { Algorithm } from "../schedule/dsl.js";
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

export interface StepView {
  /** 'step 0 (local)', 'step 3'. */
  readonly label: string;
  /** Per rank, what it does (explain's text; '-' for nothing). */
  readonly ops: readonly string[];
  /** Per rank, the schedule step indices ('step i' in trace labels) that make up this step. */
  readonly indices: readonly (readonly number[])[];
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
  const { errors, steps } = explainSteps(alg, args);
  return {
    ranks: call.size,
    call: args,
    steps: steps.map((s) => ({ label: s.title, ops: s.ops, indices: s.indices, rows: s.rows })),
    errors,
  };
}

/**
 * For each rank, the page's step number of each schedule index: trace events carry the schedule
 * index ('step i'), the page numbers steps as explain does.
 */
export function stepOfIndex(st: StepThrough): Map<number, number>[] {
  const out = Array.from({ length: st.ranks }, () => new Map<number, number>());
  st.steps.forEach((s, k) => {
    const step = Number(/^step (\d+)/.exec(s.label)?.[1] ?? k);
    s.indices.forEach((idx, r) => {
      for (const i of idx) out[r]?.set(i, step);
    });
  });
  return out;
}
