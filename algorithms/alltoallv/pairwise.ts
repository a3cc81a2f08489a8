/**
 * alltoallv/pairwise: all-to-all with per-peer sizes by n-1 rounds of pairwise exchange (Open
 * MPI's ompi_coll_base_alltoallv_intra_pairwise), the result of torch's all_to_all_single with
 * input/output splits.
 *
 * Rank r sends sendCounts[p] elements to each rank p from input offset Σ_{q<p} sendCounts[q] and
 * receives recvCounts[q] elements from each rank q at output offset Σ_{p<q} recvCounts[p]; round
 * k pairs r with r+k (send) and r-k (receive), alltoall/pairwise's pairwiseExchange. Empty
 * blocks are still posted so every rank has the same rounds.
 *
 * Limits: any size and any splits; no in-place form; n-1 latency terms whatever the sizes.
 * Cost: n-1 steps (count is unused); Σ_{p≠r} sendCounts[p] · s bytes sent by rank r, which the
 * (size, count, segment) cost cannot express, so the byte check is skipped (NaN).
 *
 * Step table (n = 4), from `cclab explain alltoallv --algorithm pairwise -n 4`:
 * alltoallv/pairwise: n = 4, count = 0, out of place, segment 1
 * sendCounts[src][dst]: [[0,2,1,0],[1,0,2,1],[2,1,0,2],[0,2,1,0]]
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  send to 1, recv from 3: in[0:2]->1 out[3:3]<-3
 *   rank 1  send to 2, recv from 0: in[1:3]->2 out[0:2]<-0
 *   rank 2  send to 3, recv from 1: in[3:5]->3 out[1:3]<-1
 *   rank 3  send to 0, recv from 2: in[0:0]->0 out[1:3]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       [0]     .       .
 *   out[1]  .       [0]     [1]     [2]
 *   out[2]  .       .       [1]     [2]
 *   out[3]          .       .
 *   out[4]          .
 *
 * step 2
 *   rank 0  send to 2, recv from 2: in[2]->2 out[1:3]<-2
 *   rank 1  send to 3, recv from 3: in[3]->3 out[3:5]<-3
 *   rank 2  send to 0, recv from 0: in[0:2]->0 out[0]<-0
 *   rank 3  send to 1, recv from 1: in[0:2]->1 out[0]<-1
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       [0]     [0]     [1]
 *   out[1]  [2]     [0]     [1]     [2]
 *   out[2]  [2]     .       [1]     [2]
 *   out[3]          [3]     .
 *   out[4]          [3]
 *
 * step 3
 *   rank 0  send to 3, recv from 1: in[3:3]->3 out[0]<-1
 *   rank 1  send to 0, recv from 2: in[0]->0 out[2]<-2
 *   rank 2  send to 1, recv from 3: in[2]->1 out[3]<-3
 *   rank 3  send to 2, recv from 0: in[2]->2 out[0:0]<-0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [1]     [0]     [0]     [1]
 *   out[1]  [2]     [0]     [1]     [2]
 *   out[2]  [2]     [2]     [1]     [2]
 *   out[3]          [3]     [3]
 *   out[4]          [3]
 *
 * cost: n-1 steps, Σ_{p≠r} sendCounts[p] · s (per rank; not a function of count) bytes sent per rank; here 3 steps, at most 5 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { region } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { pairwiseExchange } from "../alltoall/pairwise.js";

/** Blocks at the prefix sums of per-peer counts: block p is counts[p] elements of `buf`. */
export function splitBlocks(buf: "input" | "output", counts: readonly number[]): Region[] {
  let offset = 0;
  return counts.map((c) => {
    const r = region(buf, offset, c);
    offset += c;
    return r;
  });
}

/** alltoallv's send and receive blocks of one rank, from ctx.sendCounts and ctx.recvCounts. */
export function alltoallvBlocks(ctx: ScheduleContext): { sendBlocks: Region[]; recvBlocks: Region[] } {
  const { rank, size, sendCounts, recvCounts } = ctx;
  invariant(
    sendCounts?.length === size && recvCounts?.length === size,
    () => `alltoallv: rank ${rank} needs sendCounts and recvCounts with one entry per rank (${size})`,
  );
  return { sendBlocks: splitBlocks("input", sendCounts), recvBlocks: splitBlocks("output", recvCounts) };
}

export const pairwiseAlltoallv: Algorithm = {
  collective: "alltoallv",
  name: "pairwise",
  summary: "n-1 rounds of pairwise exchange with per-peer sizes (all_to_all_single with splits).",
  limits: "any size and splits; no in-place form; n-1 latency terms",
  inPlace: false,
  cost: {
    stepsFormula: "n-1",
    bytesFormula: "Σ_{p≠r} sendCounts[p] · s (per rank; not a function of count)",
    steps: (n) => n - 1,
    sentElements: () => Number.NaN,
  },
  *schedule(ctx: ScheduleContext): Schedule {
    const { sendBlocks, recvBlocks } = alltoallvBlocks(ctx);
    yield* pairwiseExchange(ctx.rank, ctx.size, sendBlocks, recvBlocks);
  },
};
