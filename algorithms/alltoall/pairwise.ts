/**
 * alltoall/pairwise: n-1 rounds of pairwise exchange (MPICH's alltoall_intra_pairwise, Open
 * MPI's ompi_coll_base_alltoall_intra_pairwise): in round k every rank sends its block for rank
 * r+k and receives the block from rank r-k, so each round is a permutation of the links.
 *
 * The own block is a local copy. In place (input is output) the input is copied to scratch
 * first, so sends read the caller's data while receives overwrite it.
 *
 * Limits: any size; n-1 latency terms, so for small blocks bruck (⌈log2 n⌉ rounds) is faster;
 * one message per rank in flight, so no link is oversubscribed.
 * Cost: n-1 steps; (n-1) · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain alltoall --algorithm pairwise -n 4`:
 * alltoall/pairwise: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy own block: out[0]=in[0]
 *   rank 1  copy own block: out[1]=in[1]
 *   rank 2  copy own block: out[2]=in[2]
 *   rank 3  copy own block: out[3]=in[3]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     .       .       .
 *   out[1]  .       [1]     .       .
 *   out[2]  .       .       [2]     .
 *   out[3]  .       .       .       [3]
 *
 * step 1
 *   rank 0  send to 1, recv from 3: in[1]->1 out[3]<-3
 *   rank 1  send to 2, recv from 0: in[2]->2 out[0]<-0
 *   rank 2  send to 3, recv from 1: in[3]->3 out[1]<-1
 *   rank 3  send to 0, recv from 2: in[0]->0 out[2]<-2
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     .       .
 *   out[1]  .       [1]     [1]     .
 *   out[2]  .       .       [2]     [2]
 *   out[3]  [3]     .       .       [3]
 *
 * step 2
 *   rank 0  send to 2, recv from 2: in[2]->2 out[2]<-2
 *   rank 1  send to 3, recv from 3: in[3]->3 out[3]<-3
 *   rank 2  send to 0, recv from 0: in[0]->0 out[0]<-0
 *   rank 3  send to 1, recv from 1: in[1]->1 out[1]<-1
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     .
 *   out[1]  .       [1]     [1]     [1]
 *   out[2]  [2]     .       [2]     [2]
 *   out[3]  [3]     [3]     .       [3]
 *
 * step 3
 *   rank 0  send to 3, recv from 1: in[3]->3 out[1]<-1
 *   rank 1  send to 0, recv from 2: in[0]->0 out[2]<-2
 *   rank 2  send to 1, recv from 3: in[1]->1 out[3]<-3
 *   rank 3  send to 2, recv from 0: in[2]->2 out[0]<-0
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *
 * cost: n-1 steps, (n-1) · count · s bytes sent per rank; here 3 steps, at most 3 elements sent by a rank
 */
import { invariant } from "../../src/core/assert.js";
import { copy, recv, region, sameRegion, send, step } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext, Step } from "../../src/schedule/types.js";

/**
 * The pairwise exchange over per-peer blocks, shared with alltoallv: round k sends
 * sendBlocks[(r+k)%n] to r+k and receives recvBlocks[(r-k+n)%n] from r-k; the own block is
 * copied first unless it is already in place. Zero-length blocks are still posted, so every
 * rank has n-1 rounds and peers agree on the pairing.
 */
export function* pairwiseExchange(
  rank: number,
  size: number,
  sendBlocks: readonly Region[],
  recvBlocks: readonly Region[],
): Schedule {
  invariant(sendBlocks.length === size && recvBlocks.length === size, "pairwiseExchange: one block per peer");
  yield* selfCopy(rank, sendBlocks, recvBlocks);
  for (let k = 1; k < size; k++) {
    const to = (rank + k) % size;
    const from = (rank - k + size) % size;
    yield step(`send to ${to}, recv from ${from}`, [
      send(to, sendBlocks[to] as Region),
      recv(from, recvBlocks[from] as Region),
    ]);
  }
}

/** The local copy of a rank's own block, skipped when it is empty or already in place. */
export function* selfCopy(rank: number, sendBlocks: readonly Region[], recvBlocks: readonly Region[]): Schedule {
  const src = sendBlocks[rank] as Region;
  const dst = recvBlocks[rank] as Region;
  invariant(src.count === dst.count, () => `selfCopy: rank ${rank} sends itself ${src.count}, receives ${dst.count}`);
  if (src.count > 0 && !sameRegion(src, dst)) yield step("copy own block", [], [copy(dst, src)]);
}

/**
 * alltoall's blocks: block p of the input goes to rank p, block q of the output comes from
 * rank q. In place the sends read a scratch copy of the input (made by the step this yields).
 */
export function* alltoallBlocks(ctx: ScheduleContext): Generator<Step, { sendBlocks: Region[]; recvBlocks: Region[] }> {
  const { size, count, inPlace } = ctx;
  const source = inPlace ? "scratch" : "input";
  if (inPlace && size > 1) {
    yield step(
      "copy input to scratch",
      [],
      [copy(region("scratch", 0, size * count), region("input", 0, size * count))],
    );
  }
  const blocks = (buf: "input" | "output" | "scratch") =>
    Array.from({ length: size }, (_, p) => region(buf, p * count, count));
  const sendBlocks = blocks(source);
  // In place the own block is already where it belongs: receive-side block is the same memory.
  if (inPlace) sendBlocks[ctx.rank] = region("output", ctx.rank * count, count);
  return { sendBlocks, recvBlocks: blocks("output") };
}

/** In place, a scratch copy of the whole input; out of place none. */
export const alltoallScratch = (ctx: ScheduleContext): number =>
  ctx.inPlace && ctx.size > 1 ? ctx.size * ctx.count : 0;

export const pairwiseAlltoall: Algorithm = {
  collective: "alltoall",
  name: "pairwise",
  summary: "n-1 rounds; in round k send to rank r+k and receive from rank r-k.",
  limits: "any size; n-1 latency terms (bruck needs ⌈log2 n⌉); one message per link at a time",
  cost: {
    stepsFormula: "n-1",
    bytesFormula: "(n-1) · count · s",
    steps: (n, count) => (count === 0 ? 0 : n - 1),
    sentElements: (n, count) => (n - 1) * count,
  },
  scratch: alltoallScratch,
  *schedule(ctx: ScheduleContext): Schedule {
    if (ctx.count === 0) return;
    const { sendBlocks, recvBlocks } = yield* alltoallBlocks(ctx);
    yield* pairwiseExchange(ctx.rank, ctx.size, sendBlocks, recvBlocks);
  },
};
