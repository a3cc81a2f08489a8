/**
 * PAT (Parallel Aggregated Trees, NCCL 2.23+): the op generators NCCL's kernels run for
 * all-gather and reduce-scatter, restated from PatAGAlgorithm and PatRSAlgorithm::getNextOp
 * (NCCL src/include/collectives.h) and held op for op to NCCL 2.29's own (test/pat.test.ts), and
 * the translation of their ops into cclab steps. allgather/pat and reducescatter/pat are built on
 * it. NCCL 2.23.4 gives the same ops in the same order (checked for n = 2..130); only its
 * reduce-scatter packs messages differently where n is not a power of two (it skipped the offsets
 * past n when filling a message, later releases leave their places empty).
 *
 * The idea (S. Jeaugey, "PAT: a new algorithm for all-gather and reduce-scatter operations at
 * scale", arXiv 2506.20252): each rank's block is broadcast down (all-gather) or reduced up
 * (reduce-scatter) a binomial tree shifted to that rank, over "dimensions": dimension d links rank
 * r with r ± 2^d. Bruck's all-gather walks dimension 0 first and sends 2^d blocks at step d, so
 * its last steps carry half the data to the farthest peer and it needs n blocks of buffer. PAT
 * walks the far dimensions first (each block crosses the long links when it is alone) and bounds
 * what is in flight: the offsets s in [0, 2^⌈log2 n⌉) split as s = a·Δ + as, and only the
 * A = 2^⌈log2 n⌉/Δ offsets that share one `as` ("aggregated step") are in flight together. A, NCCL's
 * aggFactor, is as large as NCCL's buffers allow: NCCL_STEPS = 8 buffer steps per connection, times
 * the chunks that fit in one step (postFreq); at most 2^⌈log2 n⌉/2.
 *
 * One op moves one chunk (`count` elements of one block): receive it on a dimension (or take
 * this rank's own input), copy or reduce it, and send it on another dimension (or keep it in the
 * output). An op with `post` ends the message on its send dimension: the chunks written since the
 * last post go out together (NCCL packs postFreq chunks into one buffer step when they fit).
 *
 * What cclab keeps: NCCL's op order, its aggregation factor and packing (from the segment, which
 * plays NCCL's chunk size), which chunks travel in which message, and for reduce-scatter NCCL's
 * buffers: 8 message slots per dimension, reused round-robin, so the scratch is bounded by
 * 2·8·⌈log2 n⌉ slots whatever the count. What it does not: channels (NCCL splits the data over
 * several, each running this), the thread-level parallelism (parallelFactor), and the copies into
 * and out of NCCL's connection buffers: a cclab message's chunks are separate transfers of one
 * group that land where they belong, so all-gather needs no buffer at all.
 */

import { invariant } from "../../src/core/assert.js";
import {
  type Chunk,
  copy,
  type LocalOp,
  type Memory,
  type Region,
  recv,
  reduce,
  type Schedule,
  send,
  step,
  sub,
  type Transfer,
} from "../../src/schedule/dsl.js";
import type { RankCall } from "../../src/specs/types.js";
import { mod } from "./ring.js";

/** NCCL_STEPS: buffer steps per connection, the depth NCCL aggregates to. */
export const NCCL_STEPS = 8;

/**
 * The smallest chunk, in elements: NCCL's chunks are whole grains of its Simple protocol (512
 * bytes, ncclProtoGrainSize), here counted as 128 elements whatever the type (float32's).
 */
export const PAT_GRAIN = 128;

/** The chunk PAT cuts each block into: the segment, but never less than a grain. */
export const patChunk = (segment: number): number => Math.max(segment, PAT_GRAIN);

/** One op of NCCL's PAT generator, for the rank it runs on (blocks are offsets from that rank). */
export interface PatOp {
  /** Dimension the chunk arrives on (from rank ± 2^recvDim), or -1: this rank's own input. */
  readonly recvDim: number;
  /** Dimension it leaves on, or -1: all-gather keeps it in the output only, reduce-scatter reduces into the output. */
  readonly sendDim: number;
  /** The block: rank + block (mod n) is whose data (all-gather) or whose result (reduce-scatter) it is. */
  readonly block: number;
  /** The chunk within the block: elements [offset, offset + count). */
  readonly offset: number;
  readonly count: number;
  /** Ends the message on sendDim (NCCL's postSend). */
  readonly post: boolean;
  /** Reduce-scatter: the chunk is reduced into the message `ahead` after the next one to post on sendDim (NCCL's stepOffset). */
  readonly ahead: number;
}

