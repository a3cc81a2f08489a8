/**
 * alltoall/bruck: Bruck's log-round all-to-all (Bruck et al., 1997; MPICH's
 * alltoall_intra_brucks, Open MPI's ompi_coll_base_alltoall_intra_bruck), for small blocks.
 *
 * Rank r first rotates its blocks so that block i is the one for rank r+i. In round k it sends
 * to rank r+2^k every block whose index has bit k set (packed into one message) and puts what
 * it receives from rank r-2^k in the same places; after ⌈log2 n⌉ rounds block i holds the data
 * rank r-i sent to r, and an inverse rotation puts it in output block r-i.
 *
 * Limits: any size; ⌈log2 n⌉ latency terms instead of n-1, paid for by about (n/2)·log2 n
 * blocks sent instead of n-1, and by local packing: for small blocks. Scratch: n + 2⌊n/2⌋
 * blocks (the rotated copy and the pack buffers), so in place needs nothing else.
 * Cost: ⌈log2 n⌉ steps; Σ_{k<⌈log2 n⌉} #{i < n with bit k set} · count · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain alltoall --algorithm bruck -n 4`:
 * alltoall/bruck: n = 4, count = 1, root 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 0 (local)
 *   rank 0  rotate, pack round 0: tmp[0:4]=in[0:4] tmp[4]=tmp[1] tmp[5]=tmp[3]
 *   rank 1  rotate, pack round 0: tmp[0:3]=in[1:4] tmp[3]=in[0] tmp[4]=tmp[1] tmp[5]=tmp[3]
 *   rank 2  rotate, pack round 0: tmp[0:2]=in[2:4] tmp[2:4]=in[0:2] tmp[4]=tmp[1] tmp[5]=tmp[3]
 *   rank 3  rotate, pack round 0: tmp[0]=in[3] tmp[1:4]=in[0:3] tmp[4]=tmp[1] tmp[5]=tmp[3]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   out[1]  .       .       .       .
 *   out[2]  .       .       .       .
 *   out[3]  .       .       .       .
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  [0]     [1]     [2]     [3]
 *   tmp[2]  [0]     [1]     [2]     [3]
 *   tmp[3]  [0]     [1]     [2]     [3]
 *   tmp[4]  [0]     [1]     [2]     [3]
 *   tmp[5]  [0]     [1]     [2]     [3]
 *   tmp[6]  .       .       .       .
 *   tmp[7]  .       .       .       .
 *
 * step 1
 *   rank 0  round 0: send 2 blocks to 1, recv from 3: tmp[4:6]->1 tmp[6:8]<-3 tmp[1]=tmp[6] tmp[3]=tmp[7] tmp[4:6]=tmp[2:4]
 *   rank 1  round 0: send 2 blocks to 2, recv from 0: tmp[4:6]->2 tmp[6:8]<-0 tmp[1]=tmp[6] tmp[3]=tmp[7] tmp[4:6]=tmp[2:4]
 *   rank 2  round 0: send 2 blocks to 3, recv from 1: tmp[4:6]->3 tmp[6:8]<-1 tmp[1]=tmp[6] tmp[3]=tmp[7] tmp[4:6]=tmp[2:4]
 *   rank 3  round 0: send 2 blocks to 0, recv from 2: tmp[4:6]->0 tmp[6:8]<-2 tmp[1]=tmp[6] tmp[3]=tmp[7] tmp[4:6]=tmp[2:4]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  .       .       .       .
 *   out[1]  .       .       .       .
 *   out[2]  .       .       .       .
 *   out[3]  .       .       .       .
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  [3]     [0]     [1]     [2]
 *   tmp[2]  [0]     [1]     [2]     [3]
 *   tmp[3]  [3]     [0]     [1]     [2]
 *   tmp[4]  [0]     [1]     [2]     [3]
 *   tmp[5]  [3]     [0]     [1]     [2]
 *   tmp[6]  [3]     [0]     [1]     [2]
 *   tmp[7]  [3]     [0]     [1]     [2]
 *
 * step 2
 *   rank 0  round 1: send 2 blocks to 2, recv from 2: tmp[4:6]->2 tmp[6:8]<-2 tmp[2:4]=tmp[6:8] out[0]=tmp[0] out[3]=tmp[1] out[2]=tmp[2] out[1]=tmp[3]
 *   rank 1  round 1: send 2 blocks to 3, recv from 3: tmp[4:6]->3 tmp[6:8]<-3 tmp[2:4]=tmp[6:8] out[1]=tmp[0] out[0]=tmp[1] out[3]=tmp[2] out[2]=tmp[3]
 *   rank 2  round 1: send 2 blocks to 0, recv from 0: tmp[4:6]->0 tmp[6:8]<-0 tmp[2:4]=tmp[6:8] out[2]=tmp[0] out[1]=tmp[1] out[0]=tmp[2] out[3]=tmp[3]
 *   rank 3  round 1: send 2 blocks to 1, recv from 1: tmp[4:6]->1 tmp[6:8]<-1 tmp[2:4]=tmp[6:8] out[3]=tmp[0] out[2]=tmp[1] out[1]=tmp[2] out[0]=tmp[3]
 *           rank 0  rank 1  rank 2  rank 3
 *   out[0]  [0]     [0]     [0]     [0]
 *   out[1]  [1]     [1]     [1]     [1]
 *   out[2]  [2]     [2]     [2]     [2]
 *   out[3]  [3]     [3]     [3]     [3]
 *   tmp[0]  [0]     [1]     [2]     [3]
 *   tmp[1]  [3]     [0]     [1]     [2]
 *   tmp[2]  [2]     [3]     [0]     [1]
 *   tmp[3]  [1]     [2]     [3]     [0]
 *   tmp[4]  [0]     [1]     [2]     [3]
 *   tmp[5]  [3]     [0]     [1]     [2]
 *   tmp[6]  [2]     [3]     [0]     [1]
 *   tmp[7]  [1]     [2]     [3]     [0]
 *
 * cost: ⌈log2 n⌉ steps, Σ_{k<⌈log2 n⌉} #{i < n with bit k set} · count · s bytes sent per rank; here 2 steps, at most 4 elements sent by a rank
 */
