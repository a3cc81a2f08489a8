/**
 * The catalogue's time bound under load (check.ts): exact on an idle machine, growing with the
 * load per core up to 4 times, so that a loaded CI machine does not fail a row that answered
 * in time for its share of the cores, and a slow verdict is still caught. Touches nothing.
 */
import { describe, expect, it } from "vitest";
import { boundUnderLoad } from "../support/load.js";

describe("a row's bound under load", () => {
  it("is the row's own bound while the load is at most one per core", () => {
    expect(boundUnderLoad(20, 0, 2)).toEqual({ bound: 20, why: "" });
    expect(boundUnderLoad(20, 2, 2)).toEqual({ bound: 20, why: "" });
  });
  it("grows with the load per core and says so", () => {
    const b = boundUnderLoad(20, 5, 2);
    expect(b.bound).toBe(50);
    expect(b.why).toBe(" (20 s × 2.50 for a load of 5.0 on 2 cores)");
  });
  it("grows at most 4 times, so a slow verdict still fails", () => {
    expect(boundUnderLoad(20, 36, 2).bound).toBe(80);
    expect(boundUnderLoad(8, 1000, 1).bound).toBe(32);
  });
});
