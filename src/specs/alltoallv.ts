/**
 * alltoallv: all-to-all with per-pair counts: rank i sends splits[i][j] elements to rank j, packed
 * in peer order on both sides (MPI_Alltoallv with packed displacements, torch's all_to_all_single
 * with split sizes). No in-place form.
 */
import { defineSpec } from "./define.js";

const sum = (xs: readonly number[] | undefined): number => (xs ?? []).reduce((a, b) => a + b, 0);

export const alltoallv = defineSpec({
  name: "alltoallv",
  aliases: ["all_to_all_v", "allToAllv", "allToAllV"],
  api: "allToAllv",
  summary: "rank i sends splits[i][j] elements to rank j, packed in peer order on both sides",
  rooted: false,
  reducing: false,
  counted: false,
  inPlace: false,
  perRank: true,
  splits: true,
  replicated: false,
  layout: (c) => ({ inputCount: sum(c.sendCounts), outputCount: sum(c.recvCounts) }),
  // Block q of my output (at the prefix sum of my receive counts) holds q's elements addressed to
  // me, which start at the prefix sum of q's send counts up to me.
  result: (c, call) =>
    (c.recvCounts ?? []).map((count, q) => ({
      at: sum(c.recvCounts?.slice(0, q)),
      count,
      rank: q,
      index: sum(call.splits?.[q]?.slice(0, c.rank)),
    })),
  busFactor: (n) => (n - 1) / n,
  builtin: { mpi: "MPI_Alltoallv", nccl: "ncclSend/ncclRecv (grouped)", run: (b, x) => b.alltoallv(x) },
  explainCall: (n) => ({
    splits: Array.from({ length: n }, (_, s) => Array.from({ length: n }, (_, d) => (s + 2 * d) % 3)),
  }),
});
