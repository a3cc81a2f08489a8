/**
 * allreduce/rabenseifner: Rabenseifner's all-reduce (MPICH allreduce_intra_reduce_scatter_allgather).
 *
 * A recursive-halving reduce-scatter over 2^k uneven chunks of the output (after which each
 * participant holds one chunk reduced) followed by a recursive-doubling all-gather of those
 * chunks, both composed from the shared building blocks. When n is not a power of two the first
 * 2·rem ranks (rem = n - 2^k) fold first: each even rank sends its buffer to the odd rank after
 * it and sits out, and each odd rank sends the result back at the end.
 *
 * Limits: any size, commutative ops; long messages at log latency; non-powers of two cost two
 * extra steps and a whole-buffer send on folded ranks; scratch count.
 * Cost: 2⌊log2 n⌋ steps, +2 when n is not a power of two; 2(p-1)/p · count · s bytes sent per
 * rank (p = 2^⌊log2 n⌋), + count · s on a folded odd rank.
 *
 * Step table (n = 4), from `cclab explain allreduce --algorithm rabenseifner -n 4`:
 * allreduce/rabenseifner: n = 4, count = 4, root 0, out of place, segment 1
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
 *   rank 0  recvReduceSend chunks 0..1: out[2:4]->2 tmp[0:2]<-2 out[0:2]+=tmp[0:2]
 *   rank 1  recvReduceSend chunks 0..1: out[2:4]->3 tmp[0:2]<-3 out[0:2]+=tmp[0:2]
 *   rank 2  recvReduceSend chunks 2..3: out[0:2]->0 tmp[0:2]<-0 out[2:4]+=tmp[0:2]
 *   rank 3  recvReduceSend chunks 2..3: out[0:2]->1 tmp[0:2]<-1 out[2:4]+=tmp[0:2]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0+2]   [1+3]   [2]     [3]
 *   out[1]  [0+2]   [1+3]   [2]     [3]
 *   out[2]  [0]     [1]     [0+2]   [1+3]
 *   out[3]  [0]     [1]     [0+2]   [1+3]
 *   tmp[0]  [2]     [3]     [0]     [1]
 *   tmp[1]  [2]     [3]     [0]     [1]
 *
 * step 2
 *   rank 0  recvReduceSend chunk 0: out[1]->1 tmp[0]<-1 out[0]+=tmp[0]
 *   rank 1  recvReduceSend chunk 1: out[0]->0 tmp[0]<-0 out[1]+=tmp[0]
 *   rank 2  recvReduceSend chunk 2: out[3]->3 tmp[0]<-3 out[2]+=tmp[0]
 *   rank 3  recvReduceSend chunk 3: out[2]->2 tmp[0]<-2 out[3]+=tmp[0]
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [1+3]      [2]        [3]
 *   out[1]  [0+2]      [0+1+2+3]  [2]        [3]
 *   out[2]  [0]        [1]        [0+1+2+3]  [1+3]
 *   out[3]  [0]        [1]        [0+2]      [0+1+2+3]
 *   tmp[0]  [1+3]      [0+2]      [1+3]      [0+2]
 *   tmp[1]  [2]        [3]        [0]        [1]
 *
 * step 3
 *   rank 0  recvCopySend chunk 1: out[0]->1 out[1]<-1
 *   rank 1  recvCopySend chunk 0: out[1]->0 out[0]<-0
 *   rank 2  recvCopySend chunk 3: out[2]->3 out[3]<-3
 *   rank 3  recvCopySend chunk 2: out[3]->2 out[2]<-2
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [2]        [3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [2]        [3]
 *   out[2]  [0]        [1]        [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0]        [1]        [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [1+3]      [0+2]      [1+3]      [0+2]
 *   tmp[1]  [2]        [3]        [0]        [1]
 *
 * step 4
 *   rank 0  recvCopySend chunks 2..3: out[0:2]->2 out[2:4]<-2
 *   rank 1  recvCopySend chunks 2..3: out[0:2]->3 out[2:4]<-3
 *   rank 2  recvCopySend chunks 0..1: out[2:4]->0 out[0:2]<-0
 *   rank 3  recvCopySend chunks 0..1: out[2:4]->1 out[0:2]<-1
 *           rank 0     rank 1     rank 2     rank 3
 *   out[0]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[1]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[2]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   out[3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]  [0+1+2+3]
 *   tmp[0]  [1+3]      [0+2]      [1+3]      [0+2]
 *   tmp[1]  [2]        [3]        [0]        [1]
 *
 * cost: 2⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0) steps, 2(p-1)/p · count · s (p = 2^⌊log2 n⌋), + count · s on a folded odd rank bytes sent per rank; here 4 steps, at most 6 elements sent by a rank
 */
