/**
 * reduce/linear: every rank sends its whole input to the root, which reduces the contributions
 * in rank order (Open MPI's ompi_coll_base_reduce_intra_basic_linear, MPICH's reduce without a tree).
 *
 * The root receives one rank per step, in rank order, into a scratch slot and folds it into an
 * accumulator, so the result is ((x0 op x1) op x2) ... whatever the root: deterministic, like a
 * sequential loop. The accumulator is the output when the root is rank 0 (which holds x0 first)
 * and scratch otherwise, copied to the output at the end.
 *
 * Limits: any size and root; n-1 sequential steps at the root, which also does all n-1
 * reductions; scratch count (2·count at a root other than rank 0).
 * Cost: n-1 steps; count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain reduce --algorithm linear -n 4`:
 * reduce/linear: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recvReduce from 1: tmp[0:4]<-1 out[0:4]=in[0:4] out[0:4]+=tmp[0:4]
 *   rank 1  send: in[0:4]->0
 *   rank 2  send: in[0:4]->0
 *   rank 3  send: in[0:4]->0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0+1]
 *   out[1]  [0+1]
 *   out[2]  [0+1]
 *   out[3]  [0+1]
 *   tmp[0]  [1]
 *   tmp[1]  [1]
 *   tmp[2]  [1]
 *   tmp[3]  [1]
 *
 * step 2
 *   rank 0  recvReduce from 2: tmp[0:4]<-2 out[0:4]+=tmp[0:4]
 *   rank 1  -
 *   rank 2  -
 *   rank 3  -
 *           rank 0   rank 1   rank 2   rank 3
 *   out[0]  [0+1+2]
 *   out[1]  [0+1+2]
 *   out[2]  [0+1+2]
 *   out[3]  [0+1+2]
 *   tmp[0]  [2]
 *   tmp[1]  [2]
 *   tmp[2]  [2]
 *   tmp[3]  [2]
 *
 * step 3
 *   rank 0  recvReduce from 3: tmp[0:4]<-3 out[0:4]+=tmp[0:4]
 *   rank 1  -
 *   rank 2  -
 *   rank 3  -
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]
 *   out[1]  [0+1+2+3]
 *   out[2]  [0+1+2+3]
 *   out[3]  [0+1+2+3]
 *   tmp[0]  [3]
 *   tmp[1]  [3]
 *   tmp[2]  [3]
 *   tmp[3]  [3]
 *
 * cost: n-1 steps, count · s bytes sent per rank; here 3 steps, at most 4 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { copy, recv, reduce, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm, LocalOp, Step } from "../../src/schedule/types.js";

export const linear: Algorithm = {
  collective: "reduce",
  name: "linear",
  summary: "Every rank sends to the root, which reduces the contributions in rank order.",
  limits: "any size and root; n-1 sequential steps and all the reductions at the root",
  cost: {
    stepsFormula: "n-1",
    bytesFormula: "count · s",
    steps: (n, count) => (count === 0 ? 0 : n - 1),
    sentElements: (n, count) => (n === 1 ? 0 : count),
  },
  scratch: (ctx) => (ctx.rank !== ctx.root || ctx.size === 1 ? 0 : ctx.root === 0 ? ctx.count : 2 * ctx.count),
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    if (rank !== root) {
      yield step("send", [send(root, region("input", 0, count))]);
      return;
    }
    const input = region("input", 0, count);
    const output = region("output", 0, count);
    if (size === 1) {
      if (!ctx.inPlace) yield step("copy input", [], [copy(output, input)]);
      return;
    }
    // Root 0 accumulates in its output, starting from its own x0; any other root accumulates in
    // scratch starting from x0 as received, since its output may be its input (in place).
    const acc = root === 0 ? output : region("scratch", 0, count);
    const tmp = region("scratch", root === 0 ? 0 : count, count);
    const steps: { label: string; transfers: Step["transfers"]; local: LocalOp[] }[] = [];
    let started = false;
    for (let peer = 0; peer < size; peer++) {
      if (peer === root) {
        // The root's own contribution joins in its rank's turn.
        if (!started) {
          if (!ctx.inPlace) steps.push({ label: "copy input", transfers: [], local: [copy(acc, input)] });
        } else {
          steps[steps.length - 1]!.local.push(reduce(acc, input));
        }
      } else if (!started) {
        steps.push({ label: `recv from ${peer}`, transfers: [recv(peer, acc)], local: [] });
      } else {
        steps.push({ label: `recvReduce from ${peer}`, transfers: [recv(peer, tmp)], local: [reduce(acc, tmp)] });
      }
      started = true;
    }
    if (acc !== output) steps[steps.length - 1]!.local.push(copy(output, acc));
    invariant(steps.length > 0, "reduce/linear: the root has steps");
    // Root 0 out of place copies its input in a step of its own; fold it into the first receive.
    if (steps[0]!.transfers.length === 0 && steps.length > 1) {
      const [head, next] = steps;
      steps.splice(0, 2, { ...next!, local: [...head!.local, ...next!.local] });
    }
    for (const s of steps) yield step(s.label, s.transfers, s.local);
  },
};