import { copy, recv, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm, LocalOp, Region, Schedule, ScheduleContext } from "../../src/schedule/types.js";

/** Maximal runs [from, to) of block indices below n with bit `bit` set: they pack contiguously. */
function runs(n: number, bit: number): [number, number][] {
  const out: [number, number][] = [];
  for (let from = bit; from < n; from += 2 * bit) out.push([from, Math.min(from + bit, n)]);
  return out;
}

/** Blocks sent in the round of `bit`: indices below n with that bit set. */
const roundBlocks = (n: number, bit: number): number => runs(n, bit).reduce((s, [a, b]) => s + b - a, 0);

/** The rounds' bits 1, 2, 4, ... below n. */
function bits(n: number): number[] {
  const out: number[] = [];
  for (let bit = 1; bit < n; bit <<= 1) out.push(bit);
  return out;
}

/** Largest pack buffer, in blocks: ⌊n/2⌋ (round 0 sends every odd block). */
const packBlocks = (n: number): number => Math.floor(n / 2);

export const bruckAlltoall: Algorithm = {
  collective: "alltoall",
  name: "bruck",
  summary: "Bruck's algorithm: rotate, ⌈log2 n⌉ rounds sending the blocks whose index has bit k set, rotate back.",
  limits: "any size; ⌈log2 n⌉ latency terms but ~(n/2)·log2 n blocks sent and local packing: for small blocks",
  cost: {
    stepsFormula: "⌈log2 n⌉",
    bytesFormula: "Σ_{k<⌈log2 n⌉} #{i < n with bit k set} · count · s",
    steps: (n, count) => (count === 0 ? 0 : bits(n).length),
    sentElements: (n, count) => count * bits(n).reduce((s, bit) => s + roundBlocks(n, bit), 0),
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : (ctx.size + 2 * packBlocks(ctx.size)) * ctx.count),
  *schedule(ctx: ScheduleContext): Schedule {
    const { rank, size: n, count: c, inPlace } = ctx;
    if (c === 0) return;
    if (n === 1) {
      if (!inPlace) yield step("copy own block", [], [copy(region("output", 0, c), region("input", 0, c))]);
      return;
    }
    const tmp = (i: number, blocks = 1): Region => region("scratch", i * c, blocks * c);
    const sendBuf = (i: number, blocks: number): Region => region("scratch", (n + i) * c, blocks * c);
    const recvBuf = (i: number, blocks: number): Region => region("scratch", (n + packBlocks(n) + i) * c, blocks * c);

    // Pack (or unpack) the blocks of one round between tmp and a contiguous buffer.
    const pack = (bit: number, buf: typeof sendBuf, into: boolean): LocalOp[] => {
      let at = 0;
      return runs(n, bit).map(([a, b]) => {
        const packed = buf(at, b - a);
        at += b - a;
        return into ? copy(packed, tmp(a, b - a)) : copy(tmp(a, b - a), packed);
      });
    };

    const rounds = bits(n);
    // tmp block i <- input block (rank + i) % n: two contiguous pieces.
    const rotate: LocalOp[] = [copy(tmp(0, n - rank), region("input", rank * c, (n - rank) * c))];
    if (rank > 0) rotate.push(copy(tmp(n - rank, rank), region("input", 0, rank * c)));
    yield step("rotate, pack round 0", [], [...rotate, ...pack(1, sendBuf, true)]);

    for (const [k, bit] of rounds.entries()) {
      const to = (rank + bit) % n;
      const from = (rank - bit + n) % n;
      const blocks = roundBlocks(n, bit);
      const next = rounds[k + 1];
      const local = pack(bit, recvBuf, false);
      if (next !== undefined) local.push(...pack(next, sendBuf, true));
      else {
        // Inverse rotation: tmp block i came from rank - i.
        for (let i = 0; i < n; i++) local.push(copy(region("output", ((rank - i + n) % n) * c, c), tmp(i)));
      }
      yield step(
        `round ${k}: send ${blocks} block${blocks === 1 ? "" : "s"} to ${to}, recv from ${from}`,
        [send(to, sendBuf(0, blocks)), recv(from, recvBuf(0, blocks))],
        local,
      );
    }
  },
};
