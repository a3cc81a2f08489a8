/**
 * allreduce/recursive_doubling: recursive-doubling all-reduce (MPICH allreduce_intra_recursive_doubling).
 *
 * With n = 2^k ranks, at the step with distance d (1, 2, 4, ...) rank r exchanges its whole
 * buffer with rank r xor d and reduces what it receives; after log2 n steps every rank holds the
 * full reduction. When n is not a power of two the first 2·rem ranks (rem = n - 2^k) fold first:
 * each even rank sends its buffer to the odd rank after it and sits out, and each odd rank sends
 * the result back at the end.
 *
 * Limits: any size, commutative ops; latency-optimal for short messages, but every step moves
 * the whole buffer; non-powers of two cost two extra steps; scratch count.
 * Cost: ⌊log2 n⌋ steps, +2 when n is not a power of two; (⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0)) · count · s
 * bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm recursive_doubling -n 4`:
 * allreduce/recursive_doubling: n = 4, count = 4, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  copy input: out[0:4]=in[0:4]
 *   rank 1  copy input: out[0:4]=in[0:4]
 *   rank 2  copy input: out[0:4]=in[0:4]
 *   rank 3  copy input: out[0:4]=in[0:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [1]     [2]     [3]
 *   out[1]  [0]     [1]     [2]     [3]
 *   out[2]  [0]     [1]     [2]     [3]
 *   out[3]  [0]     [1]     [2]     [3]
 *
 * step 1
 *   rank 0  recvReduceSend with rank 1: out[0:4]->1 tmp[0:4]<-1 out[0:4]+=tmp[0:4]
 *   rank 1  recvReduceSend with rank 0: out[0:4]->0 tmp[0:4]<-0 out[0:4]+=tmp[0:4]
 *   rank 2  recvReduceSend with rank 3: out[0:4]->3 tmp[0:4]<-3 out[0:4]+=tmp[0:4]
 *   rank 3  recvReduceSend with rank 2: out[0:4]->2 tmp[0:4]<-2 out[0:4]+=tmp[0:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0+1]   [0+1]   [2+3]   [2+3]
 *   out[1]  [0+1]   [0+1]   [2+3]   [2+3]
 *   out[2]  [0+1]   [0+1]   [2+3]   [2+3]
 *   out[3]  [0+1]   [0+1]   [2+3]   [2+3]
 *   tmp[0]  [1]     [0]     [3]     [2]
 *   tmp[1]  [1]     [0]     [3]     [2]
 *   tmp[2]  [1]     [0]     [3]     [2]
 *   tmp[3]  [1]     [0]     [3]     [2]
 *
 * step 2
 *   rank 0  recvReduceSend with rank 2: out[0:4]->2 tmp[0:4]<-2 out[0:4]+=tmp[0:4]
 *   rank 1  recvReduceSend with rank 3: out[0:4]->3 tmp[0:4]<-3 out[0:4]+=tmp[0:4]
 *   rank 2  recvReduceSend with rank 0: out[0:4]->0 tmp[0:4]<-0 out[0:4]+=tmp[0:4]
 *   rank 3  recvReduceSend with rank 1: out[0:4]->1 tmp[0:4]<-1 out[0:4]+=tmp[0:4]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [2+3]      [2+3]      [0+1]      [0+1]
 *   tmp[1]  [2+3]      [2+3]      [0+1]      [0+1]
 *   tmp[2]  [2+3]      [2+3]      [0+1]      [0+1]
 *   tmp[3]  [2+3]      [2+3]      [0+1]      [0+1]
 *
 * cost: ⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0) steps, (⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0)) · count · s bytes sent per rank; here 2 steps, at most 8 elements sent by a rank
 */
import { copy, recv, reduce, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import { type Fold, foldedSteps, foldToPowerOfTwo } from "../allgather/recursive_doubling.js";

/**
 * An all-reduce over `out` on any size, by folding (MPICH's rem handling): each even rank of the
 * first 2·rem hands its buffer to its odd partner and later receives the result; the partner
 * reduces both into `out` (via `tmp`), the pof2 participants run `core`, and the partner sends
 * the result back. Shared by recursive doubling and Rabenseifner.
 */
export function* foldedAllReduce(rank: number, f: Fold, out: Region, tmp: Region, core: Schedule): Schedule {
  if (f.newrank < 0) {
    // Even rank of a folded pair: its odd partner reduces for both and sends the result back.
    yield step("send to partner", [send(rank + 1, out)]);
    yield step("recv result from partner", [recv(rank + 1, out)]);
    return;
  }
  const folded = rank < 2 * f.rem;
  if (folded) yield step("recvReduce partner's buffer", [recv(rank - 1, tmp)], [reduce(out, tmp)]);
  yield* core;
  if (folded) yield step("send result to partner", [send(rank - 1, out)]);
}

function* recursiveDoubling(f: Fold, out: Region, tmp: Region): Schedule {
  for (let d = 1; d < f.pof2; d <<= 1) {
    const peer = f.toRank(f.newrank ^ d);
    yield step(`recvReduceSend with rank ${peer}`, [send(peer, out), recv(peer, tmp)], [reduce(out, tmp)]);
  }
}

export const allreduceRecursiveDoubling: Algorithm = {
  collective: "allreduce",
  name: "recursive_doubling",
  summary: "Recursive-doubling all-reduce: log2 n whole-buffer exchanges; extra ranks folded in and out.",
  limits: "any size, commutative ops; short messages; every step sends the whole buffer",
  cost: {
    stepsFormula: "⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0)",
    bytesFormula: "(⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0)) · count · s",
    steps: foldedSteps,
    sentElements: (n, count) => {
      if (n === 1) return 0;
      const f = foldToPowerOfTwo(0, n);
      return (Math.log2(f.pof2) + (f.rem > 0 ? 1 : 0)) * count;
    },
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : ctx.count),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    const tmp = region("scratch", 0, count);
    if (!ctx.inPlace) yield step("copy input", [], [copy(out, region("input", 0, count))]);
    if (size === 1) return;
    const f = foldToPowerOfTwo(rank, size);
    yield* foldedAllReduce(rank, f, out, tmp, recursiveDoubling(f, out, tmp));
  },
};
