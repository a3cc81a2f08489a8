/**
 * allgather/bruck: Bruck's all-gather (Bruck et al. 1997; MPICH allgather_intra_brucks).
 *
 * Each rank keeps a scratch copy whose block i is the chunk of rank (rank + i) mod n. At the step
 * with distance d it sends its first min(d, n-d) blocks to rank - d and receives as many from
 * rank + d after them, so after ⌈log2 n⌉ steps it holds all n blocks, rotated by its rank; a
 * local copy at the end rotates them into place in the output.
 *
 * Limits: any size; ⌈log2 n⌉ steps for every n (no folding), but a final local rotation and
 * n·count scratch.
 * Cost: ⌈log2 n⌉ steps; (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain allgather --algorithm bruck -n 4`:
 * allgather/bruck: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: tmp[0]=in[0]
 *   rank 1  copy input: tmp[0]=in[0]
 *   rank 2  copy input: tmp[0]=in[0]
 *   rank 3  copy input: tmp[0]=in[0]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   out[1]  .       .       .       .
 *   out[2]  .       .       .       .
 *   out[3]  .       .       .       .
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  .       .       .       .
 *   tmp[2]  .       .       .       .
 *   tmp[3]  .       .       .       .
 *
 * step 1
 *   rank 0  recvCopySend block 1: tmp[0]->3 tmp[1]<-1
 *   rank 1  recvCopySend block 1: tmp[0]->0 tmp[1]<-2
 *   rank 2  recvCopySend block 1: tmp[0]->1 tmp[1]<-3
 *   rank 3  recvCopySend block 1: tmp[0]->2 tmp[1]<-0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   out[1]  .       .       .       .
 *   out[2]  .       .       .       .
 *   out[3]  .       .       .       .
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  [1]     [2]     [3]     [0]
 *   tmp[2]  .       .       .       .
 *   tmp[3]  .       .       .       .
 *
 * step 2
 *   rank 0  recvCopySend blocks 2..3: tmp[0:2]->2 tmp[2:4]<-2; rotate into place: out[0:4]=tmp[0:4]
 *   rank 1  recvCopySend blocks 2..3: tmp[0:2]->3 tmp[2:4]<-3; rotate into place: out[1:4]=tmp[0:3] out[0]=tmp[3]
 *   rank 2  recvCopySend blocks 2..3: tmp[0:2]->0 tmp[2:4]<-0; rotate into place: out[2:4]=tmp[0:2] out[0:2]=tmp[2:4]
 *   rank 3  recvCopySend blocks 2..3: tmp[0:2]->1 tmp[2:4]<-1; rotate into place: out[3]=tmp[0] out[0:3]=tmp[1:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  [1]     [2]     [3]     [0]
 *   tmp[2]  [2]     [3]     [0]     [1]
 *   tmp[3]  [3]     [0]     [1]     [2]
 *
 * cost: ⌈log2 n⌉ steps, (n-1) · count · s bytes sent per rank; here 2 steps, at most 3 elements sent by a rank
 */
import { copy, recv, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm, LocalOp, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { mod } from "../topology/ring.js";
import { chunksText } from "./recursive_doubling.js";

export const allgatherBruck: Algorithm = {
  collective: "allgather",
  name: "bruck",
  summary: "Bruck all-gather: ⌈log2 n⌉ steps for any n, then a local rotation.",
  limits: "any size; log latency without folding; n·count scratch and a final local rotation",
  cost: {
    stepsFormula: "⌈log2 n⌉",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (count === 0 ? 0 : Math.ceil(Math.log2(n))),
    sentElements: (n, count) => (n - 1) * count,
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : ctx.size * ctx.count),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size: n, count } = ctx;
    if (count === 0) return;
    const input = region("input", 0, count);
    if (n === 1) {
      if (!ctx.inPlace) yield step("copy input", [], [copy(region("output", 0, count), input)]);
      return;
    }
    const tmp = (block: number, blocks: number) => region("scratch", block * count, blocks * count);
    yield step("copy input", [], [copy(tmp(0, 1), input)]);
    for (let d = 1; d < n; d <<= 1) {
      const blocks = Math.min(d, n - d);
      yield step(`recvCopySend ${chunksText(d, d + blocks, "block")}`, [
        send(mod(rank - d, n), tmp(0, blocks)),
        recv(mod(rank + d, n), tmp(d, blocks)),
      ]);
    }
    // Block i holds rank (rank + i) mod n's chunk: blocks 0..n-rank-1 go to output[rank..n-1],
    // the rest wrap round to output[0..rank-1].
    const rotate: LocalOp[] = [copy(region("output", rank * count, (n - rank) * count), tmp(0, n - rank))];
    if (rank > 0) rotate.push(copy(region("output", 0, rank * count), tmp(n - rank, rank)));
    yield step("rotate into place", [], rotate);
  },
};
