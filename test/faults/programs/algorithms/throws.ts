/** 27.5 and 27.8: an all-gather whose schedule() throws at n = 3, and one that recurses without end. */
import { ring } from "../../../../algorithms/allgather/ring.js";
import { defineAlgorithm, type Schedule } from "../../../../src/schedule/dsl.js";

export const throwsAt3 = defineAlgorithm({
  ...ring,
  name: "throws_at_3",
  summary: "The ring all-gather, except that it throws at n = 3: on purpose.",
  limits: "n != 3",
  source: "test/faults/programs/algorithms",
  schedule: (c, mem) => {
    if (c.size === 3) throw new TypeError("no plan for three ranks");
    return ring.schedule(c, mem);
  },
});

function deeper(k: number): Schedule {
  return deeper(k + 1);
}

export const recursion = defineAlgorithm({
  ...ring,
  name: "recursion",
  summary: "Recurses without end: on purpose.",
  limits: "none",
  source: "test/faults/programs/algorithms",
  schedule: () => deeper(0),
});