import { copy, mapPeers, partition, region, step } from "../../src/schedule/build.js";
import type { Algorithm, Schedule, ScheduleContext } from "../../src/schedule/types.js";
import {
  foldToPowerOfTwo,
  recursiveDoublingAllGather,
  recursiveDoublingSent,
} from "../allgather/recursive_doubling.js";
import {
  recursiveHalvingReduceScatter,
  recursiveHalvingScratch,
  recursiveHalvingSent,
} from "../reducescatter/recursive_halving.js";
import { foldedAllReduce } from "./recursive_doubling.js";

export const allreduceRabenseifner: Algorithm = {
  collective: "allreduce",
  name: "rabenseifner",
  summary: "Rabenseifner all-reduce: recursive-halving reduce-scatter then recursive-doubling all-gather.",
  limits: "any size, commutative ops; long messages at log latency; non-powers of two fold (two extra steps)",
  cost: {
    stepsFormula: "2⌊log2 n⌋ + (n ≠ 2^k ? 2 : 0)",
    bytesFormula: "2(p-1)/p · count · s (p = 2^⌊log2 n⌋), + count · s on a folded odd rank",
    steps: (n, count) => {
      if (count === 0 || n === 1) return 0;
      const f = foldToPowerOfTwo(0, n);
      return 2 * Math.log2(f.pof2) + (f.rem > 0 ? 2 : 0);
    },
    sentElements: (n, count) => {
      if (count === 0 || n === 1) return 0;
      const f = foldToPowerOfTwo(0, n);
      const c = partition(count, f.pof2).map((ch) => ch.count);
      let max = f.rem > 0 ? count : 0; // an even rank of a folded pair sends its buffer once
      for (let v = 0; v < f.pof2; v++) {
        const fold = v < f.rem ? count : 0;
        max = Math.max(max, recursiveHalvingSent(v, c) + recursiveDoublingSent(v, c) + fold);
      }
      return max;
    },
  },
  scratch: (ctx) => {
    if (ctx.size === 1) return 0;
    const f = foldToPowerOfTwo(ctx.rank, ctx.size);
    if (f.newrank < 0) return 0;
    // Folded odd ranks receive the partner's whole buffer; the halving needs its larger first half.
    return ctx.rank < 2 * f.rem ? ctx.count : recursiveHalvingScratch(partition(ctx.count, f.pof2));
  },
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size, count } = ctx;
    if (count === 0) return;
    const out = region("output", 0, count);
    if (!ctx.inPlace) yield step("copy input", [], [copy(out, region("input", 0, count))]);
    if (size === 1) return;
    const f = foldToPowerOfTwo(rank, size);
    // A folded odd rank first receives its partner's whole buffer; the halving needs less; an
    // even rank of a folded pair (newrank < 0) only hands over and takes back.
    const chunks = partition(count, f.pof2);
    const folded = rank < 2 * f.rem;
    const tmp = region("scratch", 0, f.newrank < 0 ? 0 : folded ? count : recursiveHalvingScratch(chunks));
    const core = function* () {
      yield* mapPeers(recursiveHalvingReduceScatter(f.newrank, f.pof2, out, chunks, tmp), f.toRank);
      yield* mapPeers(recursiveDoublingAllGather(f.newrank, f.pof2, out, chunks), f.toRank);
    };
    yield* foldedAllReduce(rank, f, out, tmp, core());
  },
};
