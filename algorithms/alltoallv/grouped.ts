/**
 * alltoallv/grouped: all-to-all with per-peer sizes as one group of all sends and receives, the
 * way torch's all_to_all_single with input/output splits runs over NCCL.
 *
 * Rank r sends sendCounts[p] elements to every rank p and receives recvCounts[q] from every
 * rank q, at prefix-sum displacements (alltoallv/pairwise's alltoallvBlocks), in one group
 * (alltoall/grouped's groupedExchange); the own block is a local copy.
 *
 * Limits: any size and splits; no in-place form; one latency term, all messages in flight at once.
 * Cost: 1 step (0 for n = 1; count is unused); Σ_{p≠r} sendCounts[p] · s bytes sent by rank r,
 * not a function of (size, count, segment), so the byte check is skipped (NaN).
 *
 * Step table (n = 4), from `cclab explain alltoallv --algorithm grouped -n 4`:
 * alltoallv/grouped: n = 4, count = 0, out of place, segment 1
 * sendCounts[src][dst]: [[0,2,1,0],[1,0,2,1],[2,1,0,2],[0,2,1,0]]
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  send to all, recv from all: in[0:2]->1 out[0]<-1 in[2]->2 out[1:3]<-2 in[3:3]->3 out[3:3]<-3
 *   rank 1  send to all, recv from all: in[1:3]->2 out[2]<-2 in[3]->3 out[3:5]<-3 in[0]->0 out[0:2]<-0
 *   rank 2  send to all, recv from all: in[3:5]->3 out[3]<-3 in[0:2]->0 out[0]<-0 in[2]->1 out[1:3]<-1
 *   rank 3  send to all, recv from all: in[0:0]->0 out[0:0]<-0 in[0:2]->1 out[0]<-1 in[2]->2 out[1:3]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [1]     [0]     [0]     [1]
 *   out[1]  [2]     [0]     [1]     [2]
 *   out[2]  [2]     [2]     [1]     [2]
 *   out[3]          [3]     [3]
 *   out[4]          [3]
 *
 * cost: 1 steps, Σ_{p≠r} sendCounts[p] · s (per rank; not a function of count) bytes sent per rank; here 1 steps, at most 5 elements sent by a rank
 */
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { groupedExchange } from "../alltoall/grouped.js";
import { alltoallvBlocks } from "./pairwise.js";

export const groupedAlltoallv: Algorithm = {
  collective: "alltoallv",
  name: "grouped",
  summary: "One group of all sends and receives with per-peer sizes (all_to_all_single over NCCL).",
  limits: "any size and splits; no in-place form; one latency term, all messages in flight at once",
  inPlace: false,
  cost: {
    stepsFormula: "1",
    bytesFormula: "Σ_{p≠r} sendCounts[p] · s (per rank; not a function of count)",
    steps: (n) => (n === 1 ? 0 : 1),
    sentElements: () => Number.NaN,
  },
  *schedule(ctx: ScheduleContext): Schedule {
    const { sendBlocks, recvBlocks } = alltoallvBlocks(ctx);
    yield* groupedExchange(ctx.rank, ctx.size, sendBlocks, recvBlocks);
  },
};
