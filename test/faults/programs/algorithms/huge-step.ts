/** 27.5: an all-reduce whose schedule() builds 10^7 operations in one step. */
import { copy, defineAlgorithm, f, region, step } from "../../../../src/schedule/dsl.js";

export const hugeStep = defineAlgorithm({
  collective: "allreduce",
  name: "huge_step",
  summary: "Ten million copies in one step: on purpose.",
  limits: "none: it is too big",
  source: "test/faults/programs/algorithms",
  cost: { steps: f("1", () => 1), sent: f("0", () => 0) },
  *schedule(_c, { output }) {
    const r = region(output.buf, output.offset, 0);
    yield step(
      "huge",
      [],
      Array.from({ length: 10_000_000 }, () => copy(r, r)),
    );
  },
});
