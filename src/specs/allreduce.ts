/** allreduce: the reduction over every rank's input lands on every rank (ncclAllReduce, MPI_Allreduce). */
import { defineSpec } from "./define.js";

export const allreduce = defineSpec({
  name: "allreduce",
  aliases: ["all_reduce", "allReduce"],
  api: "allReduce",
  summary: "the element-wise reduction of every rank's count elements lands on every rank",
  rooted: false,
  reducing: true,
  perRank: false,
  splits: false,
  replicated: true,
  compare: ["ring", "double_binary_tree"],
  layout: (c) => ({ inputCount: c.count, outputCount: c.count, alias: { kind: "same", offset: 0 } }),
  result: (c) => [{ at: 0, count: c.count, reduce: 0 }],
  busFactor: (n) => (2 * (n - 1)) / n,
  builtin: { mpi: "MPI_Allreduce", nccl: "ncclAllReduce", run: (b, x) => b.allreduce(x) },
  explainCall: (n) => ({ count: n }),
  // Rank r's chunk j is rank 0's chunk j - r: both buffers turn by a chunk a rank.
  rotation: (n, count) => (count % n === 0 ? { input: count / n, output: count / n } : undefined),
});
