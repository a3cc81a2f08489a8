/**
 * allreduce/reduce_broadcast: the parameter-server all-reduce: every rank sends its data to
 * rank 0, which reduces it and sends the result back to everyone (seed 001's version; Open
 * MPI's ompi_coll_base_allreduce_intra_basic_linear is reduce + bcast the same way).
 *
 * Composed of two algorithms' schedules: reduce/linear to rank 0 (it receives the ranks'
 * contributions one at a time in rank order and reduces each into its output as it lands, Open
 * MPI's basic linear reduce), then broadcast/linear from rank 0 in place (all n-1 sends of the
 * result in one group, basic linear bcast). Every other rank sends once and receives once.
 *
 * Limits: any size; rank 0's link carries 2(n-1)·count, so it is the bottleneck: fine for a
 * handful of ranks or tiny messages, the worst choice at scale.
 * Cost: n steps (0 for n = 1); (n-1) · count · s bytes sent by rank 0.
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm reduce_broadcast -n 4`:
 * allreduce/reduce_broadcast: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  reduce: recvReduce from 1: tmp[0:4]<-1 out[0:4]=in[0:4] out[0:4]+=tmp[0:4]
 *   rank 1  reduce: send: in[0:4]->0
 *   rank 2  reduce: send: in[0:4]->0
 *   rank 3  reduce: send: in[0:4]->0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0+1]   .       .       .
 *   out[1]  [0+1]   .       .       .
 *   out[2]  [0+1]   .       .       .
 *   out[3]  [0+1]   .       .       .
 *   tmp[0]  [1]
 *   tmp[1]  [1]
 *   tmp[2]  [1]
 *   tmp[3]  [1]
 *
 * step 2
 *   rank 0  reduce: recvReduce from 2: tmp[0:4]<-2 out[0:4]+=tmp[0:4]
 *   rank 1  broadcast: recv: out[0:4]<-0
 *   rank 2  broadcast: recv: out[0:4]<-0
 *   rank 3  broadcast: recv: out[0:4]<-0
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2]    [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2]    [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2]    [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2]    [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [2]
 *   tmp[1]  [2]
 *   tmp[2]  [2]
 *   tmp[3]  [2]
 *
 * step 3
 *   rank 0  reduce: recvReduce from 3: tmp[0:4]<-3 out[0:4]+=tmp[0:4]
 *   rank 1  -
 *   rank 2  -
 *   rank 3  -
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [3]
 *   tmp[1]  [3]
 *   tmp[2]  [3]
 *   tmp[3]  [3]
 *
 * step 4
 *   rank 0  broadcast: send to every rank: out[0:4]->1 out[0:4]->2 out[0:4]->3
 *   rank 1  -
 *   rank 2  -
 *   rank 3  -
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [3]
 *   tmp[1]  [3]
 *   tmp[2]  [3]
 *   tmp[3]  [3]
 *
 * cost: n steps, (n-1) · count · s bytes sent per rank; here 4 steps, at most 12 elements sent by a rank
 */
import { copy, region, remap, step } from "../../src/schedule/build.js";
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { linear as linearBroadcast } from "../broadcast/linear.js";
import { linear as linearReduce } from "../reduce/linear.js";

const SERVER = 0;

/** The reduce half: rank 0's output gets the sum; allreduce's buffers hold reduce's at every rank. */
const reduceCtx = (ctx: ScheduleContext): ScheduleContext => ({ ...ctx, collective: "reduce", root: SERVER });

/** The broadcast half, in place at rank 0: the sum it sends is already in its output. */
const broadcastCtx = (ctx: ScheduleContext): ScheduleContext => ({
  ...ctx,
  collective: "broadcast",
  root: SERVER,
  inPlace: true,
});

export const reduceBroadcastAllreduce: Algorithm = {
  collective: "allreduce",
  name: "reduce_broadcast",
  summary: "Parameter server: reduce everything at rank 0 one rank at a time, then send the result to all.",
  limits: "any size; rank 0 moves 2(n-1)·count, so it only suits few ranks or tiny messages",
  cost: {
    stepsFormula: "n",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (n === 1 || count === 0 ? 0 : n),
    sentElements: (n, count) => (n - 1) * count,
  },
  scratch: (ctx) => linearReduce.scratch?.(reduceCtx(ctx)) ?? 0,
  *schedule(ctx: ScheduleContext): Schedule {
    const { size, count, inPlace } = ctx;
    if (count === 0) return;
    if (size === 1) {
      if (!inPlace) yield step("copy", [], [copy(region("output", 0, count), region("input", 0, count))]);
      return;
    }
    yield* remap(linearReduce.schedule(reduceCtx(ctx)), {}, "reduce: ");
    // Broadcast's root sends its 'input'; here that is the output holding the sum.
    yield* remap(linearBroadcast.schedule(broadcastCtx(ctx)), { input: { buf: "output", offset: 0 } }, "broadcast: ");
  },
};
