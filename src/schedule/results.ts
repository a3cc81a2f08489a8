/**
 * What a proof of one call reports, and the parts both proofs (check.ts, rotation.ts) share: the
 * data's result checked against the collective's spec over the symbolic runs (runs.ts), the
 * header's cost, and the text of a cell in the checker's messages.
 */
import { specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import type { Algorithm } from "./dsl.js";
import type { FlatPlan } from "./flat.js";
import { flattenAt, type RunMem, type RunMemory, type RunVal } from "./runs.js";
import type { Cell } from "./symbolic.js";

/** What a proof of one call reports (check.ts, rotation.ts). */
export interface CheckReport {
  readonly algorithm: string;
  readonly call: CollectiveCall;
  readonly errors: string[];
  /** Communication steps (steps with a transfer), the most any rank takes. */
  readonly steps: number;
  /** Elements sent, the most any rank sends. */
  readonly sent: number;
  readonly perRank: readonly { readonly steps: number; readonly sent: number }[];
}

export interface CheckOptions {
  /** Skip the cost-formula comparison (e.g. while drafting an algorithm). */
  readonly skipCost?: boolean;
}

/** The report of a proof of `call`, with `errors` as they stand; `rest` gives what was counted. */
export const reportOf =
  (algorithm: string, call: CollectiveCall, errors: string[]) =>
  (rest: Partial<CheckReport> = {}): CheckReport => ({
    algorithm,
    call,
    errors,
    steps: 0,
    sent: 0,
    perRank: [],
    ...rest,
  });

/**
 * The header's cost against what the schedule does: the steps and the elements sent, the most
 * any rank takes and sends, equal to the formulas where the algorithm says they are exact, and
 * within them elsewhere.
 */
export function checkCost(
  alg: Algorithm,
  call: CollectiveCall,
  steps: number,
  sent: number,
  fail: (m: string) => void,
): void {
  const n = call.size;
  const exact = alg.cost.exact?.(n, call.count, call.segment) ?? true;
  const compare = (what: string, text: string, want: number, got: number) => {
    if (Number.isNaN(want)) fail(`cost: header's ${text} gives no number (NaN) for n=${n}, count=${call.count}`);
    else if (exact ? want !== got : got > want) {
      fail(
        `cost: header says ${text} = ${want} ${what}${exact ? "" : " at most"}, the schedule ${what === "steps" ? "has" : "sends"} ${got}`,
      );
    }
  };
  compare("steps", alg.cost.steps.text, alg.cost.steps.value(n, call.count, call.segment), steps);
  // alltoallv's bytes depend on the split matrix: its formula may say NaN ("varies").
  const want = alg.cost.sent.value(n, call.count, call.segment);
  if (!(Number.isNaN(want) && !specOf(call.collective).counted)) {
    compare("elements sent per rank (max)", alg.cost.sent.text, want, sent);
  }
}

/**
 * The data's result: each output element holds exactly the contributions the spec requires, each
 * once. Over runs (runs.ts): each output run is compared with the spec once, at its first element.
 * `plans` are ranks 0, 1, ... (the rotation proof gives rank 0's alone).
 */
export function checkRuns(
  call: CollectiveCall,
  plans: readonly FlatPlan[],
  sym: RunMemory,
  stride: number,
  fail: (m: string) => void,
): void {
  const n = call.size;
  const spec = specOf(call.collective);
  for (let rank = 0; rank < plans.length; rank++) {
    const plan = plans[rank] as FlatPlan;
    const { mem, from } = sym.where(rank, { buf: "output", offset: 0, count: plan.layout.outputCount });
    for (const blk of spec.result(plan.call, call)) {
      for (let k = 0; k < blk.count; ) {
        const j = blk.at + k;
        const { val, off, len } = runAt(mem, from + j, blk.count - k);
        // Element j + t holds val at off + t, and the spec asks for index + t: one comparison holds
        // for the run. A join's id is -1, so id >= 0 keeps a join seen at offset 1 from passing for
        // contribution 0. A reduction must hold every rank once at the index asked for: the ranks
        // are one interval [0, n) (a join that holds one twice or mixes indices has no ranks).
        const ok =
          val !== null &&
          ("rank" in blk
            ? val.id >= 0 && val.id + off === blk.rank * stride + blk.index + k
            : val.idx + off === blk.reduce + k && val.ranks[0] === 0 && val.ranks[1] === n);
        if (ok) {
          k += len;
          continue;
        }
        const index = "reduce" in blk ? blk.reduce + k : blk.index + k;
        const ids =
          "reduce" in blk
            ? Array.from({ length: n }, (_, r) => r * stride + blk.reduce + k)
            : [blk.rank * stride + blk.index + k];
        if (val === null) {
          fail(`rank ${rank}: output[${j}] was never written; it should hold ${cellText(ids, stride, index)}`);
          return;
        }
        const got = [...(flattenAt(val, off, stride) ?? [])].sort((x, y) => x - y);
        fail(
          `rank ${rank}: output[${j}] holds ${cellText(got, stride, index)} but ${call.collective} needs ${cellText(ids, stride, index)}${diff(got, ids, stride)}`,
        );
        return;
      }
    }
  }
}

/** The run holding element `at` of `mem`: its value, the offset at `at`, and how far it goes (at most `most`). */
function runAt(mem: RunMem, at: number, most: number): { val: RunVal | null; off: number; len: number } {
  if (at >= mem.length) return { val: null, off: 0, len: most };
  const i = mem.find(at);
  const st = mem.start[i] as number;
  return {
    val: mem.val[i] as RunVal | null,
    off: (mem.off[i] as number) + at - st,
    len: Math.min(mem.end(i) - at, most),
  };
}

/**
 * [0+1+2]-style text of a cell: the contributing ranks, with the element index where it is not
 * `index`; a run of more than RUN ranks in a row at one index is written lo..hi ([0..1023]).
 */
export function cellText(cell: Cell, stride: number, index?: number): string {
  if (cell === null) return ".";
  const sorted = [...cell].sort((a, b) => a - b);
  const name = (id: number) => {
    const r = Math.floor(id / stride);
    const i = id % stride;
    return index === undefined || i === index ? `${r}` : `${r}:${i}`;
  };
  const parts: string[] = [];
  for (let a = 0; a < sorted.length; ) {
    // A run: ids one stride apart (consecutive ranks, one element index).
    let b = a;
    while (b + 1 < sorted.length && (sorted[b + 1] as number) === (sorted[b] as number) + stride) b++;
    if (b - a + 1 > RUN) {
      parts.push(`${name(sorted[a] as number)}..${name(sorted[b] as number)}`);
      a = b + 1;
    } else parts.push(name(sorted[a++] as number));
  }
  return `[${parts.join("+")}]`;
}

/** Runs of ranks longer than this are shortened in messages. */
const RUN = 8;
/** Notes of a difference past this many are counted, not listed. */
const NOTES = 6;

function diff(got: number[], want: number[], stride: number): string {
  const count = (xs: number[]) => {
    const m = new Map<number, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const g = count(got);
  const w = count(want);
  const notes: string[] = [];
  const name = (id: number) => `rank ${Math.floor(id / stride)}'s element ${id % stride}`;
  for (const [id, k] of g) {
    const e = w.get(id) ?? 0;
    if (k > e) notes.push(e === 0 ? `${name(id)} does not belong` : `${name(id)} counted ${k} times`);
  }
  for (const [id] of w) if (!g.has(id)) notes.push(`${name(id)} is missing`);
  const more = notes.length > NOTES ? `; and ${notes.length - NOTES} more` : "";
  return notes.length ? ` (${notes.slice(0, NOTES).join("; ")}${more})` : "";
}
