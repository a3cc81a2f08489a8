/** 40.10: an all-reduce whose name holds a comma (bench --algorithm-file must not split it). */
import { ring } from "../../../../algorithms/allreduce/ring.js";
import { defineAlgorithm } from "../../../../src/schedule/dsl.js";

export const commaName = defineAlgorithm({
  ...ring,
  name: "ring,v2",
  summary: "The ring all-reduce under a name with a comma in it.",
  source: "test/faults/programs/algorithms",
});
