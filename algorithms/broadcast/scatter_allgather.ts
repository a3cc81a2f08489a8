/**
 * broadcast/scatter_allgather: van de Geijn's broadcast (MPICH's
 * MPIR_Bcast_intra_scatter_ring_allgather): a binomial scatter of the message in n chunks, then a
 * ring all-gather of the chunks.
 *
 * Chunk v (partition(count, n), uneven allowed) belongs to vrank v. The root sends each binomial
 * child its subtree's chunks, which are contiguous because chunks follow vrank order; then every
 * rank runs allgather/ring's ringAllGather over the chunks in vrank space, so each rank sends
 * about 2·count instead of ⌈log2 n⌉·count.
 *
 * Limits: any size and root; for large messages (bandwidth ≈ 2(n-1)/n · count); latency
 * (⌈log2 n⌉ + n - 1)·alpha; count < n leaves some chunks empty (zero-length messages).
 * Cost: ⌈log2 n⌉ + n - 1 steps; max over vranks v of (Σ chunks of v's subtree - c_v + count - c_(v+1 mod n)) · s
 * bytes sent per rank (≈ 2(n-1)/n · count · s).
 *
 * Step table (n = 4), from `cclab explain broadcast --algorithm scatter_allgather -n 4`:
 * broadcast/scatter_allgather: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: out[0:4]=in[0:4]
 *   rank 1  -
 *   rank 2  -
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     .       .       .
 *   out[1]  [0]     .       .       .
 *   out[2]  [0]     .       .       .
 *   out[3]  [0]     .       .       .
 *
 * step 1
 *   rank 0  send chunks of vrank 2's subtree: out[2:4]->2
 *   rank 1  recv chunks of vrank 1's subtree: out[1]<-0
 *   rank 2  recv chunks of vrank 2's subtree: out[2:4]<-0
 *   rank 3  recv chunks of vrank 3's subtree: out[3]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     .       .       .
 *   out[1]  [0]     [0]     .       .
 *   out[2]  [0]     .       [0]     .
 *   out[3]  [0]     .       [0]     [0]
 *
 * step 2
 *   rank 0  send chunks of vrank 1's subtree: out[1]->1
 *   rank 1  recvCopySend chunk 0: out[1]->2 out[0]<-0
 *   rank 2  send chunks of vrank 3's subtree: out[3]->3
 *   rank 3  recvCopySend chunk 2: out[3]->0 out[2]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     .       .
 *   out[1]  [0]     [0]     .       .
 *   out[2]  [0]     .       [0]     [0]
 *   out[3]  [0]     .       [0]     [0]
 *
 * step 3
 *   rank 0  recvCopySend chunk 3: out[0]->1 out[3]<-3
 *   rank 1  recvCopySend chunk 3: out[0]->2 out[3]<-0
 *   rank 2  recvCopySend chunk 1: out[2]->3 out[1]<-1
 *   rank 3  recvCopySend chunk 1: out[2]->0 out[1]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     .       .
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     .       [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * step 4
 *   rank 0  recvCopySend chunk 2: out[3]->1 out[2]<-3
 *   rank 1  recvCopySend chunk 2: out[3]->2 out[2]<-0
 *   rank 2  recvCopySend chunk 0: out[1]->3 out[0]<-1
 *   rank 3  recvCopySend chunk 0: out[1]->0 out[0]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * step 5
 *   rank 0  recvCopySend chunk 1: out[2]->1 out[1]<-3
 *   rank 1  -
 *   rank 2  recvCopySend chunk 3: out[0]->3 out[3]<-1
 *   rank 3  -
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [0]     [0]     [0]     [0]
 *   out[2]  [0]     [0]     [0]     [0]
 *   out[3]  [0]     [0]     [0]     [0]
 *
 * cost: ⌈log2 n⌉ + n - 1 steps, max over vranks v of (Σ chunks of v's subtree - c_v + count - c_(v+1 mod n)) · s ≈ 2(n-1)/n · count · s bytes sent per rank; here 5 steps, at most 6 elements sent by a rank
 */
import {
  type Chunk,
  copy,
  mapPeers,
  partition,
  rankOf,
  recv,
  region,
  send,
  step,
  sub,
  vrankOf,
} from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule } from "../../src/schedule/types.js";
import { ringAllGather } from "../allgather/ring.js";
import { binomialTree, ceilLog2, subtreeSize } from "../topology/binomial.js";

/** The chunks of vranks [first, first + span) as one region of buf. */
function range(buf: Region, chunks: readonly Chunk[], first: number, span: number): Region {
  const last = chunks[first + span - 1]!;
  return sub(buf, chunks[first]!.offset, last.offset + last.count - chunks[first]!.offset);
}

/** Binomial scatter in vrank space within one buffer: on exit vrank v's buf holds its subtree's chunks. */
export function* binomialScatterChunks(
  rank: number,
  size: number,
  root: number,
  buf: Region,
  chunks: readonly Chunk[],
): Schedule {
  const vrank = vrankOf(rank, root, size);
  const node = binomialTree(vrank, size);
  if (node.parent >= 0) {
    yield step(`recv chunks of vrank ${vrank}'s subtree`, [
      recv(rankOf(node.parent, root, size), range(buf, chunks, vrank, node.subtree)),
    ]);
  }
  for (const c of node.children) {
    yield step(`send chunks of vrank ${c}'s subtree`, [
      send(rankOf(c, root, size), range(buf, chunks, c, subtreeSize(c, size))),
    ]);
  }
}

/** Elements vrank v sends: its children's subtrees in the scatter, every chunk but chunk v+1 in the ring. */
function sentBy(v: number, n: number, chunks: readonly Chunk[], count: number): number {
  const span = subtreeSize(v, n);
  let subtree = 0;
  for (let u = v; u < v + span; u++) subtree += chunks[u]!.count;
  return subtree - chunks[v]!.count + count - chunks[(v + 1) % n]!.count;
}

export const scatterAllgather: Algorithm = {
  collective: "broadcast",
  name: "scatter_allgather",
  summary: "van de Geijn: binomial scatter of n chunks, then a ring all-gather of the chunks.",
  limits: "any size and root; for large messages; latency (⌈log2 n⌉ + n - 1)·alpha",
  cost: {
    stepsFormula: "⌈log2 n⌉ + n - 1",
    bytesFormula:
      "max over vranks v of (Σ chunks of v's subtree - c_v + count - c_(v+1 mod n)) · s ≈ 2(n-1)/n · count · s",
    steps: (n, count) => (count === 0 ? 0 : ceilLog2(n) + n - 1),
    sentElements: (n, count) => {
      if (n === 1 || count === 0) return 0;
      const chunks = partition(count, n);
      let most = 0;
      for (let v = 0; v < n; v++) most = Math.max(most, sentBy(v, n, chunks, count));
      return most;
    },
  },
  *schedule(ctx) {
    const { rank, size, root, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (rank === root && !ctx.inPlace) yield step("copy input", [], [copy(out, region("input", 0, count))]);
    if (size === 1) return;
    const chunks = partition(count, size);
    yield* binomialScatterChunks(rank, size, root, out, chunks);
    // The ring runs in vrank space, where chunk v is vrank v's.
    yield* mapPeers(ringAllGather(vrankOf(rank, root, size), size, out, chunks), (v) => rankOf(v, root, size));
  },
};
