/**
 * broadcast/linear: the root sends the whole message to every other rank (Open MPI's
 * ompi_coll_base_bcast_intra_basic_linear: isend to each, then waitall).
 *
 * The root posts its n-1 sends as one group; every other rank receives once into its output.
 * Out of place the root also copies its input to its output.
 *
 * Limits: any size and root; one step, but the root sends (n-1)·count, so it only suits
 * small n or small messages.
 * Cost: 1 step; (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain broadcast --algorithm linear -n 4`:
 * broadcast/linear: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  send to every rank: in[0:4]->1 in[0:4]->2 in[0:4]->3 out[0:4]=in[0:4]
 *   rank 1  recv: out[0:4]<-0
 *   rank 2  recv: out[0:4]<-0
 *   rank 3  recv: out[0:4]<-0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * cost: 1 steps, (n-1) · count · s bytes sent per rank; here 1 steps, at most 12 elements sent by a rank
 */
import { copy, recv, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm } from "../../src/schedule/types.js";

export const linear: Algorithm = {
  collective: "broadcast",
  name: "linear",
  summary: "The root sends the whole message to every other rank.",
  limits: "any size and root; one step, but the root sends (n-1)·count",
  cost: {
    stepsFormula: "1",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (n === 1 || count === 0 ? 0 : 1),
    sentElements: (n, count) => (n - 1) * count,
  },
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (rank !== root) {
      yield step("recv", [recv(root, out)]);
      return;
    }
    const own = ctx.inPlace ? [] : [copy(out, region("input", 0, count))];
    const sends = [];
    for (let peer = 0; peer < size; peer++) if (peer !== root) sends.push(send(peer, region("input", 0, count)));
    if (sends.length === 0 && own.length === 0) return;
    yield step(sends.length > 0 ? "send to every rank" : "copy input", sends, own);
  },
};
