/**
 * reduce/bine: Reduce up a Bine tree (the broadcast's tree reversed): each rank folds in its
 * children's partial results, nearest first.
 *
 * Limits: any size and root, commutative ops; ⌈log2 n⌉ latency; every round carries the whole
 *         message; n not a power of two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs
 *         hangs below its even neighbour (cclab's choice; the authors' trees refuse such n).
 * Cost:   ⌈log2 n⌉ steps; count elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its Bine tree, walked leaves to root as the authors' reduce_bine_lat
 *         does (HLC-Lab/pico, libbine/libbine_reduce.c).
 *
 * Step table: `cclab explain reduce --algorithm bine -n 4`
 * (kept current in test/golden/explain/reduce/bine.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { bineTree } from "../lib/bine.js";
import { binomialReduce } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const bine = defineAlgorithm({
  collective: "reduce",
  name: "bine",
  summary:
    "Reduce up a Bine tree (the broadcast's tree reversed): each rank folds in its children's partial results, nearest first.",
  limits:
    "any size and root, commutative ops; ⌈log2 n⌉ latency; every round carries the whole message; n not a power of two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs hangs below its even neighbour (cclab's choice; the authors' trees refuse such n)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its Bine tree, walked leaves to root as the authors' reduce_bine_lat does (HLC-Lab/pico, libbine/libbine_reduce.c)",
  cost: { steps: f("⌈log2 n⌉", (n) => ceilLog2(n)), sent: f("count", (_n, count) => count) },
  // In vrank space each rank receives its children's partial results, smallest subtree first,
  // folds each into an accumulator (the output at the root, scratch elsewhere: no input is
  // written) and sends it to its parent; leaves send their input as it is.
  schedule: ({ rank, size, root }, mem) => binomialReduce(rank, size, root, mem, bineTree),
});
