/**
 * gather/bine: Gather up a Bine tree; each subtree is a run of nearby ranks, forwarded whole in one
 * message, so the big messages travel the short hops.
 *
 * Limits: any size and root; ⌈log2 n⌉ latency; inner ranks forward up to about half the data; n not
 *         a power of two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs hangs below its
 *         even neighbour (cclab's choice).
 * Cost:   ⌈log2 n⌉ steps; largest subtree below the root·count elements sent per rank.
 * Source: De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication
 *         Locality (SC'25), its Bine tree with contiguous subtrees, as the authors' gather_bine
 *         extends its run of blocks up and down in turn (HLC-Lab/pico, libbine/libbine_gather.c).
 *
 * Step table: `cclab explain gather --algorithm bine -n 4`
 * (kept current in test/golden/explain/gather/bine.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { bineLargestSubtree, bineTree } from "../lib/bine.js";
import { binomialGatherBlocks } from "../lib/binomial.js";
import { ceilLog2 } from "../topology/binomial.js";

export const bine = defineAlgorithm({
  collective: "gather",
  name: "bine",
  summary:
    "Gather up a Bine tree; each subtree is a run of nearby ranks, forwarded whole in one message, so the big messages travel the short hops.",
  limits:
    "any size and root; ⌈log2 n⌉ latency; inner ranks forward up to about half the data; n not a power of two: the odd rank of each of the first n - 2^⌊log2 n⌋ pairs hangs below its even neighbour (cclab's choice)",
  source:
    "De Sensi et al., Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality (SC'25), its Bine tree with contiguous subtrees, as the authors' gather_bine extends its run of blocks up and down in turn (HLC-Lab/pico, libbine/libbine_gather.c)",
  form: "in-place",
  cost: {
    steps: f("⌈log2 n⌉", (n) => ceilLog2(n)),
    sent: f("largest subtree below the root·count", (n, count) => bineLargestSubtree(n) * count),
  },
  schedule: ({ rank, size, root, count }, mem) =>
    binomialGatherBlocks({
      rank,
      size,
      root,
      counts: Array.from({ length: size }, () => count),
      own: mem.input,
      all: mem.output,
      scratch: mem.scratch,
      tree: bineTree,
    }),
});
