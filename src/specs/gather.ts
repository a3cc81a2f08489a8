/** gather: every rank's input lands at the root, in rank order (MPI_Gather; NCCL has none: grouped send/recv). */
import { blocks, defineSpec } from "./define.js";

export const gather = defineSpec({
  name: "gather",
  aliases: [],
  api: "gather",
  summary: "every rank's count elements land at the root, in rank order (count·n there)",
  rooted: true,
  reducing: false,
  perRank: true,
  splits: false,
  replicated: false,
  // In place the root's input is already its own block of the output.
  layout: (c) => ({
    inputCount: c.count,
    outputCount: c.rank === c.root ? c.count * c.size : 0,
    alias: c.rank === c.root ? { kind: "input-in-output", offset: c.root * c.count } : undefined,
  }),
  result: (c) => (c.rank === c.root ? blocks(c.size, c.count, (r) => ({ rank: r, index: 0 })) : []),
  busFactor: (n) => (n - 1) / n,
  builtin: { mpi: "MPI_Gather", nccl: "ncclSend/ncclRecv (grouped)", run: (b, x) => b.gather(x) },
  explainCall: () => ({ count: 1 }),
});
