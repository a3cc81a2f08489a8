/** scatter: block r of the root's input lands in rank r's output (MPI_Scatter; NCCL: grouped send/recv). */
import { defineSpec } from "./define.js";

export const scatter = defineSpec({
  name: "scatter",
  aliases: [],
  api: "scatter",
  summary: "block r of the root's count·n elements lands in rank r's output",
  rooted: true,
  reducing: false,
  perRank: true,
  splits: false,
  replicated: false,
  // In place the root's output is its own block of the input, left where it is.
  layout: (c) => ({
    inputCount: c.rank === c.root ? c.count * c.size : 0,
    outputCount: c.count,
    alias: c.rank === c.root ? { kind: "output-in-input", offset: c.root * c.count } : undefined,
  }),
  result: (c) => [{ at: 0, count: c.count, rank: c.root, index: c.rank * c.count }],
  busFactor: (n) => (n - 1) / n,
  builtin: { mpi: "MPI_Scatter", nccl: "ncclSend/ncclRecv (grouped)", run: (b, x) => b.scatter(x) },
  explainCall: () => ({ count: 1 }),
});