/** NCCL's aggregation for n ranks, per-rank count and chunk (both in elements). */
export interface PatShape {
  /** 2^⌈log2 n⌉. */
  readonly pow2: number;
  /** aggFactor: offsets aggregated together. */
  readonly agg: number;
  /** aggDelta = pow2 / agg: the stride between them. */
  readonly delta: number;
  /** postFreq: chunks packed into one message. */
  readonly pack: number;
}

export const log2Up = (n: number): number => Math.ceil(Math.log2(n));
/** Lowest set bit of s (s > 0): the dimension a chunk at offset s travels on last. */
export const lowBit = (s: number): number => Math.log2(s & -s);

/**
 * PatAGAlgorithm's and PatRSAlgorithm's constructor: double the aggregation while two chunks of
 * the whole per-rank count fit in one step (those are packed into one message), then while
 * NCCL_STEPS allows more steps in flight; never past n/2.
 */
export function patShape(n: number, count: number, chunk: number): PatShape {
  const pow2 = 2 ** log2Up(n);
  const half = Math.floor(n / 2);
  let agg = 1;
  while (Math.floor(chunk / (count * agg)) >= 2 && agg < half) agg *= 2;
  const pack = agg;
  for (let d = NCCL_STEPS; d > 1 && agg < half; d = Math.floor(d / 2)) agg *= 2;
  return { pow2, agg, delta: pow2 / agg, pack };
}

/** The bit-reversed complement of i in [0, max): the order PatRSAlgorithm visits offsets in. */
function mirrorInvert(i: number, max: number): number {
  let ret = 0;
  for (let mask = 1, imask = max / 2; mask < max; mask <<= 1, imask >>= 1) if ((i & mask) === 0) ret += imask;
  return ret;
}

/** The segments of a block: NCCL runs the whole generator once per chunk of `chunk` elements. */
function* chunks(count: number, chunk: number): Generator<Chunk> {
  for (let offset = 0; offset < count; offset += chunk) yield { offset, count: Math.min(chunk, count - offset) };
}

/**
 * The low aggregated steps, in PatAGAlgorithm::nextAs's order: a depth-first walk of the
 * binomial tree over [1, 2^bits), each node before its subtrees, the highest bit first:
 * 1 for 1 bit; 2, 3, 1 for 2; 4, 6, 7, 5, 2, 3, 1 for 3.
 */
export function aggregatedSteps(bits: number): number[] {
  if (bits === 0) return [];
  const top = 2 ** (bits - 1);
  const rest = aggregatedSteps(bits - 1);
  return [top, ...rest.map((x) => top + x), ...rest];
}

/**
 * PatAGAlgorithm::getNextOp, op by op (skipped ops left out). Per chunk: first the offsets that
 * are multiples of Δ, far dimension first (phase 2: Bruck's all-gather backwards among them);
 * then for each low aggregated step `as`, the A offsets a·Δ + as, each forwarding on the lowest
 * set bit of `as` the block it received on the next bit (phase 1), and for odd `as` the
 * receive-only ops of the blocks that arrived on dimension 0 (phase 0).
 */
export function* patAllGatherOps(n: number, count: number, chunk: number): Generator<PatOp> {
  const { agg, delta, pack } = patShape(n, count, chunk);
  /** Offset s forwarded on its lowest bit; a message ends every `pack` ops and at a loop's last op. */
  const forward = (c: Chunk, s: number, a: number, next: number): PatOp => {
    const block = s - (s & -s);
    const post = a % pack === pack - 1 || next >= n;
    return { recvDim: block === 0 ? -1 : lowBit(block), sendDim: lowBit(s), block, ...c, post, ahead: 0 };
  };
  /** A block that arrived on its lowest bit and goes nowhere further. */
  const keep = (c: Chunk, block: number): PatOp => ({
    recvDim: lowBit(block),
    sendDim: -1,
    block,
    ...c,
    post: false,
    ahead: 0,
  });
  // NCCL loops a over [0, A) and skips offsets past n; they are a tail of each loop, so the
  // loops here stop at the first one. (2a+1)·scale·Δ < n, a·Δ + as < n imply a < A.
  for (const c of chunks(count, chunk)) {
    for (let scale = agg / 2; scale >= 1; scale /= 2) {
      for (let a = 0; (2 * a + 1) * scale * delta < n; a++) {
        yield forward(c, (2 * a + 1) * scale * delta, a, (2 * a + 3) * scale * delta);
      }
    }
    for (const as of aggregatedSteps(log2Up(delta))) {
      let a = 0;
      for (; a * delta + as < n; a++) yield forward(c, a * delta + as, a, (a + 1) * delta + as);
      // The last block, when its successor on dimension 0 is past n: received, forwarded nowhere.
      if (as % 2 === 1 && a * delta + as === n) yield keep(c, n - 1);
      if (as % 2 === 1) for (let b = 0; b * delta + as < n; b++) yield keep(c, b * delta + as);
    }
  }
}

