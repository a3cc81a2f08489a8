/**
 * gather/linear: every rank sends its block straight to the root (Open MPI's
 * ompi_coll_base_gather_intra_basic_linear, MPICH's MPIR_Gather_intra_linear).
 *
 * The root posts all n-1 receives as one group, each into its sender's place in the output,
 * and copies its own block unless it is already there (in place).
 *
 * Limits: any size and root; one step, but the root's link carries all (n-1)·count elements
 * and it handles n-1 messages at once.
 * Cost: 1 step; count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain gather --algorithm linear -n 4`:
 * gather/linear: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  recv all blocks: out[1]<-1 out[2]<-2 out[3]<-3 out[0]=in[0]
 *   rank 1  send own block: in[0]->0
 *   rank 2  send own block: in[0]->0
 *   rank 3  send own block: in[0]->0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]
 *   out[1]  [1]
 *   out[2]  [2]
 *   out[3]  [3]
 *
 * cost: 1 steps, count · s bytes sent per rank; here 1 steps, at most 1 elements sent by a rank
 */
import { copy, recv, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm } from "../../src/schedule/types.js";

export const linear: Algorithm = {
  collective: "gather",
  name: "linear",
  summary: "Every rank sends its block straight to the root.",
  limits: "any size and root; one step, but all n-1 messages converge on the root",
  cost: {
    stepsFormula: "1",
    bytesFormula: "count · s",
    steps: (n, count) => (n === 1 || count === 0 ? 0 : 1),
    sentElements: (n, count) => (n === 1 ? 0 : count),
  },
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    if (rank !== root) {
      yield step("send own block", [send(root, region("input", 0, count))]);
      return;
    }
    const mine = region("output", root * count, count);
    const own = ctx.inPlace ? [] : [copy(mine, region("input", 0, count))];
    const recvs = [];
    for (let peer = 0; peer < size; peer++) {
      if (peer !== root) recvs.push(recv(peer, region("output", peer * count, count)));
    }
    if (recvs.length === 0 && own.length === 0) return;
    yield step(recvs.length > 0 ? "recv all blocks" : "copy own block", recvs, own);
  },
};
