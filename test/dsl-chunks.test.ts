/**
 * Cutting a buffer into chunks (src/schedule/dsl.ts partition, algorithms/lib/fold.ts chunkSpan):
 * MPICH's split (the first count % parts chunks one longer), one frozen split shared by every
 * rank's plan, and spans of chunks as one region, refused where the chunks do not lie end to end.
 */
import { describe, expect, it } from "vitest";
import { chunkSpan, liesEndToEnd } from "../algorithms/lib/fold.js";
import { type Chunk, partition, region } from "../src/schedule/dsl.js";

describe("partition", () => {
  it("splits any count, the first count % parts chunks one element longer", () => {
    expect(partition(10, 4)).toEqual([
      { offset: 0, count: 3 },
      { offset: 3, count: 3 },
      { offset: 6, count: 2 },
      { offset: 8, count: 2 },
    ]);
    expect(partition(2, 4).map((c) => c.count)).toEqual([1, 1, 0, 0]);
    expect(partition(0, 3).map((c) => c.count)).toEqual([0, 0, 0]);
  });
  it("gives every caller the same frozen split, which no caller can change", () => {
    const a = partition(1000, 16);
    expect(partition(1000, 16)).toBe(a);
    expect(partition(1001, 16)).not.toBe(a);
    expect(Object.isFrozen(a) && a.every((c) => Object.isFrozen(c))).toBe(true);
    expect(() => (a as Chunk[]).push({ offset: 0, count: 1 })).toThrow(TypeError);
  });
});

/** A chunk list from [offset, count] pairs. */
const chunksOf = (...pairs: [number, number][]): Chunk[] => pairs.map(([offset, count]) => ({ offset, count }));

describe("chunkSpan", () => {
  const buf = region("output", 0, 100);
  it("chunks lo..hi-1 of a split as one region", () => {
    const chunks = partition(10, 4);
    expect(chunkSpan(buf, chunks, 1, 3)).toEqual(region("output", 3, 5));
    expect(chunkSpan(buf, chunks, 0, 4)).toEqual(region("output", 0, 10));
  });
  it("refuses a span whose chunks leave a gap, and takes one that does not in the same list", () => {
    const gappy = chunksOf([0, 2], [2, 2], [6, 2]);
    expect(chunkSpan(buf, gappy, 0, 2)).toEqual(region("output", 0, 4));
    expect(() => chunkSpan(buf, gappy, 1, 3)).toThrow(/chunkSpan: chunks 1..2 are not contiguous/);
    // Frozen, the list is judged once, and still refused.
    const frozen = Object.freeze(gappy.map((c) => Object.freeze({ ...c })));
    expect(() => chunkSpan(buf, frozen, 1, 3)).toThrow(/not contiguous/);
    expect(() => chunkSpan(buf, frozen, 1, 3)).toThrow(/not contiguous/);
  });
  it("trusts a list once only where it is frozen, its chunks too, and lies end to end", () => {
    const split = partition(40, 7);
    expect(liesEndToEnd(split)).toBe(true);
    expect(liesEndToEnd(split)).toBe(true);
    const copy = split.map((c) => ({ ...c }));
    expect(liesEndToEnd(copy)).toBe(false);
    expect(liesEndToEnd(Object.freeze(copy))).toBe(false);
    const gap = Object.freeze([Object.freeze({ offset: 0, count: 2 }), Object.freeze({ offset: 3, count: 1 })]);
    expect(liesEndToEnd(gap)).toBe(false);
    expect(liesEndToEnd(gap)).toBe(false);
    const overlap = Object.freeze([Object.freeze({ offset: 0, count: 2 }), Object.freeze({ offset: 1, count: 1 })]);
    expect(liesEndToEnd(overlap)).toBe(false);
  });
  it("checks a list that can still change at every span: a gap made after a first use is refused", () => {
    const list = chunksOf([0, 2], [2, 2], [4, 2]);
    expect(chunkSpan(buf, list, 0, 3)).toEqual(region("output", 0, 6));
    list[2] = { offset: 5, count: 2 };
    expect(() => chunkSpan(buf, list, 1, 3)).toThrow(/chunkSpan: chunks 1..2 are not contiguous/);
  });
});