/**
 * PatRSAlgorithm::getNextOp, op by op (skipped ops left out): the mirror image of the all-gather.
 * Per chunk, for the aggregated steps Δ-1 down to 2: odd ones first send this rank's own
 * contributions on dimension 0 (phase 0); each then receives partial sums on the lowest set bit
 * of its offsets and passes them on, reduced with this rank's contribution, on the next bit
 * (phase 1). Aggregated step 1 sends on dimension 0 too; then, scale by scale, the offsets
 * (2m+1)·scale·Δ + 1 arriving on dimension 0 (phase 2) and (2m+1)·scale·Δ on higher ones
 * (phase 3) climb the far dimensions; the last op reduces the own block's dimension-0 partial
 * into the output (phase 4). Partial sums that must wait for more contributions are reduced into
 * later messages (`ahead`); a message goes out with the op that posts it.
 */
export function* patReduceScatterOps(n: number, count: number, chunk: number): Generator<PatOp> {
  const { agg, delta, pack } = patShape(n, count, chunk);
  const dim = (s: number) => (s === 0 ? -1 : lowBit(s));
  // NCCL's newPeer: i has only the upper bits of pow2 - 1 set (8, 12, 14, 15 for 16).
  const newPeer = (i: number, p: number) => {
    const x = (i ^ (p - 1)) + 1;
    return (x & (x - 1)) === 0;
  };
  for (const c of chunks(count, chunk)) {
    let ahead = 0;
    let skipped = 0;
    const op = (recvDim: number, block: number, post: boolean): PatOp => ({
      recvDim,
      sendDim: dim(block),
      block,
      ...c,
      post,
      ahead,
    });
    // A message ends every `pack` ops (NCCL: "or at the loop's last op", which is the same: A is a multiple of P).
    const ends = (a: number) => a % pack === pack - 1;
    for (let as = delta - 1; as >= 1; as--) {
      if (as % 2 === 1) {
        // Phase 0: this rank's contributions to the offsets a·Δ + as leave on dimension 0.
        for (let a = 0; a < agg; a++) {
          const s = mirrorInvert(a, agg) * delta + as;
          if (s < n) yield { recvDim: -1, sendDim: 0, block: s, ...c, post: ends(a), ahead: 0 };
        }
        if (as === 1) break;
      }
      // Phase 1. A block whose offset is past n is skipped, but NCCL still counts it for `ahead`;
      // a block below n whose offset is past n runs without a receive.
      ahead = 0;
      skipped = 0;
      for (let a = 0; a < agg; a++) {
        const s = mirrorInvert(a, agg) * delta + as;
        const recvDim = lowBit(s);
        const block = s - 2 ** recvDim;
        // NCCL tests this only where the block goes on (sendDim >= 0); the one block that does not,
        // block 0, comes at the loop's last op, after which the reset no longer shows.
        if (as === 2 ** recvDim && newPeer(a, agg)) {
          skipped = a;
          ahead = 0;
        }
        if (block >= n) continue;
        yield op(s < n ? recvDim : -1, block, recvDim === 0 && ends(a));
        if (recvDim > 0 && ((a - skipped) % pack) + 1 >= pack) ahead++;
      }
    }
    for (let scale = 1; scale < agg; scale *= 2) {
      const last = agg / (2 * scale);
      // Phase 2: the offsets (2m+1)·scale·Δ + 1 arrive on dimension 0 and leave on their next bit.
      for (let a = 0; a < last; a++) {
        const s = (2 * mirrorInvert(a, last) + 1) * scale * delta + 1;
        const block = s - 1;
        if (block >= n) continue;
        ahead = 0;
        yield op(s < n ? 0 : -1, block, a === last - 1 || (a + 1) % pack === 0);
      }
      // Phase 3: the offsets (2m+1)·scale·Δ arrive on their lowest bit and climb.
      ahead = 0;
      skipped = 0;
      for (let a = 0; a < last; a++) {
        const s = (2 * mirrorInvert(a, last) + 1) * scale * delta;
        const block = s - 2 ** lowBit(s);
        if (newPeer(a, last)) {
          skipped = a;
          ahead = 0;
        }
        if (block >= n) continue;
        yield op(s < n ? lowBit(s) : -1, block, false);
        if (((a - skipped) % pack) + 1 >= pack) ahead++;
      }
    }
    // Phase 4: the own block's partial from dimension 0.
    ahead = 0;
    yield op(0, 0, false);
  }
}

