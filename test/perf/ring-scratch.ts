/**
 * The ring all-reduce as it was before it received out of place straight into the output: every
 * chunk arrives in one scratch chunk, then output = input ⊕ scratch. Kept as bench's comparator
 * for docs/writing-an-algorithm.md's receive-where-the-sum-goes figures:
 *   cclab bench allreduce --backend mpi -n 2 --algorithm-file test/perf/ring-scratch.ts \
 *     --algorithm ring,ring_scratch -b 256K -e 16M -f 4 --iters 200
 */

import { ring } from "../../algorithms/allreduce/ring.js";
import { ringAllGather, ringReduceScatter } from "../../algorithms/lib/ring.js";
import { chunkOf, defineAlgorithm, partition } from "../../src/schedule/dsl.js";

export const ringScratch = defineAlgorithm({
  ...ring,
  name: "ring_scratch",
  summary: "Ring all-reduce receiving every chunk into scratch (allreduce/ring before it received into the output).",
  *schedule({ rank, size, count }, { input, output, scratch }) {
    const chunks = partition(count, size);
    const tmp = scratch(chunks[0]!.count);
    yield* ringReduceScatter(rank, size, {
      chunks,
      input,
      acc: (_k, j) => chunkOf(output, chunks[j]!),
      tmp: () => tmp,
    });
    yield* ringAllGather(rank, size, output, chunks);
  },
});
