/**
 * scatter/linear: the root sends every rank its block directly (Open MPI's
 * ompi_coll_base_scatter_intra_basic_linear, MPICH's MPIR_Scatter_intra_linear).
 *
 * The root posts all n-1 sends as one group and copies its own block into its output unless
 * it is already there (in place); every other rank receives once.
 *
 * Limits: any size and root; one step, but the root's link carries all (n-1)·count elements.
 * Cost: 1 step; (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain scatter --algorithm linear -n 4`:
 * scatter/linear: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  send every block: in[1]->1 in[2]->2 in[3]->3 out[0]=in[0]
 *   rank 1  recv own block: out[0]<-0
 *   rank 2  recv own block: out[0]<-0
 *   rank 3  recv own block: out[0]<-0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *
 * cost: 1 steps, (n-1) · count · s bytes sent per rank; here 1 steps, at most 3 elements sent by a rank
 */
import { copy, recv, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm } from "../../src/schedule/types.js";

export const linear: Algorithm = {
  collective: "scatter",
  name: "linear",
  summary: "The root sends every rank its block directly.",
  limits: "any size and root; one step, but the root sends all (n-1)·count elements",
  cost: {
    stepsFormula: "1",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (n === 1 || count === 0 ? 0 : 1),
    sentElements: (n, count) => (n - 1) * count,
  },
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    if (rank !== root) {
      yield step("recv own block", [recv(root, region("output", 0, count))]);
      return;
    }
    const own = ctx.inPlace ? [] : [copy(region("output", 0, count), region("input", root * count, count))];
    const sends = [];
    for (let peer = 0; peer < size; peer++) {
      if (peer !== root) sends.push(send(peer, region("input", peer * count, count)));
    }
    if (sends.length === 0 && own.length === 0) return;
    yield step(sends.length > 0 ? "send every block" : "copy own block", sends, own);
  },
};