/**
 * Messages one rank posts, counted from the loops of PatAGAlgorithm: each loop (one per far
 * dimension, then one per low aggregated step) sends the blocks whose offsets are below n, P to a
 * message. (n-1)·S for P = 1 (S chunks per block); ⌈log2 n⌉ when n is a power of two and one
 * message holds a whole loop. PatRSAlgorithm posts as many where n is a power of two or P = 1.
 */
export function patMessages(n: number, count: number, chunk: number): number {
  const { agg, delta, pack } = patShape(n, count, chunk);
  let m = 0;
  // Offsets (2a+1)·scale·Δ < n per far dimension, then a·Δ + as < n per low aggregated step.
  for (let scale = agg / 2; scale >= 1; scale /= 2) m += Math.ceil(Math.ceil((n / (scale * delta) - 1) / 2) / pack);
  for (let as = 1; as < delta; as++) m += Math.ceil(Math.ceil((n - as) / delta) / pack);
  return m * Math.ceil(count / chunk);
}

/** '+0,+4': the blocks of a message, as offsets from the rank. */
const blocksText = (ops: readonly PatOp[]): string => ops.map((o) => `+${o.block}`).join(",");
/** ' (elements 6..8)' when a block travels in more than one chunk. */
const chunkText = (o: PatOp, count: number): string =>
  o.count === count ? "" : ` (elements ${o.offset}..${o.offset + o.count - 1})`;

/**
 * PAT all-gather for one rank: every message NCCL posts on dimension d is one step that sends its
 * chunks to rank - 2^d and, symmetrically, receives rank + 2^d's message of the same blocks, which
 * are this rank's blocks 2^d further on. Each chunk lands straight in its place in the output and
 * is forwarded from there, so no buffer is needed; out of place the own block is copied first.
 */
export function* patAllGather(c: RankCall, mem: Memory): Schedule {
  const { rank, size: n, count } = c;
  const out = (block: number, o: PatOp) => sub(mem.output, mod(rank + block, n) * count + o.offset, o.count);
  if (!c.inPlace) yield step("copy own block", [], [copy(sub(mem.output, rank * count, count), mem.input)]);
  let msg: PatOp[] = [];
  for (const o of patAllGatherOps(n, count, patChunk(c.segment))) {
    // Receive-only ops (NCCL's copies out of its buffers) read what a receive already put in place.
    if (o.sendDim < 0) continue;
    msg.push(o);
    if (!o.post) continue;
    const d = 2 ** o.sendDim;
    const sends = msg.map((x) =>
      send(mod(rank - d, n), x.block === 0 ? sub(mem.input, x.offset, x.count) : out(x.block, x)),
    );
    const recvs = msg.map((x) => recv(mod(rank + d, n), out(x.block + d, x)));
    yield step(`copySend blocks ${blocksText(msg)} on dim ${o.sendDim}${chunkText(o, count)}`, [...sends, ...recvs]);
    msg = [];
  }
}

/**
 * PAT reduce-scatter for one rank. Each op reduces the partial sum it received (and, the first
 * time, this rank's own contribution) into the message it belongs to on its send dimension, or
 * into the output; a posted message is one step that sends its chunks to rank + 2^d and receives
 * rank - 2^d's message of the same shape, whose chunk of block b is this rank's block b - 2^d. The
 * messages being filled and those received live in NCCL's buffers: NCCL_STEPS slots of P chunks
 * per dimension each way, message m in slot m mod NCCL_STEPS, reused once the dataflow allows.
 */
