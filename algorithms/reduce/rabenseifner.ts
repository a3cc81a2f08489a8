/**
 * reduce/rabenseifner: Reduce-scatter (ring) then a binomial gather of the reduced chunks to the
 * root.
 *
 * Limits: any size and root; for large messages (≈ 2·count sent per rank); latency (n - 1 + ⌈log2
 *         n⌉)·alpha.
 * Cost:   n - 1 + ⌈log2 n⌉ steps; max over vranks v of (count - c_v + Σ chunks of v's subtree, v >
 *         0) ≈ 2(n-1)/n·count elements sent per rank.
 * Source: MPICH MPIR_Reduce_intra_reduce_scatter_gather (with a ring reduce-scatter, for any n).
 *
 * Step table: `cclab explain reduce --algorithm rabenseifner -n 4`
 * (kept current in test/golden/explain/reduce/rabenseifner.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { chunkOf, defineAlgorithm, f, mapPeers, partition, rankOf, vrankOf } from "../../src/schedule/dsl.js";
import { binomialGatherBlocks } from "../lib/binomial.js";
import { ringReduceScatter } from "../lib/ring.js";
import { ceilLog2, subtreeSize } from "../topology/binomial.js";

/** The ring sends every chunk but the vrank's own; the gather sends the vrank's subtree. */
function mostSent(n: number, count: number): number {
  const c = partition(count, n).map((x) => x.count);
  let most = count - (c[0] as number);
  for (let v = 1; v < n; v++) {
    let subtree = 0;
    for (let u = v; u < v + subtreeSize(v, n); u++) subtree += c[u] as number;
    most = Math.max(most, count - (c[v] as number) + subtree);
  }
  return most;
}

export const rabenseifner = defineAlgorithm({
  collective: "reduce",
  name: "rabenseifner",
  summary: "Reduce-scatter (ring) then a binomial gather of the reduced chunks to the root.",
  limits: "any size and root; for large messages (≈ 2·count sent per rank); latency (n - 1 + ⌈log2 n⌉)·alpha",
  source: "MPICH MPIR_Reduce_intra_reduce_scatter_gather (with a ring reduce-scatter, for any n)",
  cost: {
    steps: f("n - 1 + ⌈log2 n⌉", (n) => n - 1 + ceilLog2(n)),
    sent: f("max over vranks v of (count - c_v + Σ chunks of v's subtree, v > 0) ≈ 2(n-1)/n·count", mostSent),
    // count < n leaves chunks empty, and ring steps with nothing to move are left out.
    exact: (n, count) => count >= n,
  },
  *schedule({ rank, size, root, count, inPlace }, mem) {
    // Both phases run in vrank space with chunk v belonging to vrank v, so the gather's root is
    // vrank 0, no subtree wraps, and the cost is the same for every root.
    const chunks = partition(count, size);
    const vrank = vrankOf(rank, root, size);
    const toRank = (v: number) => rankOf(v, root, size);
    const acc = rank === root ? mem.output : mem.scratch(count);
    // A chunk arrives where its sum goes, unless that is the input itself (the root in place):
    // then in a scratch chunk (chunk 0, the largest: partition gives the first count % n one more).
    const tmp = inPlace && rank === root ? mem.scratch(chunks[0]!.count) : undefined;
    yield* mapPeers(
      ringReduceScatter(vrank, size, {
        chunks,
        input: mem.input,
        acc: (_k, j) => chunkOf(acc, chunks[j]!),
        tmp: tmp ? () => tmp : "acc",
      }),
      toRank,
    );
    const gather = binomialGatherBlocks({
      rank: vrank,
      size,
      root: 0,
      counts: chunks.map((c) => c.count),
      own: chunkOf(acc, chunks[vrank]!),
      // Only the gather's root (this call's root) assembles blocks, into acc: its output.
      all: acc,
      scratch: mem.scratch,
    });
    yield* mapPeers(gather, toRank);
  },
});
