/**
 * allgather/bruck: Bruck all-gather: ⌈log2 n⌉ steps for any n, then a local rotation.
 *
 * Limits: any size; log latency without folding; n·count scratch and a final local rotation.
 * Cost:   ⌈log2 n⌉ steps; (n-1)·count elements sent per rank.
 * Source: Bruck et al. 1997; MPICH allgather_intra_brucks.
 *
 * Step table: `cclab explain allgather --algorithm bruck -n 4`
 * (kept current in test/golden/explain/allgather/bruck.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { copy, defineAlgorithm, f, recv, recvCopySend, send, step, sub } from "../../src/schedule/dsl.js";
import { chunksText } from "../lib/fold.js";
import { mod } from "../lib/ring.js";

export const bruck = defineAlgorithm({
  collective: "allgather",
  name: "bruck",
  summary: "Bruck all-gather: ⌈log2 n⌉ steps for any n, then a local rotation.",
  limits: "any size; log latency without folding; n·count scratch and a final local rotation",
  source: "Bruck et al. 1997; MPICH allgather_intra_brucks",
  cost: {
    steps: f("⌈log2 n⌉", (n) => Math.ceil(Math.log2(n))),
    sent: f("(n-1)·count", (n, count) => (n - 1) * count),
  },
  *schedule({ rank, size: n, count }, mem) {
    // Scratch block i is the chunk of rank (rank + i) mod n. At distance d a rank sends its first
    // min(d, n-d) blocks to rank - d and receives as many from rank + d after them.
    const tmp = mem.scratch(n * count);
    const blocks = (i: number, k: number) => sub(tmp, i * count, k * count);
    yield step("copy input", [], [copy(blocks(0, 1), mem.input)]);
    for (let d = 1; d < n; d <<= 1) {
      const k = Math.min(d, n - d);
      yield recvCopySend(chunksText(d, d + k, "block"), [
        send(mod(rank - d, n), blocks(0, k)),
        recv(mod(rank + d, n), blocks(d, k)),
      ]);
    }
    // Block i holds rank (rank + i) mod n's chunk: blocks 0..n-rank-1 go to output[rank..n-1],
    // the rest wrap round to output[0..rank-1].
    const rotate = [copy(sub(mem.output, rank * count, (n - rank) * count), blocks(0, n - rank))];
    if (rank > 0) rotate.push(copy(sub(mem.output, 0, rank * count), blocks(n - rank, rank)));
    yield step("rotate into place", [], rotate);
  },
});
