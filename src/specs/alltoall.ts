/** alltoall: block j of rank i's input lands as block i of rank j's output (MPI_Alltoall; NCCL: grouped send/recv). */
import { blocks, defineSpec } from "./define.js";

export const alltoall = defineSpec({
  name: "alltoall",
  aliases: ["all_to_all", "allToAll", "all_to_all_single"],
  api: "allToAll",
  summary: "block j (count elements) of rank i's input lands as block i of rank j's output",
  rooted: false,
  reducing: false,
  perRank: true,
  splits: false,
  replicated: false,
  layout: (c) => ({ inputCount: c.count * c.size, outputCount: c.count * c.size, alias: { kind: "same", offset: 0 } }),
  // Block q of my output is block `rank` of rank q's input.
  result: (c) => blocks(c.size, c.count, (q) => ({ rank: q, index: c.rank * c.count })),
  busFactor: (n) => (n - 1) / n,
  builtin: { mpi: "MPI_Alltoall", nccl: "ncclSend/ncclRecv (grouped)", run: (b, x) => b.alltoall(x) },
  explainCall: () => ({ count: 1 }),
});
