/**
 * alltoall/grouped: every send and receive posted as one group, the way torch's all_to_all
 * runs over NCCL (ncclGroupStart; ncclSend/ncclRecv to every peer; ncclGroupEnd).
 *
 * One round: rank r sends input block p to every rank p and receives output block q from
 * every rank q; the own block is a local copy. In place the sends read a scratch copy of the
 * input (alltoall/pairwise's alltoallBlocks).
 *
 * Limits: any size; one latency term, but all n-1 messages share the rank's links at once, so
 * it leans on the network (or NCCL's channels) to schedule them well.
 * Cost: 1 step (0 for n = 1); (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain alltoall --algorithm grouped -n 4`:
 * alltoall/grouped: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy own block: out[0]=in[0]
 *   rank 1  copy own block: out[1]=in[1]
 *   rank 2  copy own block: out[2]=in[2]
 *   rank 3  copy own block: out[3]=in[3]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     .       .       .
 *   out[1]  .       [1]     .       .
 *   out[2]  .       .       [2]     .
 *   out[3]  .       .       .       [3]
 *
 * step 1
 *   rank 0  send to all, recv from all: in[1]->1 out[1]<-1 in[2]->2 out[2]<-2 in[3]->3 out[3]<-3
 *   rank 1  send to all, recv from all: in[2]->2 out[2]<-2 in[3]->3 out[3]<-3 in[0]->0 out[0]<-0
 *   rank 2  send to all, recv from all: in[3]->3 out[3]<-3 in[0]->0 out[0]<-0 in[1]->1 out[1]<-1
 *   rank 3  send to all, recv from all: in[0]->0 out[0]<-0 in[1]->1 out[1]<-1 in[2]->2 out[2]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *
 * cost: 1 steps, (n-1) · count · s bytes sent per rank; here 1 steps, at most 3 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { recv, send, step } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext, Transfer } from "../../src/schedule/types.js";
import { alltoallBlocks, alltoallScratch, selfCopy } from "./pairwise.js";

/**
 * One group with a send of sendBlocks[p] to and a receive of recvBlocks[p] from every other
 * rank p, shared with alltoallv; zero-length blocks are posted too, as torch does.
 */
export function* groupedExchange(
  rank: number,
  size: number,
  sendBlocks: readonly Region[],
  recvBlocks: readonly Region[],
): Schedule {
  invariant(sendBlocks.length === size && recvBlocks.length === size, "groupedExchange: one block per peer");
  yield* selfCopy(rank, sendBlocks, recvBlocks);
  if (size === 1) return;
  const transfers: Transfer[] = [];
  for (let k = 1; k < size; k++) {
    const peer = (rank + k) % size;
    transfers.push(send(peer, sendBlocks[peer] as Region), recv(peer, recvBlocks[peer] as Region));
  }
  yield step("send to all, recv from all", transfers);
}

export const groupedAlltoall: Algorithm = {
  collective: "alltoall",
  name: "grouped",
  summary: "One group of all sends and receives (torch's all_to_all over NCCL).",
  limits: "any size; one latency term; all n-1 messages in flight at once share the links",
  cost: {
    stepsFormula: "1",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (n === 1 || count === 0 ? 0 : 1),
    sentElements: (n, count) => (n - 1) * count,
  },
  scratch: alltoallScratch,
  *schedule(ctx: ScheduleContext): Schedule {
    if (ctx.count === 0) return;
    const { sendBlocks, recvBlocks } = yield* alltoallBlocks(ctx);
    yield* groupedExchange(ctx.rank, ctx.size, sendBlocks, recvBlocks);
  },
};
