/**
 * broadcast/chain: pipelined chain broadcast root -> root+1 -> ... -> root-1 (Open MPI's
 * ompi_coll_base_bcast_intra_chain with one chain, the shape of NCCL's ring broadcast).
 *
 * The message is cut into segments of ctx.segment elements. The root sends one segment per
 * step; every other rank receives segment k while forwarding segment k-1 (recvCopySend), so
 * after the pipeline fills every link is busy and the chain's length costs only n-2 extra steps.
 *
 * Limits: any size and root; bandwidth-optimal for large messages (each rank sends count once),
 * latency (segments + n - 2)·alpha, so small messages prefer binomial.
 * Cost: S + 1 steps (S = ⌈count / segment⌉; S for n = 2); count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain broadcast --algorithm chain -n 4`:
 * broadcast/chain: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  send segment 0: in[0]->1 out[0:4]=in[0:4]
 *   rank 1  recv segment 0: out[0]<-0
 *   rank 2  recv segment 0: out[0]<-1
 *   rank 3  recv segment 0: out[0]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     .       .       .
 *   out[2]  [0]     .       .       .
 *   out[3]  [0]     .       .       .
 *
 * step 2
 *   rank 0  send segment 1: in[1]->1
 *   rank 1  recvCopySend segment 1: out[1]<-0 out[0]->2
 *   rank 2  recvCopySend segment 1: out[1]<-1 out[0]->3
 *   rank 3  recv segment 1: out[1]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     .       .       .
 *   out[3]  [0]     .       .       .
 *
 * step 3
 *   rank 0  send segment 2: in[2]->1
 *   rank 1  recvCopySend segment 2: out[2]<-0 out[1]->2
 *   rank 2  recvCopySend segment 2: out[2]<-1 out[1]->3
 *   rank 3  recv segment 2: out[2]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     .       .       .
 *
 * step 4
 *   rank 0  send segment 3: in[3]->1
 *   rank 1  recvCopySend segment 3: out[3]<-0 out[2]->2
 *   rank 2  recvCopySend segment 3: out[3]<-1 out[2]->3
 *   rank 3  recv segment 3: out[3]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * step 5
 *   rank 0  -
 *   rank 1  send segment 3: out[3]->2
 *   rank 2  send segment 3: out[3]->3
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * cost: S + 1 (S = ⌈count / segment⌉; S for n = 2) steps, count · s bytes sent per rank; here 5 steps, at most 4 elements sent by a rank
 */
import { copy, rankOf, recv, region, segments, send, step, sub, vrankOf } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule } from "../../src/schedule/types.js";

/** The chain broadcast of `buf` in segments; the root sends from `from` (default `buf`). */
export function* chainBroadcast(
  rank: number,
  size: number,
  root: number,
  buf: Region,
  segment: number,
  from: Region = buf,
): Schedule {
  const vrank = vrankOf(rank, root, size);
  const segs = segments(buf.count, segment);
  const prev = rankOf(vrank - 1, root, size);
  const next = rankOf(vrank + 1, root, size);
  const last = vrank === size - 1;
  if (vrank === 0) {
    for (const [k, s] of segs.entries()) yield step(`send segment ${k}`, [send(next, sub(from, s.offset, s.count))]);
    return;
  }
  for (let k = 0; k <= segs.length; k++) {
    const transfers = [];
    const r = segs[k];
    const f = segs[k - 1];
    if (r) transfers.push(recv(prev, sub(buf, r.offset, r.count)));
    if (f && !last) transfers.push(send(next, sub(buf, f.offset, f.count)));
    if (transfers.length === 0) continue;
    const label = r && f && !last ? `recvCopySend segment ${k}` : r ? `recv segment ${k}` : `send segment ${k - 1}`;
    yield step(label, transfers);
  }
}

export const chain: Algorithm = {
  collective: "broadcast",
  name: "chain",
  summary: "Pipelined chain: each rank receives segment k while forwarding segment k-1.",
  limits: "any size and root; bandwidth-optimal for large messages; latency (S + n - 2)·alpha",
  cost: {
    stepsFormula: "S + 1 (S = ⌈count / segment⌉; S for n = 2)",
    bytesFormula: "count · s",
    steps: (n, count, segment) => {
      if (n === 1 || count === 0) return 0;
      const s = Math.ceil(count / Math.max(1, segment));
      return n === 2 ? s : s + 1;
    },
    sentElements: (n, count) => (n === 1 ? 0 : count),
  },
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    const own = rank === root && !ctx.inPlace ? [copy(out, region("input", 0, count))] : [];
    if (size === 1) {
      if (own.length > 0) yield step("copy input", [], own);
      return;
    }
    let first = true;
    for (const s of chainBroadcast(
      rank,
      size,
      root,
      out,
      ctx.segment,
      own.length > 0 ? region("input", 0, count) : out,
    )) {
      yield first ? { ...s, local: [...s.local, ...own] } : s;
      first = false;
    }
  },
};
