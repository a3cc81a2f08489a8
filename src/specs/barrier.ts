/** barrier: no rank leaves before every rank has entered (MPI_Barrier; NCCL: a 1-element all-reduce). */
import { defineSpec } from "./define.js";

export const barrier = defineSpec({
  name: "barrier",
  aliases: [],
  api: "barrier",
  summary: "no rank leaves before every rank has entered",
  rooted: false,
  reducing: false,
  counted: false,
  inPlace: false,
  data: false,
  perRank: false,
  splits: false,
  replicated: false,
  defaultDtype: "uint8",
  layout: () => ({ inputCount: 0, outputCount: 0 }),
  // No data: the checker asks instead that every rank has heard, transitively, from every rank.
  result: () => [],
  busFactor: () => 1,
  builtin: { mpi: "MPI_Barrier", nccl: "ncclAllReduce (1 element)", run: (b, x) => b.barrier(x) },
  explainCall: () => ({}),
});
