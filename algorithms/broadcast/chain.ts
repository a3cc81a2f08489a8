/**
 * broadcast/chain: Pipelined chain root -> root+1 -> ...: each rank receives segment k while
 * forwarding segment k-1.
 *
 * Limits: any size and root; bandwidth-optimal for large messages; latency (S + n - 2)·alpha.
 * Cost:   S + 1 (S = ⌈count/segment⌉; S for n = 2) steps; count elements sent per rank.
 * Source: Open MPI ompi_coll_base_bcast_intra_chain with one chain; the shape of NCCL's ring
 *         broadcast.
 *
 * Step table: `cclab explain broadcast --algorithm chain -n 4`
 * (kept current in test/golden/explain/broadcast/chain.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import {
  chunkOf,
  defineAlgorithm,
  f,
  rankOf,
  recv,
  segments,
  send,
  step,
  type Transfer,
  vrankOf,
} from "../../src/schedule/dsl.js";

const nsegments = (count: number, segment: number) => Math.ceil(count / segment);

export const chain = defineAlgorithm({
  collective: "broadcast",
  name: "chain",
  summary: "Pipelined chain root -> root+1 -> ...: each rank receives segment k while forwarding segment k-1.",
  limits: "any size and root; bandwidth-optimal for large messages; latency (S + n - 2)·alpha",
  source: "Open MPI ompi_coll_base_bcast_intra_chain with one chain; the shape of NCCL's ring broadcast",
  form: "in-place",
  cost: {
    steps: f("S + 1 (S = ⌈count/segment⌉; S for n = 2)", (n, count, seg) => nsegments(count, seg) + (n === 2 ? 0 : 1)),
    sent: f("count", (_n, count) => count),
  },
  *schedule({ rank, size, root, segment }, { output }) {
    const vrank = vrankOf(rank, root, size);
    const segs = segments(output.count, segment);
    const prev = rankOf(vrank - 1, root, size);
    const next = rankOf(vrank + 1, root, size);
    const last = vrank === size - 1;
    for (let k = 0; k <= segs.length; k++) {
      const transfers: Transfer[] = [];
      const r = vrank > 0 ? segs[k] : undefined;
      const s = vrank === 0 ? segs[k] : !last ? segs[k - 1] : undefined;
      if (r) transfers.push(recv(prev, chunkOf(output, r)));
      if (s) transfers.push(send(next, chunkOf(output, s)));
      if (transfers.length === 0) continue;
      const label =
        r && s ? `recvCopySend segment ${k}` : r ? `recv segment ${k}` : `send segment ${vrank === 0 ? k : k - 1}`;
      yield step(label, transfers);
    }
  },
});
