/** maxOf/minOf (src/core/extent.ts): Math.max/Math.min's results, for arrays too long to spread. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maxOf, minOf } from "../src/core/extent.js";

describe("maxOf / minOf", () => {
  it("agree with Math.max / Math.min and a bound, NaN and the empty array included", () => {
    fc.assert(
      fc.property(fc.array(fc.double()), fc.double(), (xs, b) => {
        expect(maxOf(xs, b)).toBe(Math.max(b, ...xs));
        expect(minOf(xs, b)).toBe(Math.min(b, ...xs));
        expect(maxOf(xs)).toBe(Math.max(...xs));
        expect(minOf(xs)).toBe(Math.min(...xs));
      }),
    );
  });

  it("take a million values (past what a spread into one call takes)", () => {
    const xs = Array.from({ length: 1_000_000 }, (_, i) => (i * 7919) % 1_000_003);
    expect(() => Math.max(...xs)).toThrow(RangeError);
    expect(maxOf(xs)).toBe(xs.reduce((a, b) => (b > a ? b : a)));
    expect(minOf(xs, 5)).toBe(0);
  });
});
