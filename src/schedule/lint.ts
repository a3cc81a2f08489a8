/**
 * What a plan gets wrong on its own, before any data moves: the lint the static checker
 * (check.ts) runs on every rank's plan, and the rotation proof (rotation.ts) on rank 0's.
 */
import { type Region, regionText, type Step } from "./dsl.js";
import type { Plan, PlanOp } from "./plan.js";

/** What a plan gets wrong on its own: labels, copies onto themselves, races in a step, writes to the caller's input. */
export function lint(plan: Plan, fail: (op: PlanOp, m: string) => void): void {
  // Where op i's k-th region (0 region, 1 src) lives, from the plan's places (through the aliasing).
  const { places, ops } = plan;
  const mem = (i: number, k: number) => places[6 * i + 2 * k] as number;
  const from = (i: number, k: number) => places[6 * i + 2 * k + 1] as number;
  const overlap = (i: number, k: number, a: Region, j: number, l: number, b: Region) => {
    const x = from(i, k);
    const y = from(j, l);
    // Plans hold no operation on zero elements (compile drops them), so both regions are non-empty.
    return mem(i, k) === mem(j, l) && x < y + b.count && y < x + a.count;
  };
  // Each step looked at once, at its first operation: its label and its transfers' races.
  const looked = new Uint8Array(plan.steps.length);
  ops.forEach((op, i) => {
    if (looked[op.step] === 0) {
      looked[op.step] = 1;
      // Labels are what traces, timeouts and deadlock messages show: every step needs one (a
      // schedule in plain JavaScript may leave it out altogether).
      if (labelOf(plan.steps[op.step]).trim() === "") fail(op, "the step has no label");
      // A receive must not share memory with any other transfer of its step (undefined on real
      // engines). A step's transfers come first in the plan, then its local operations.
      let end = i;
      while (end < ops.length && (ops[end] as PlanOp).step === op.step && isTransfer(ops[end] as PlanOp)) end++;
      // Most steps hold a few transfers (a ring's one send and one receive, PAT's messages):
      // those are compared pair by pair first, and swept only where two race (the sweep's sort
      // and lists cost a second a call at 1,024 ranks).
      // A step the shortcut sends to the sweep without need is swept, and the sweep finds nothing:
      // mutants that only do that are marked (those that miss a race fail the race tests).
      let racing = false;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: a shortcut; the sweep finds the same
      if (end - i <= 16) {
        // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: stops early, only faster
        for (let a = i; a < end && !racing; a++) {
          const x = ops[a] as PlanOp;
          // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral,ArithmeticOperator: stops early, only faster
          for (let b = a + 1; b < end && !racing; b++) {
            const y = ops[b] as PlanOp;
            racing = (x.kind === "recv" || y.kind === "recv") && overlap(a, 0, x.region, b, 0, y.region);
          }
        }
      } else racing = true;
      const pairs = racing ? races(plan, i, end) : [];
      for (const [a, b] of pairs as [number, number][]) {
        const x = ops[a] as PlanOp;
        const y = ops[b] as PlanOp;
        fail(
          y,
          `race: ${x.kind} ${regionText(x.region)} and ${y.kind} ${regionText(y.region)} in one step share memory`,
        );
      }
    }
    if (op.kind === "copy" && op.src) {
      if (mem(i, 0) === mem(i, 1) && from(i, 0) === from(i, 1)) {
        // Harmless on the host, but a wasted kernel or memcpy on a GPU: usually an in-place case missed.
        fail(op, `copy ${regionText(op.region)} <- ${regionText(op.src)} copies memory onto itself`);
      } else if (overlap(i, 0, op.region, i, 1, op.src)) {
        fail(op, `copy ${regionText(op.region)} <- ${regionText(op.src)} overlaps itself`);
      }
    }
    if (op.kind !== "send" && mem(i, 0) === 0) {
      // The caller's input is memory 0 (in place it is shared with the output only as protectedInput allows).
      const x = from(i, 0);
      for (const [lo, hi] of plan.protectedInput) {
        if (x < hi && lo < x + op.region.count) {
          fail(op, `writes ${regionText(op.region)}, which is the caller's input (it must stay unchanged)`);
          break;
        }
      }
    }
  });
}

const isTransfer = (op: PlanOp): boolean => op.kind === "send" || op.kind === "recv";

/** A step's label ('' where a schedule in plain JavaScript left it out). */
export const labelOf = (s: Step | undefined): string => (s?.label as string | undefined) ?? "";

/**
 * Among a step's transfers ops[first .. end): pairs that share memory, one of the two a receive,
 * as [earlier, later] by position, ordered by the later. One sweep over the regions sorted by
 * memory and start (a step of an all-to-all holds thousands of transfers): a receive that starts
 * before the furthest end of any region before it overlaps that region, a send that starts before
 * the furthest end of a receive before it overlaps that receive. Every transfer in a race is
 * found with one partner, so every racing step is reported.
 */
function races(plan: Plan, first: number, end: number): [number, number][] {
  const { places, ops } = plan;
  const mem = (i: number) => places[6 * i] as number;
  const from = (i: number) => places[6 * i + 1] as number;
  const order = Array.from({ length: end - first }, (_, k) => first + k);
  order.sort((a, b) => mem(a) - mem(b) || from(a) - from(b) || a - b);
  const found: [number, number][] = [];
  let m = -2;
  let endAll = 0;
  let endRecv = 0;
  let all = -1;
  let recv = -1;
  for (const c of order) {
    if (mem(c) !== m) {
      m = mem(c);
      all = recv = -1;
    }
    const s = from(c);
    const e = s + (ops[c] as PlanOp).region.count;
    const isRecv = (ops[c] as PlanOp).kind === "recv";
    const h = isRecv ? (all >= 0 && s < endAll ? all : -1) : recv >= 0 && s < endRecv ? recv : -1;
    if (h >= 0) found.push(h < c ? [h, c] : [c, h]);
    if (all < 0 || e > endAll) {
      all = c;
      endAll = e;
    }
    if (isRecv && (recv < 0 || e > endRecv)) {
      recv = c;
      endRecv = e;
    }
  }
  return found.sort((x, y) => x[1] - y[1] || x[0] - y[0]);
}
