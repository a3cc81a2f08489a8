/** 27.5: an all-reduce whose schedule() never returns (a loop that forgets to advance). */
import { defineAlgorithm, f } from "../../../../src/schedule/dsl.js";

export const hang = defineAlgorithm({
  collective: "allreduce",
  name: "hang",
  summary: "Never returns from schedule(): on purpose.",
  limits: "none: it never finishes",
  source: "test/faults/programs/algorithms",
  cost: { steps: f("1", () => 1), sent: f("0", () => 0) },
  schedule() {
    let i = 0;
    while (i >= 0) i = (i + 1) % 7;
    return [];
  },
});
