/**
 * Where the plan scales a scaled op's input (src/schedule/plan.ts; premulsum, and avg on floats,
 * are sums whose inputs are multiplied first, docs/semantics.md): in place, where it lies; out of
 * place, into a scratch copy for a schedule written out of place (the caller's input stays
 * untouched), into the output for one written in place. Never a scratch copy in place.
 */
import { describe, expect, it } from "vitest";
import { compile } from "../src/schedule/plan.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall, rankCall } from "../src/specs/index.js";

const plan = (name: string, inPlace: boolean, op: "sum" | "avg") => {
  const alg = findAlgorithm("allreduce", name, { op: "plan-scaling.test" });
  const call = makeCall(
    { collective: "allreduce", size: 4, count: 8, dtype: "float32", inPlace, op: { name: op } },
    alg,
  );
  return compile(alg, rankCall(call, 1));
};

describe("scaling a scaled op's input", () => {
  for (const name of ["recursive_doubling", "ring", "rabenseifner"]) {
    it(`${name}: in place, scaled where it lies, with no more scratch than a sum`, () => {
      const p = plan(name, true, "avg");
      const first = p.ops[0];
      expect(first?.kind).toBe("scale");
      expect(first?.region.buf).toBe("output");
      expect(p.scratch).toBe(plan(name, true, "sum").scratch);
      expect(p.scheduled.inPlace).toBe(true);
    });
  }
  it("out of place, a schedule written out of place reads a scaled scratch copy; the input is untouched", () => {
    const p = plan("recursive_doubling", false, "avg");
    const first = p.ops[0];
    expect(first?.kind).toBe("scale");
    expect(first?.region.buf).toBe("scratch");
    expect(p.ops.some((o) => o.kind !== "send" && o.region.buf === "input")).toBe(false);
    expect(p.scheduled.inPlace).toBe(false);
  });
  it("out of place, a schedule written in place has its input scaled into the output", () => {
    const p = plan("rabenseifner", false, "avg");
    expect(p.ops[0]?.kind).toBe("scale");
    expect(p.ops[0]?.region.buf).toBe("output");
    expect(p.scratch).toBe(plan("rabenseifner", false, "sum").scratch);
  });
});
