/**
 * broadcast/scatter_allgather: van de Geijn: binomial scatter of n chunks, then a ring all-gather
 * of the chunks.
 *
 * Limits: any size and root; for large messages (≈ 2·count sent per rank); latency (⌈log2 n⌉ + n -
 *         1)·alpha.
 * Cost:   ⌈log2 n⌉ + n - 1 steps; max over vranks v of (subtree(v) - c_v + count - c_(v+1)) ≈
 *         2(n-1)/n·count elements sent per rank.
 * Source: MPICH MPIR_Bcast_intra_scatter_ring_allgather.
 *
 * Step table: `cclab explain broadcast --algorithm scatter_allgather -n 4`
 * (kept current in test/golden/explain/broadcast/scatter_allgather.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { maxOf } from "../../src/core/extent.js";
import { defineAlgorithm, f, mapPeers, partition, rankOf, vrankOf } from "../../src/schedule/dsl.js";
import { binomialScatterChunks } from "../lib/binomial.js";
import { ringAllGather } from "../lib/ring.js";
import { ceilLog2, subtreeSize } from "../topology/binomial.js";

/** Elements vrank v sends: its children's subtrees in the scatter, every chunk but chunk v+1 in the ring. */
function sentBy(v: number, n: number, count: number): number {
  const c = partition(count, n).map((x) => x.count);
  let subtree = 0;
  for (let u = v; u < v + subtreeSize(v, n); u++) subtree += c[u] as number;
  return subtree - (c[v] as number) + count - (c[(v + 1) % n] as number);
}

export const scatterAllgather = defineAlgorithm({
  collective: "broadcast",
  name: "scatter_allgather",
  summary: "van de Geijn: binomial scatter of n chunks, then a ring all-gather of the chunks.",
  limits: "any size and root; for large messages (≈ 2·count sent per rank); latency (⌈log2 n⌉ + n - 1)·alpha",
  source: "MPICH MPIR_Bcast_intra_scatter_ring_allgather",
  form: "in-place",
  cost: {
    steps: f("⌈log2 n⌉ + n - 1", (n) => ceilLog2(n) + n - 1),
    sent: f("max over vranks v of (subtree(v) - c_v + count - c_(v+1)) ≈ 2(n-1)/n·count", (n, count) =>
      maxOf(Array.from({ length: n }, (_, v) => sentBy(v, n, count))),
    ),
    // count < n leaves chunks empty, and ring steps with nothing to move are left out.
    exact: (n, count) => count >= n,
  },
  *schedule({ rank, size, root, count }, { output }) {
    // Chunk v belongs to vrank v: the root sends each binomial child its subtree's chunks, then
    // the ring runs in vrank space.
    const chunks = partition(count, size);
    yield* binomialScatterChunks(rank, size, root, output, chunks);
    yield* mapPeers(ringAllGather(vrankOf(rank, root, size), size, output, chunks), (v) => rankOf(v, root, size));
  },
});