export function* patReduceScatter(c: RankCall, mem: Memory): Schedule {
  const { rank, size: n, count } = c;
  const chunk = patChunk(c.segment);
  const width = Math.min(chunk, count);
  // The maps below are keyed by numbers, not text: a rank makes millions of lookups at 1,024
  // ranks. Dimensions are below DIMS; a key of (chunk, block, dimension) must stay exact.
  const DIMS = 64;
  // A guard no count a machine holds reaches.
  // Stryker disable all
  invariant(
    Math.ceil(count / chunk) * n * DIMS <= Number.MAX_SAFE_INTEGER,
    () => `pat: n=${n}, count=${count} too large`,
  );
  // Stryker restore all
  const slots = new Map<number, Region>();
  /** Chunk i of message m's slot on dimension d, on side 0 (filling) or 1 (received). */
  const slot = (side: 0 | 1, d: number, m: number, i: number, o: PatOp): Region => {
    // Stryker disable next-line ArithmeticOperator: any one-to-one key will do
    const k = (side * DIMS + d) * NCCL_STEPS + (m % NCCL_STEPS);
    let r = slots.get(k);
    if (!r) slots.set(k, (r = mem.scratch(patShape(n, count, chunk).pack * width)));
    return sub(r, i * width, o.count);
  };
  /** A chunk of a message being filled: its partial sum, or (no region yet) this rank's input as it is. */
  type Entry = { readonly op: PatOp; region?: Region };
  /** Message m on dimension d: m·DIMS + d. */
  const filling = new Map<number, Entry[]>();
  const entries = new Map<number, Entry>();
  const received = new Map<number, Region>();
  const posted: number[] = [];
  /** Chunk o of block `block` on dimension d (-1: none). */
  // Stryker disable next-line ArithmeticOperator: any one-to-one key will do
  const key = (d: number, block: number, o: PatOp) => ((o.offset / chunk) * n + block) * DIMS + d + 1;
  const own = (o: PatOp) => sub(mem.input, mod(rank + o.block, n) * count + o.offset, o.count);
  const written = new Set<number>();
  /** The reductions since the last post, with the ops they come from (for the step's label). */
  let pending: { readonly o: PatOp; readonly op: LocalOp }[] = [];
  const flush = function* (where: string) {
    if (pending.length > 0)
      yield step(
        `recvReduce blocks ${blocksText(pending.map((p) => p.o))}${where}`,
        [],
        pending.map((p) => p.op),
      );
    pending = [];
  };
  for (const o of patReduceScatterOps(n, count, chunk)) {
    // What arrived on recvDim for this block (the symmetric receive of an earlier post).
    const src = received.get(key(o.recvDim, o.block, o));
    if (o.sendDim < 0) {
      // The own block: its first partial sum is reduced with the own contribution, the rest into it.
      const dst = sub(mem.output, o.offset, o.count);
      pending.push({ o, op: written.has(o.offset) ? reduce(dst, src as Region) : reduce(dst, src as Region, own(o)) });
      written.add(o.offset);
    } else {
      const m = (posted[o.sendDim] ?? 0) + o.ahead;
      let list = filling.get(m * DIMS + o.sendDim);
      if (!list) filling.set(m * DIMS + o.sendDim, (list = []));
      let e = entries.get(key(o.sendDim, o.block, o));
      if (!e) {
        e = { op: o };
        list.push(e);
        entries.set(key(o.sendDim, o.block, o), e);
      }
      if (src && e.region) pending.push({ o, op: reduce(e.region, src) });
      else if (src) {
        e.region = slot(0, o.sendDim, m, list.indexOf(e), o);
        pending.push({ o, op: reduce(e.region, src, own(o)) });
      }
    }
    if (!o.post) continue;
    yield* flush("");
    const d = o.sendDim;
    const m = posted[d] ?? 0;
    posted[d] = m + 1;
    const list = filling.get(m * DIMS + d) ?? [];
    const transfers: Transfer[] = list.map((e) => send(mod(rank + 2 ** d, n), e.region ?? own(e.op)));
    list.forEach((e, i) => {
      entries.delete(key(d, e.op.block, e.op));
      const r = slot(1, d, m, i, e.op);
      transfers.push(recv(mod(rank - 2 ** d, n), r));
      received.set(key(d, mod(e.op.block - 2 ** d, n), e.op), r);
    });
    yield step(`send blocks ${blocksText(list.map((e) => e.op))} on dim ${d}${chunkText(o, count)}`, transfers);
  }
  yield* flush(" into the output");
}
