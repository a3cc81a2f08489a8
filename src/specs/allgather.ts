/** allgather: every rank's input lands in every rank's output, in rank order (ncclAllGather, MPI_Allgather). */
import { blocks, defineSpec } from "./define.js";

export const allgather = defineSpec({
  name: "allgather",
  aliases: ["all_gather", "allGather", "all_gather_into_tensor"],
  api: "allGather",
  summary: "every rank's count elements land on every rank, in rank order (count·n)",
  rooted: false,
  reducing: false,
  perRank: true,
  splits: false,
  replicated: true,
  layout: (c) => ({
    inputCount: c.count,
    outputCount: c.count * c.size,
    alias: { kind: "input-in-output", offset: c.rank * c.count },
  }),
  result: (c) => blocks(c.size, c.count, (r) => ({ rank: r, index: 0 })),
  busFactor: (n) => (n - 1) / n,
  builtin: { mpi: "MPI_Allgather", nccl: "ncclAllGather", run: (b, x) => b.allgather(x) },
  explainCall: () => ({ count: 1 }),
});
