/**
 * The one heap (src/core/growable.ts's MinHeap), held against sorting: random pushes and pops
 * come out in key order, and a heap made with `fifo` gives equal keys in the order they were
 * pushed (the schedule walk's events, interpret.ts, depend on it). Touches nothing outside.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MinHeap } from "../src/core/growable.js";

/** A run of pushes (key, id) and pops (null), keys drawn from few values so that ties are common. */
const script = fc.array(fc.option(fc.integer({ min: 0, max: 5 }), { nil: null, freq: 3 }), { maxLength: 300 });

function run(fifo: boolean, steps: readonly (number | null)[]) {
  const heap = new MinHeap(fifo);
  const model: { key: number; id: number }[] = [];
  const got: { key: number; id: number }[] = [];
  const want: { key: number; id: number }[] = [];
  let id = 0;
  const take = () => {
    const key = heap.peek();
    const version = heap.topVersion();
    const out = heap.pop();
    expect(version).toBe(out + 1000);
    got.push({ key, id: out });
    // The model: the smallest key, among equals the earliest pushed.
    let best = 0;
    for (let i = 1; i < model.length; i++)
      if ((model[i] as { key: number }).key < (model[best] as { key: number }).key) best = i;
    want.push(model.splice(best, 1)[0] as { key: number; id: number });
  };
  for (const s of steps) {
    if (s === null) {
      if (heap.size > 0) take();
    } else {
      heap.push(s, id, id + 1000);
      model.push({ key: s, id: id++ });
    }
  }
  while (heap.size > 0) take();
  expect(heap.peek()).toBe(Number.POSITIVE_INFINITY);
  return { got, want };
}

describe("MinHeap", () => {
  it("pops the smallest key each time", () => {
    fc.assert(
      fc.property(script, (steps) => {
        const { got, want } = run(false, steps);
        expect(got.map((e) => e.key)).toEqual(want.map((e) => e.key));
      }),
      { numRuns: 200 },
    );
  });

  it("with fifo, equal keys come out in the order they were pushed", () => {
    fc.assert(
      fc.property(script, (steps) => {
        const { got, want } = run(true, steps);
        expect(got).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });
});
