/**
 * reducescatter: block r of the reduction over every rank's input lands in rank r's output
 * (ncclReduceScatter, MPI_Reduce_scatter_block).
 */
import { defineSpec } from "./define.js";

export const reducescatter = defineSpec({
  name: "reducescatter",
  aliases: ["reduce_scatter", "reduceScatter", "reduce_scatter_tensor"],
  api: "reduceScatter",
  summary: "block r of the element-wise reduction of every rank's count·n elements lands on rank r",
  rooted: false,
  reducing: true,
  perRank: true,
  splits: false,
  replicated: false,
  layout: (c) => ({
    inputCount: c.count * c.size,
    outputCount: c.count,
    alias: { kind: "output-in-input", offset: c.rank * c.count },
  }),
  result: (c) => [{ at: 0, count: c.count, reduce: c.rank * c.count }],
  busFactor: (n) => (n - 1) / n,
  builtin: { mpi: "MPI_Reduce_scatter_block", nccl: "ncclReduceScatter", run: (b, x) => b.reducescatter(x) },
  explainCall: () => ({ count: 1 }),
  // Rank r's input block j is rank 0's block j - r; its output, one block, does not move.
  rotation: (_n, count) => ({ input: count, output: 0 }),
});
