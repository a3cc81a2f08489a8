/** reduce: the reduction over every rank's input lands in the root's output (ncclReduce, MPI_Reduce). */
import { defineSpec } from "./define.js";

export const reduce = defineSpec({
  name: "reduce",
  aliases: [],
  api: "reduce",
  summary: "the element-wise reduction of every rank's count elements lands at the root",
  rooted: true,
  reducing: true,
  perRank: false,
  splits: false,
  replicated: false,
  layout: (c) => ({
    inputCount: c.count,
    outputCount: c.rank === c.root ? c.count : 0,
    alias: c.rank === c.root ? { kind: "same", offset: 0 } : undefined,
  }),
  result: (c) => (c.rank === c.root ? [{ at: 0, count: c.count, reduce: 0 }] : []),
  busFactor: () => 1,
  builtin: { mpi: "MPI_Reduce", nccl: "ncclReduce", run: (b, x) => b.reduce(x) },
  explainCall: (n) => ({ count: n }),
});
