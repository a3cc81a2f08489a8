/**
 * broadcast/bine: Broadcast down a Bine tree: a binomial tree whose edges are Swing's short hops r
 * ± ρ(s), the farthest first, so each subtree is a run of nearby ranks.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency; every round carries the whole message; n not a power
 *         of two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs hangs below its even
 *         neighbour (cclab's choice; the authors' trees refuse such n).
 * Cost:   ⌈log2 n⌉ steps; ⌈log2 n⌉·count elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its distance-halving Bine tree, as the authors' bine_bcast_small builds
 *         it (HLC-Lab/bine-trees, src/bcast.c).
 *
 * Step table: `cclab explain broadcast --algorithm bine -n 4`
 * (kept current in test/golden/explain/broadcast/bine.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { bineTree } from "../lib/bine.js";
import { binomialBroadcast } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const bine = defineAlgorithm({
  collective: "broadcast",
  name: "bine",
  summary:
    "Broadcast down a Bine tree: a binomial tree whose edges are Swing's short hops r ± ρ(s), the farthest first, so each subtree is a run of nearby ranks.",
  limits:
    "any size and root; ⌈log2 n⌉ latency; every round carries the whole message; n not a power of two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs hangs below its even neighbour (cclab's choice; the authors' trees refuse such n)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its distance-halving Bine tree, as the authors' bine_bcast_small builds it (HLC-Lab/bine-trees, src/bcast.c)",
  form: "in-place",
  cost: {
    steps: f("⌈log2 n⌉", (n) => ceilLog2(n)),
    sent: f("⌈log2 n⌉·count", (n, count) => ceilLog2(n) * count),
  },
  // In vrank space a rank receives the message from its parent, then sends it to each child,
  // farthest (largest subtree) first.
  schedule: ({ rank, size, root }, { output }) => binomialBroadcast(rank, size, root, output, output, bineTree),
});
