/**
 * The plan runner's shared slots (src/native/run-layout.ts): native/run_layout.h, which mpi.cc
 * reads them by, is what the TypeScript generates; mpi.cc and the TypeScript that fills the
 * arrays (plan-run.ts, progress.ts's waitRule) index ctrl and desc by those names only, never by
 * a bare number.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CTRL, DESC, runLayoutHeader } from "../src/native/run-layout.js";

describe("the plan runner's ctrl and desc layout, one for TypeScript and C++", () => {
  it("native/run_layout.h is what src/native/run-layout.ts generates (npx tsx src/tools/run-layout.ts)", () => {
    expect(readFileSync("native/run_layout.h", "utf8")).toBe(runLayoutHeader());
  });

  it("the slots are distinct and fit: three memories' [lo, hi) after the call's numbers, records of stride", () => {
    const ctrl = Object.entries(CTRL)
      .filter(([k]) => k !== "length")
      .map(([, v]) => v);
    expect(new Set(ctrl).size).toBe(ctrl.length);
    expect(CTRL.memLo + 2 * 3).toBe(CTRL.length);
    expect(Math.max(...ctrl)).toBe(CTRL.memLo);
    const desc = Object.entries(DESC)
      .filter(([k]) => k !== "stride")
      .map(([, v]) => v);
    expect([...desc].sort()).toEqual(Array.from({ length: DESC.stride }, (_, i) => i));
  });

  it("mpi.cc, plan-run.ts and progress.ts index ctrl and desc by name only", () => {
    const cc = readFileSync("native/mpi.cc", "utf8");
    expect(cc).toContain('#include "run_layout.h"');
    expect(cc.match(/\b(c|d|ctrl|desc)\[\d/g) ?? []).toEqual([]);
    for (const file of ["src/backends/mpi/plan-run.ts", "src/backends/mpi/progress.ts"]) {
      const ts = readFileSync(file, "utf8");
      expect(ts).toContain("CTRL.");
      expect(ts.match(/\b(ctrl|desc)\[(\d|k \+ \d|\d+ \* k|\d+ \+ \d)/g) ?? [], file).toEqual([]);
    }
  });
});
