/**
 * alltoall/bruck: Bruck's algorithm: rotate, ⌈log2 n⌉ rounds sending the blocks whose index has bit
 * k set, rotate back.
 *
 * Limits: any size; ⌈log2 n⌉ latency terms but ~(n/2)·log2 n blocks sent and local packing: for
 *         small blocks.
 * Cost:   ⌈log2 n⌉ steps; Σ_{k<⌈log2 n⌉} #{i < n with bit k set}·count elements sent per rank.
 * Source: Bruck et al. 1997; MPICH alltoall_intra_brucks; Open MPI
 *         ompi_coll_base_alltoall_intra_bruck.
 *
 * Step table: `cclab explain alltoall --algorithm bruck -n 4`
 * (kept current in test/golden/explain/alltoall/bruck.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { copy, defineAlgorithm, f, type LocalOp, type Region, recv, send, step, sub } from "../../src/schedule/dsl.js";

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

export const bruck = defineAlgorithm({
  collective: "alltoall",
  name: "bruck",
  summary: "Bruck's algorithm: rotate, ⌈log2 n⌉ rounds sending the blocks whose index has bit k set, rotate back.",
  limits: "any size; ⌈log2 n⌉ latency terms but ~(n/2)·log2 n blocks sent and local packing: for small blocks",
  source: "Bruck et al. 1997; MPICH alltoall_intra_brucks; Open MPI ompi_coll_base_alltoall_intra_bruck",
  cost: {
    steps: f("⌈log2 n⌉", (n) => bits(n).length),
    sent: f(
      "Σ_{k<⌈log2 n⌉} #{i < n with bit k set}·count",
      (n, count) => count * bits(n).reduce((s, b) => s + roundBlocks(n, b), 0),
    ),
  },
  *schedule({ rank, size: n, count: c }, mem) {
    // Block i of tmp is the block for rank r+i. Round k sends every block whose index has bit k
    // set (packed into one message) to r+2^k and puts what comes from r-2^k in the same places;
    // after the last round block i holds what rank r-i sent to r.
    const tmp = mem.scratch(n * c);
    const half = Math.floor(n / 2);
    const sendBuf = mem.scratch(half * c);
    const recvBuf = mem.scratch(half * c);
    const block = (r: Region, i: number, k = 1) => sub(r, i * c, k * c);
    const pack = (bit: number, buf: Region, into: boolean): LocalOp[] => {
      let at = 0;
      return runs(n, bit).map(([a, b]) => {
        const packed = block(buf, at, b - a);
        at += b - a;
        return into ? copy(packed, block(tmp, a, b - a)) : copy(block(tmp, a, b - a), packed);
      });
    };
    const rounds = bits(n);
    const rotate = [copy(block(tmp, 0, n - rank), block(mem.input, rank, n - rank))];
    if (rank > 0) rotate.push(copy(block(tmp, n - rank, rank), block(mem.input, 0, rank)));
    yield step("rotate, pack round 0", [], [...rotate, ...pack(1, sendBuf, true)]);
    for (const [k, bit] of rounds.entries()) {
      const blocks = roundBlocks(n, bit);
      const next = rounds[k + 1];
      const local = pack(bit, recvBuf, false);
      if (next !== undefined) local.push(...pack(next, sendBuf, true));
      // After the last round, the inverse rotation: tmp block i came from rank r-i.
      else for (let i = 0; i < n; i++) local.push(copy(block(mem.output, (rank - i + n) % n), block(tmp, i)));
      yield step(
        `round ${k}: send ${blocks} block${blocks === 1 ? "" : "s"} to ${(rank + bit) % n}, recv from ${(rank - bit + n) % n}`,
        [send((rank + bit) % n, block(sendBuf, 0, blocks)), recv((rank - bit + n) % n, block(recvBuf, 0, blocks))],
        local,
      );
    }
  },
});
