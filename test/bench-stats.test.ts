/**
 * bench's statistics on fabricated timing series (issue 18 item 5): a rare stall in one round
 * moves nccl-tests' mean but not the median the ratio column is based on; the spread's min and
 * max show it; rounds split the calls evenly; small sizes warm up long enough for the JIT.
 */
import { describe, expect, it } from "vitest";
import { ratios, roundSizes, spread, warmupCalls } from "../src/bench/stats.js";

describe("bench statistics", () => {
  // Nine steady rounds of 8 µs per call and one round where a rank was off the CPU for 1 ms
  // (2 calls in the round: +500 µs per call).
  const steady = [8, 8.2, 7.9, 8.1, 8, 8.3, 7.8, 8, 8.1];
  const stalled = [...steady.slice(0, 4), 508, ...steady.slice(4)];
  const calls = roundSizes(20, 10);

  it("a stalled round moves the mean but not the median", () => {
    const s = spread(stalled, calls);
    expect(s.median).toBeCloseTo(8.05, 9);
    expect(s.min).toBe(7.8);
    expect(s.max).toBe(508);
    // The mean weighs rounds by their calls: (2·(Σ steady) + 2·508) / 20.
    expect(s.mean).toBeCloseTo((2 * steady.reduce((a, b) => a + b, 0) + 2 * 508) / 20, 9);
    expect(s.mean).toBeGreaterThan(50);
    expect(s.rounds).toBe(10);
  });

  it("the ratio by median ignores the hand-rolled stall; the mean ratio does not", () => {
    const builtin = spread([4, 4.1, 3.9, 4, 4, 4.2, 3.8, 4, 4.1, 4], calls);
    const r = ratios(spread(stalled, calls), builtin);
    expect(r?.median).toBeCloseTo(4 / 8.05, 9);
    expect(r?.mean).toBeLessThan(0.1);
    expect(ratios(spread(stalled, calls), undefined)).toBeNull();
  });

  it("an even number of rounds takes the middle two; odd takes the middle one", () => {
    expect(spread([1, 3, 2, 100], [1, 1, 1, 1]).median).toBe(2.5);
    expect(spread([5, 1, 3], [1, 1, 1]).median).toBe(3);
    expect(() => spread([], [])).toThrow(RangeError);
    expect(() => spread([1, 2], [1])).toThrow(RangeError);
  });

  it("rounds split the calls as evenly as they can, never more rounds than calls", () => {
    expect(roundSizes(20, 10)).toEqual(Array(10).fill(2));
    expect(roundSizes(23, 10)).toEqual([3, 3, 3, 2, 2, 2, 2, 2, 2, 2]);
    expect(roundSizes(3, 10)).toEqual([1, 1, 1]);
    expect(roundSizes(0, 10)).toEqual([0]);
  });

  it("every size warms up for the JIT: 10,000 calls up to 64 KiB, then 256 MiB worth, and never fewer than asked", () => {
    expect(warmupCalls(5, 1024)).toBe(10_000);
    expect(warmupCalls(5, 64 * 1024)).toBe(10_000);
    expect(warmupCalls(5, 256 * 1024)).toBe(1024);
    expect(warmupCalls(5, 512 * 1024)).toBe(512);
    // A measured call bounds the warm-up to WARMUP_BUDGET_MS a variant, never under the -w count.
    expect(warmupCalls(5, 1024, 2)).toBe(10_000);
    expect(warmupCalls(5, 64 * 1024, 200)).toBe(10_000);
    expect(warmupCalls(5, 1024, 2500)).toBe(800);
    expect(warmupCalls(5, 512 * 1024, 5000)).toBe(400);
    expect(warmupCalls(5, 512 * 1024, 200)).toBe(512);
    expect(warmupCalls(5, 1024, 1e7)).toBe(5);
    expect(warmupCalls(5, 32 * 1024 * 1024)).toBe(8);
    expect(warmupCalls(5, 256 * 1024 * 1024)).toBe(5);
    expect(warmupCalls(20_000, 1024)).toBe(20_000);
    expect(warmupCalls(20, 64 * 1024 * 1024)).toBe(20);
  });
});
