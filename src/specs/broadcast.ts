/** broadcast: the root's message lands in every rank's output (ncclBroadcast, MPI_Bcast). */
import { defineSpec } from "./define.js";

export const broadcast = defineSpec({
  name: "broadcast",
  aliases: ["bcast"],
  api: "broadcast",
  summary: "the root's count elements land in every rank's output",
  rooted: true,
  reducing: false,
  perRank: false,
  splits: false,
  replicated: true,
  // count at the root, nothing elsewhere; the root's input is its output in place.
  layout: (c) => ({
    inputCount: c.rank === c.root ? c.count : 0,
    outputCount: c.count,
    alias: c.rank === c.root ? { kind: "same", offset: 0 } : undefined,
  }),
  result: (c) => [{ at: 0, count: c.count, rank: c.root, index: 0 }],
  busFactor: () => 1,
  builtin: { mpi: "MPI_Bcast", nccl: "ncclBroadcast", run: (b, x) => b.broadcast(x) },
  explainCall: (n) => ({ count: n }),
});
