/**
 * scatter/bine: Scatter down a Bine tree; each child gets its subtree's blocks, a run of nearby
 * ranks, in one message.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency; the root still sends (n-1)·count; n not a power of
 *         two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs hangs below its even
 *         neighbour (cclab's choice).
 * Cost:   ⌈log2 n⌉ steps; (n-1)·count elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its Bine tree with contiguous subtrees, as the authors' scatter_bine
 *         halves its run of blocks (HLC-Lab/pico, libbine/libbine_scatter.c).
 *
 * Step table: `cclab explain scatter --algorithm bine -n 4`
 * (kept current in test/golden/explain/scatter/bine.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { bineTree } from "../lib/bine.js";
import { binomialScatterBlocks } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const bine = defineAlgorithm({
  collective: "scatter",
  name: "bine",
  summary: "Scatter down a Bine tree; each child gets its subtree's blocks, a run of nearby ranks, in one message.",
  limits:
    "any size and root; ⌈log2 n⌉ latency; the root still sends (n-1)·count; n not a power of two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs hangs below its even neighbour (cclab's choice)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its Bine tree with contiguous subtrees, as the authors' scatter_bine halves its run of blocks (HLC-Lab/pico, libbine/libbine_scatter.c)",
  cost: { steps: f("⌈log2 n⌉", (n) => ceilLog2(n)), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  schedule: ({ rank, size, root, count }, mem) =>
    binomialScatterBlocks({
      rank,
      size,
      root,
      counts: Array.from({ length: size }, () => count),
      all: mem.input,
      own: mem.output,
      scratch: mem.scratch,
      tree: bineTree,
    }),
});
