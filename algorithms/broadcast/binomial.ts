/**
 * broadcast/binomial: broadcast down a binomial tree (MPICH's MPIR_Bcast_intra_binomial,
 * Open MPI's ompi_coll_base_bcast_intra_binomial without segmentation).
 *
 * In vrank space (the root is vrank 0) a rank receives the whole message from its parent, then
 * sends it to each child, largest subtree first, so the set of ranks holding the message
 * doubles every round.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency, but every round moves the whole message, so
 * large messages prefer scatter_allgather or chain.
 * Cost: ⌈log2 n⌉ steps; ⌈log2 n⌉ · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain broadcast --algorithm binomial -n 4`:
 * broadcast/binomial: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  send to vrank 2: in[0:4]->2 out[0:4]=in[0:4]
 *   rank 1  recv: out[0:4]<-0
 *   rank 2  recv: out[0:4]<-0
 *   rank 3  recv: out[0:4]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * step 2
 *   rank 0  send to vrank 1: in[0:4]->1
 *   rank 1  -
 *   rank 2  send to vrank 3: out[0:4]->3
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * cost: ⌈log2 n⌉ steps, ⌈log2 n⌉ · count · s bytes sent per rank; here 2 steps, at most 8 elements sent by a rank
 */
import { copy, rankOf, recv, region, send, step, vrankOf } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule } from "../../src/schedule/types.js";
import { binomialTree, ceilLog2 } from "../topology/binomial.js";

/**
 * The binomial broadcast of `buf` from root, reusable: on entry the root's `buf` holds the
 * message (`from` may name another region at the root to send from), on exit everyone's does.
 */
export function* binomialBroadcast(
  rank: number,
  size: number,
  root: number,
  buf: Region,
  from: Region = buf,
): Schedule {
  const node = binomialTree(vrankOf(rank, root, size), size);
  const src = node.parent < 0 ? from : buf;
  if (node.parent >= 0) yield step("recv", [recv(rankOf(node.parent, root, size), buf)]);
  for (const c of node.children) yield step(`send to vrank ${c}`, [send(rankOf(c, root, size), src)]);
}

export const binomial: Algorithm = {
  collective: "broadcast",
  name: "binomial",
  summary: "Broadcast down a binomial tree: the ranks holding the message double every round.",
  limits: "any size and root; ⌈log2 n⌉ latency; every round carries the whole message",
  cost: {
    stepsFormula: "⌈log2 n⌉",
    bytesFormula: "⌈log2 n⌉ · count · s",
    steps: (n, count) => (count === 0 ? 0 : ceilLog2(n)),
    sentElements: (n, count) => ceilLog2(n) * count,
  },
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (rank === root && !ctx.inPlace) {
      // Send from the input and copy it to the output alongside: the first send's step does both.
      const steps = [...binomialBroadcast(rank, size, root, out, region("input", 0, count))];
      const own = copy(out, region("input", 0, count));
      if (steps.length === 0) {
        yield step("copy input", [], [own]);
        return;
      }
      const [first, ...rest] = steps;
      yield { ...first!, local: [...first!.local, own] };
      yield* rest;
      return;
    }
    yield* binomialBroadcast(rank, size, root, out);
  },
};
