/**
 * reducescatter/ring: Ring reduce-scatter: n-1 recvReduceSend steps round the ring.
 *
 * Limits: any size; bandwidth-optimal; latency grows as n-1; scratch 2·count (3·count in place).
 * Cost:   n-1 steps; (n-1)·count elements sent per rank.
 * Source: MPICH reduce_scatter ring; NCCL's ring reduce-scatter.
 *
 * Step table: `cclab explain reducescatter --algorithm ring -n 4`
 * (kept current in test/golden/explain/reducescatter/ring.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f } from "../../src/schedule/dsl.js";
import { blocks, ringReduceScatter } from "../lib/ring.js";

export const ring = defineAlgorithm({
  collective: "reducescatter",
  name: "ring",
  summary: "Ring reduce-scatter: n-1 recvReduceSend steps round the ring.",
  limits: "any size; bandwidth-optimal; latency grows as n-1; scratch 2·count (3·count in place)",
  source: "MPICH reduce_scatter ring; NCCL's ring reduce-scatter",
  cost: { steps: f("n-1", (n) => n - 1), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  schedule({ rank, size, count, inPlace }, mem) {
    // A partial sum lives one step: reduced at step k, sent at step k+1. Two scratch slots take
    // turns; the last step reduces this rank's own chunk straight into the output. Out of place
    // each step receives straight into the slot (or output) its sum goes to; in place the
    // output is the input's own block, so the last step receives into a scratch chunk first.
    const slots = [mem.scratch(count), mem.scratch(count)];
    const tmp = inPlace ? mem.scratch(count) : undefined;
    return ringReduceScatter(rank, size, {
      chunks: blocks(size, count),
      input: mem.input,
      acc: (k) => (k === size - 2 ? mem.output : slots[k % 2]!),
      tmp: tmp ? () => tmp : "acc",
    });
  },
});
