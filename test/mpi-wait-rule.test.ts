/**
 * The MPI fast path's wait rule (waitRule in src/backends/mpi/progress.ts): when one native
 * wait may return, given the transfers in flight and what waits on them. Small dataflow graphs by
 * hand; no MPI needed. A wrong rule costs no result, only a trip back to JavaScript (returning
 * too early) or a wait to the budget (too late), so it is pinned here.
 */
import { describe, expect, it } from "vitest";
import { waitRule } from "../src/backends/mpi/progress.js";
import { CTRL } from "../src/native/run-layout.js";

/** succ lists per operation, as the scheduling's CSR arrays. */
function graph(succs: number[][]) {
  const succStart = new Int32Array(succs.length + 1);
  succs.forEach((s, i) => {
    succStart[i + 1] = (succStart[i] as number) + s.length;
  });
  return { succStart, succ: Int32Array.from(succs.flat()) };
}

function rule(succs: number[][], pending: number[], inFlightOps: number[]) {
  const sched = graph(succs);
  const wake = new Uint8Array(32).fill(9);
  const inFlight = new Int32Array(succs.length);
  const ctrl = new Float64Array(CTRL.length);
  waitRule(inFlightOps.length, Int32Array.from(inFlightOps), Int32Array.from(pending), sched, wake, inFlight, ctrl);
  return {
    minDone: ctrl[CTRL.minDone],
    useWake: ctrl[CTRL.useWake],
    wake: [...wake.subarray(0, inFlightOps.length)],
    inFlight: [...inFlight],
  };
}

describe("waitRule", () => {
  it("an out-of-place step: the receive wakes the wait, the eager send alone does not", () => {
    // 0 send (input), 1 receive (scratch) -> 2 reduce (output = input + scratch)
    const r = rule([[], [2], []], [0, 0, 1], [0, 1]);
    expect(r).toEqual({ minDone: 2, useWake: 1, wake: [0, 1], inFlight: [0, 0, 0] });
  });

  it("an in-place step: the reduction waits on its send and receive, so two completions", () => {
    const r = rule([[2], [2], []], [0, 0, 2], [0, 1]);
    expect(r).toEqual({ minDone: 2, useWake: 0, wake: [0, 0], inFlight: [0, 0, 0] });
  });

  it("a pair that releases together beside a transfer that releases alone: two, or the one that wakes", () => {
    // 0 send, 1 receive -> 2 (waits on both); 3 receive -> 4 (waits on it alone)
    const r = rule([[2], [2], [], [4], []], [0, 0, 2, 0, 1], [0, 1, 3]);
    expect(r).toEqual({ minDone: 2, useWake: 1, wake: [0, 0, 1], inFlight: [0, 0, 0, 0, 0] });
  });

  it("nothing in flight can release anything sooner: every one of them", () => {
    // 0 receive -> 2, which also waits on operation 1 (not in flight); 3 a send with no successor
    const r = rule([[2], [2], [], []], [0, 0, 2, 0], [0, 3]);
    expect(r).toEqual({ minDone: 2, useWake: 0, wake: [0, 0], inFlight: [0, 0, 0, 0] });
    const three = rule([[3], [], [], [], []], [0, 0, 0, 2, 0], [0, 1, 2]);
    expect(three.minDone).toBe(3);
    expect(three.useWake).toBe(0);
  });

  it("one transfer in flight, or more than 16: every completion returns", () => {
    expect(rule([[1], []], [0, 1], [0])).toMatchObject({ minDone: 1, useWake: 0 });
    const many = Array.from({ length: 18 }, () => [] as number[]);
    const r = rule(
      many,
      new Array(18).fill(0),
      Array.from({ length: 17 }, (_, i) => i),
    );
    expect(r).toMatchObject({ minDone: 1, useWake: 0 });
  });
});
