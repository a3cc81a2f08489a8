/**
 * The one place the step-through page gets what each rank does and holds after each step: the
 * rows `cclab explain` prints (src/schedule/explain.ts's explainSteps over the symbolic checker),
 * as data. The page shows exactly these strings, and the browser test compares them with
 * explain's text, so the page keeps agreeing with explain whatever computes the table.
 */
import { type Algorithm, regionText } from "../schedule/dsl.js";
import { explainCall, explainSteps } from "../schedule/explain.js";
import type { CollectiveCall } from "../specs/types.js";
import type { StepThrough, StepTransfer } from "./step-data.js";

export type { BufferRow, StepThrough, StepTransfer, StepView } from "./step-data.js";

export interface StepCall {
  readonly size: number;
  readonly count: number;
  readonly root?: number;
  readonly segment?: number;
  readonly inPlace?: boolean;
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
