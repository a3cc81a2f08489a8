/**
 * Swing (De Sensi, Bonato, Saam, Hoefler, "Swing: Short-cutting Rings for Higher Bandwidth
 * Allreduce", NSDI 2024): recursive doubling's pattern with peers that swing left and right, so
 * that on a ring or torus the peer of step s is |ρ(s)| ≈ 2^s/1.5 hops away instead of 2^s. The
 * building block of allreduce/swing_latency and allreduce/swing_bandwidth.
 *
 * At step s rank r talks to π(r, s) = r + ρ(s) if r is even, r - ρ(s) if r is odd (mod n), with
 * ρ(s) = Σ_{i=0..s} (-2)^i = (1 - (-2)^(s+1))/3: 1, -1, 3, -5, 11, -21, ... For even n the pairing
 * is mutual (π(π(r, s), s) = r), and after ⌈log2 n⌉ steps every rank has, through the tree of
 * peers, reached every other. ρ(s) written in negabinary (base -2) is s+1 ones, so a distance d
 * between two ranks is reached along the steps its negabinary digits say: which step a block
 * leaves a rank on is read off the distance's negabinary representation (swingSendStep).
 *
 * The paper's text was not available to cclab in full (only its abstract and Section 3's
 * definition of π and ρ); the block rule and the handling of other sizes follow the authors'
 * reference library (libswing, github.com/HLC-Lab/bine_trees_fugaku: get_step_to_reach of
 * February 2024 and its later refinement compute_valid_distances), as noted per function.
 */
import { invariant } from "../../src/core/assert.js";
import {
  type Chunk,
  chunkOf,
  copy,
  type LocalOp,
  type Region,
  recv,
  recvReduceSend,
  reduce,
  type Schedule,
  send,
  step,
  sub,
} from "../../src/schedule/dsl.js";
import { mod } from "./ring.js";

/** ρ(s) = Σ_{i=0..s} (-2)^i: 1, -1, 3, -5, 11, -21, ... */
export const rho = (s: number): number => (1 - (-2) ** (s + 1)) / 3;

/** π(r, s): the peer of rank r at step s among n ranks. */
export const swingPeer = (r: number, s: number, n: number): number => mod(r % 2 === 0 ? r + rho(s) : r - rho(s), n);

/** x in negabinary (base -2), as the bits of an unsigned 32-bit word. */
export const negabinary = (x: number): number => ((0xaaaaaaaa + x) ^ 0xaaaaaaaa) >>> 0;

/** Whether x has a negabinary form of `bits` digits: the range [-2·(4^⌊bits/2⌋-1)/3, (4^⌊bits/2⌋-1)/3 (+ 2^(bits-1) for odd bits)]. */
export function fitsNegabinary(x: number, bits: number): boolean {
  const [lo, hi] = negabinaryRange(bits);
  return x >= lo && x <= hi;
}

/** The values `bits` negabinary digits can hold: [lo, hi] (fitsNegabinary's range, worked out once per k by the loops over blocks). */
function negabinaryRange(bits: number): [number, number] {
  const t = (4 ** Math.floor(bits / 2) - 1) / 3;
  return [-2 * t, t + (bits % 2 === 1 ? 2 ** (bits - 1) : 0)];
}

/** Trailing digits equal to the lowest, minus one: the step a distance starts on (0111 -> 2, 1000 -> 2). */
function firstStep(neg: number): number {
  const x = neg & 1 ? ~neg >>> 0 : neg;
  return Math.log2(x & -x) - 1;
}

/**
 * The step at which rank r sends block b (b ≠ r) in Swing's reduce-scatter over n ranks in k
 * steps; in the all-gather the block comes back at the same step. The signed distance is b - r
 * for an odd block and r - b for an even one (the last hop into b swings b's way). Where n is not
 * a power of two a distance has several forms d + m·n within k negabinary digits; the block
 * leaves at the latest first step among them, so it is never sent twice (the authors'
 * compute_valid_distances; their earlier get_step_to_reach, which picks the form that arrives
 * last, loses contributions at n = 26, 50, 52 and 58).
 */
export function swingSendStep(r: number, b: number, k: number, n: number): number {
  invariant(r !== b, "swingSendStep: a rank never sends its own block");
  const [lo, hi] = negabinaryRange(k);
  return sendStepWithin(r, b, n, lo, hi);
}

/** swingSendStep(r, b, k, n) for b ≠ r, [lo, hi] being negabinaryRange(k). */
function sendStepWithin(r: number, b: number, n: number, lo: number, hi: number): number {
  return stepOfDistance(mod(b % 2 === 1 ? b - r : r - b, n), n, lo, hi);
}

/** The step a block at signed distance d (mod n, not 0) leaves on: swingSendStep after its distance. */
function stepOfDistance(d: number, n: number, lo: number, hi: number): number {
  let latest = -1;
  // The forms d - 2n, d - n, d, d + n: every one that k negabinary digits can hold.
  for (let x = d - 2 * n; x < 2 * n; x += n) {
    if (x >= lo && x <= hi) latest = Math.max(latest, firstStep(negabinary(x)));
  }
  return latest;
}

/** Which step rank r sends block b on, among n ranks in k steps. */
export type SendStepRule = (r: number, b: number, k: number, n: number) => number;

/**
 * The step rank r sends each block on among n ranks: steps[b] = rule(r, b, ⌈log2 n⌉, n), NaN for
 * its own block (it never sends it, and NaN equals no step). One pass over the blocks, O(n).
 */
export function swingSendSteps(r: number, n: number, rule: SendStepRule = swingSendStep): Float64Array {
  const k = Math.ceil(Math.log2(n));
  const steps = new Float64Array(n);
  if (rule === swingSendStep) {
    const [lo, hi] = negabinaryRange(k);
    for (let b = 0; b < n; b++) steps[b] = b === r ? Number.NaN : sendStepWithin(r, b, n, lo, hi);
  } else {
    for (let b = 0; b < n; b++) steps[b] = b === r ? Number.NaN : rule(r, b, k, n);
  }
  return steps;
}

/** The chunks rank r sends at step s of the reduce-scatter among n ranks (and receives back at s in the all-gather). */
export function swingChunksAt(r: number, s: number, n: number, rule: SendStepRule = swingSendStep): number[] {
  const steps = swingSendSteps(r, n, rule);
  const out: number[] = [];
  for (let b = 0; b < n; b++) if (steps[b] === s) out.push(b);
  return out;
}

/**
 * The core of `m` ranks, where n is not that size: the last n - m ranks hand their whole buffer
 * to the rank n - m below them and take the result back at the end (libswing's
 * shrink_non_power_of_two / enlarge_non_power_of_two: a near neighbour, not a far one).
 */
export function* tailFolded(
  rank: number,
  n: number,
  m: number,
  out: Region,
  tmp: () => Region,
  core: () => Schedule,
): Schedule {
  const extra = n - m;
  if (rank >= m) {
    yield step(`send to rank ${rank - extra}`, [send(rank - extra, out)]);
    yield step(`recv result from rank ${rank - extra}`, [recv(rank - extra, out)]);
    return;
  }
  const folded = rank + extra >= m;
  if (folded) yield step(`recvReduce rank ${rank + extra}'s buffer`, [recv(rank + extra, tmp())], [reduce(out, tmp())]);
  yield* core();
  if (folded) yield step(`send result to rank ${rank + extra}`, [send(rank + extra, out)]);
}

/** Latency-optimal Swing among n ranks, n a power of two: log2 n whole-buffer exchanges with π(r, s). */
export function* swingExchanges(rank: number, n: number, out: Region, tmp: Region): Schedule {
  for (let s = 0; 2 ** s < n; s++) {
    const peer = swingPeer(rank, s, n);
    yield recvReduceSend(`with rank ${peer}`, [send(peer, out), recv(peer, tmp)], [reduce(out, tmp)]);
  }
}

/**
 * Where each block lies in the buffer: for n a power of two the blocks a rank sends at each step
 * form a contiguous run when the buffer is laid out as the steps split it (each step halves
 * every rank's window, as recursive halving does, and the windows nest), so every step is one
 * message each way, as the authors' library does by remapping blocks. Position j of the buffer
 * holds block order[j]; elsewhere (the windows do not nest) the identity, and the steps pack.
 */
export function swingLayout(n: number, rule: SendStepRule = swingSendStep): number[] {
  return Array.from(swingBlocks(n, rule).order);
}

/**
 * What each rank of n receives over swingSendStep's reduce-scatter (and sends back in the
 * all-gather), by weight: received[r] = Σ_s Σ weight[j] over the positions j of the blocks
 * π(r, s) sends at s (swingChunksAt), weight[j] being the size of the chunk at position j of the
 * layout. O(n log n) where the layout's runs apply (prefix sums over positions), else n² look-ups
 * in one table of steps by distance; O(n log n) memory.
 */
export function swingReceived(n: number, weight: ArrayLike<number>): Float64Array {
  invariant(weight.length === n, () => `swingReceived: ${weight.length} weights for ${n} blocks`);
  const k = Math.ceil(Math.log2(n));
  const received = new Float64Array(n);
  if (n < 2) return received;
  const { pos, runs } = swingBlocks(n, swingSendStep);
  // sent[p·k + s]: the weight rank p sends at step s.
  const sent = new Float64Array(n * k);
  const add = (p: number, s: number, b: number) => {
    sent[p * k + s] = (sent[p * k + s] as number) + (weight[pos[b] as number] as number);
  };
  if (runs) {
    const before = new Float64Array(n + 1);
    for (let j = 0; j < n; j++) before[j + 1] = (before[j] as number) + (weight[j] as number);
    for (let s = 0; s < k; s++) {
      for (let p = 0; p < n; p++) {
        const at = runs.from[s * n + p] as number;
        sent[p * k + s] = (before[at + (runs.len[s * n + p] as number)] as number) - (before[at] as number);
      }
    }
  } else {
    // The step depends on the distance alone (b - p for an odd block, p - b for an even one): one table.
    const [lo, hi] = negabinaryRange(k);
    const byDistance = new Int8Array(n);
    for (let d = 1; d < n; d++) byDistance[d] = stepOfDistance(d, n, lo, hi);
    for (let p = 0; p < n; p++) {
      for (let b = 0; b < n; b++) {
        if (b === p) continue;
        const s = byDistance[b % 2 === 1 ? (b - p + n) % n : (p - b + n) % n] as number;
        if (s >= 0) add(p, s, b);
      }
    }
  }
  for (let r = 0; r < n; r++) {
    for (let s = 0; s < k; s++) received[r] = (received[r] as number) + (sent[swingPeer(r, s, n) * k + s] as number);
  }
  return received;
}

/**
 * Where the blocks lie (swingLayout) and, where it can tell, which run of positions each rank
 * sends at each step, for n ranks under `rule`.
 */
interface SwingBlocks {
  /** Position j of the buffer holds block order[j]. */
  readonly order: Int32Array;
  /** Block b lies at position pos[b]. */
  readonly pos: Int32Array;
  /** n a power of two under swingSendStep: rank r sends at step s the blocks order[from[s·n + r] .. + len[s·n + r]). */
  readonly runs?: { readonly from: Int32Array; readonly len: Int32Array };
}

/** The last layouts made, by rule and n: every rank's plan asks for the same one (O(n log n) each). */
const blocksMade = new WeakMap<SendStepRule, Map<number, SwingBlocks>>();
const BLOCKS_KEPT = 4;

function swingBlocks(n: number, rule: SendStepRule): SwingBlocks {
  let byN = blocksMade.get(rule);
  if (!byN) {
    byN = new Map();
    blocksMade.set(rule, byN);
  }
  let made = byN.get(n);
  if (!made) {
    made = makeSwingBlocks(n, rule);
    if (byN.size >= BLOCKS_KEPT) byN.delete(byN.keys().next().value as number);
    byN.set(n, made);
  }
  return made;
}

function makeSwingBlocks(n: number, rule: SendStepRule): SwingBlocks {
  const split = (n & (n - 1)) === 0 && rule === swingSendStep ? splitWindows(n) : undefined;
  const order = split?.order ?? Int32Array.from(layoutBySets(n, rule));
  const pos = new Int32Array(n);
  for (let j = 0; j < n; j++) pos[order[j] as number] = j;
  return { order, pos, runs: split?.runs };
}

/**
 * layoutBySets' result for n a power of two under swingSendStep in O(n log n): each window a run
 * of positions [start, start + size) rather than a set, only the rank that splits a window
 * evaluating the rule over it, and every other rank of the window testing one block of each half
 * for the half it keeps. It also records each rank's run sent per step. It returns undefined
 * (the caller then takes layoutBySets) wherever the windows do not behave as that needs: two
 * windows overlap, ranks starting at one position hold windows of different sizes, a rank keeps
 * both halves' test blocks or neither, or a rank does not end with its own block alone. The two
 * agree block for block: test/swing.test.ts checks every power of two up to 256 (and the plans at
 * 32), and a transcription of layoutBySets with typed arrays agreed up to 16384 when this was
 * written (where layoutBySets holds n sets of up to n blocks: minutes and gigabytes).
 */
function splitWindows(n: number): Pick<SwingBlocks, "order" | "runs"> | undefined {
  const k = Math.ceil(Math.log2(n));
  const [lo, hi] = negabinaryRange(k);
  const away = (r: number, b: number, s: number) => b !== r && sendStepWithin(r, b, n, lo, hi) === s;
  const order = new Int32Array(n);
  for (let j = 0; j < n; j++) order[j] = j;
  const start = new Int32Array(n);
  const size = new Int32Array(n).fill(n);
  // Per window start: the step it was last split at, its size then and how many blocks stayed in front.
  const splitAt = new Int32Array(n).fill(-1);
  const splitSize = new Int32Array(n);
  const kept = new Int32Array(n);
  const covered = new Int32Array(n).fill(-1);
  const moved = new Int32Array(n);
  const from = new Int32Array(n * k);
  const len = new Int32Array(n * k);
  for (let s = 0; s < k; s++) {
    for (let r = 0; r < n; r++) {
      const at = start[r] as number;
      const w = size[r] as number;
      if (splitAt[at] === s) {
        if (splitSize[at] !== w) return undefined;
        continue;
      }
      splitAt[at] = s;
      splitSize[at] = w;
      // Stable: the blocks r keeps first, then those it sends, each in the order they lay in.
      let front = at;
      let back = 0;
      for (let p = at; p < at + w; p++) {
        if (covered[p] === s) return undefined;
        covered[p] = s;
        const b = order[p] as number;
        if (away(r, b, s)) moved[back++] = b;
        else order[front++] = b;
      }
      order.set(moved.subarray(0, back), front);
      kept[at] = front - at;
    }
    for (let r = 0; r < n; r++) {
      const at = start[r] as number;
      const w = size[r] as number;
      const h = kept[at] as number;
      const first = h > 0 && !away(r, order[at] as number, s);
      const second = h < w && !away(r, order[at + h] as number, s);
      if (first === second) return undefined;
      from[s * n + r] = first ? at + h : at;
      len[s * n + r] = first ? w - h : h;
      start[r] = first ? at : at + h;
      size[r] = first ? h : w - h;
    }
  }
  for (let r = 0; r < n; r++) if (size[r] !== 1 || order[start[r] as number] !== r) return undefined;
  return { order, runs: { from, len } };
}

/** swingLayout as sets of blocks per rank, for any rule: O(n² log n), where splitWindows does not apply. */
function layoutBySets(n: number, rule: SendStepRule): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  if ((n & (n - 1)) !== 0) return order;
  const kept = Array.from({ length: n }, () => new Set(order));
  for (let s = 0; 2 ** s < n; s++) {
    const done = new Set<number>();
    for (let r = 0; r < n; r++) {
      const window = kept[r] as Set<number>;
      const at = order.findIndex((b) => window.has(b));
      if (done.has(at)) continue;
      done.add(at);
      const away = new Set(swingChunksAt(r, s, n, rule));
      const part = order.slice(at, at + window.size);
      order.splice(at, window.size, ...part.filter((b) => !away.has(b)), ...part.filter((b) => away.has(b)));
    }
    for (let r = 0; r < n; r++) for (const b of swingChunksAt(r, s, n, rule)) (kept[r] as Set<number>).delete(b);
  }
  return order;
}

/** The blocks a rank sends at a step: positions [from, from + len) of the layout, or a list of blocks in buffer order. */
type Sent = Run | readonly number[];
interface Run {
  readonly from: number;
  readonly len: number;
}
const isRun = (x: Sent): x is Run => !Array.isArray(x);

/**
 * Bandwidth-optimal Swing among n ranks, n even, in place over `out` cut into n chunks: a
 * reduce-scatter of ⌈log2 n⌉ steps (at step s a rank sends π(r, s) the chunks it sends at s,
 * and reduces those π(r, s) sends it), then the same steps backwards as an all-gather. Each chunk
 * leaves a rank once each way, so a rank sends about 2(n-1)/n of the buffer. `rule` says which
 * step a chunk leaves on (swingSendStep; another rule can be tried in its place).
 */
export function* swingReduceScatterAllGather(
  rank: number,
  n: number,
  out: Region,
  chunks: readonly Chunk[],
  tmp: Region,
  stage: () => Region,
  rule: SendStepRule = swingSendStep,
): Schedule {
  invariant(n % 2 === 0 && chunks.length === n, () => `swing: ${chunks.length} chunks for ${n} ranks`);
  const k = Math.ceil(Math.log2(n));
  const { order, pos, runs } = swingBlocks(n, rule);
  // What each rank this one meets sends per step, in buffer order: where the layout's runs apply
  // (n a power of two) a run of positions, read off as it is (no list of up to n/2 blocks per
  // rank and step: at 16,384 ranks those lists made the plans quadratic); else a list of blocks
  // off its send steps (one O(n) pass per rank).
  const lists = new Map<number, number[][]>();
  const sentAt = (r: number, s: number): Sent => {
    if (runs) return { from: runs.from[s * n + r] as number, len: runs.len[s * n + r] as number };
    let perStep = lists.get(r);
    if (!perStep) {
      perStep = Array.from({ length: k }, () => []);
      const steps = swingSendSteps(r, n, rule);
      for (let b = 0; b < n; b++) {
        const t = steps[b] as number;
        if (t >= 0 && t < k && Number.isInteger(t)) (perStep[t] as number[]).push(b);
      }
      for (const l of perStep) l.sort((a, b) => (pos[a] as number) - (pos[b] as number));
      lists.set(r, perStep);
    }
    return perStep[s] as number[];
  };
  const blocksOf = (x: Sent): readonly number[] => (isRun(x) ? Array.from(order.subarray(x.from, x.from + x.len)) : x);
  /** The blocks for a step's label: all of them up to 8, else the first, the last and how many. */
  const named = (x: Sent): string => {
    const len = isRun(x) ? x.len : x.length;
    const at = (j: number) => (isRun(x) ? order[x.from + j] : x[j]) as number;
    return len <= 8 ? blocksOf(x).join(",") : `${at(0)},…,${at(len - 1)} (${len})`;
  };
  const chunk = (r: Region, b: number) => chunkOf(r, chunks[pos[b] as number] as Chunk);
  /** The blocks as one region of `buf` where they lie together, else undefined. */
  const run = (buf: Region, x: Sent): Region | undefined => {
    let first: number;
    let len: number;
    if (isRun(x)) ({ from: first, len } = x);
    else {
      first = pos[x[0] as number] as number;
      len = x.length;
      if (x.some((b, j) => pos[b] !== first + j)) return undefined;
    }
    const a = chunks[first] as Chunk;
    const z = chunks[first + len - 1] as Chunk;
    return sub(buf, a.offset, z.offset + z.count - a.offset);
  };
  /** Blocks packed one after another at the start of `buf`. */
  const packed = (buf: Region, blocks: readonly number[]): Region[] => {
    let at = 0;
    return blocks.map((b) => {
      const c = chunks[pos[b] as number] as Chunk;
      at += c.count;
      return sub(buf, at - c.count, c.count);
    });
  };
  /** The start of `buf` as long as `parts`. */
  const span = (buf: Region, parts: readonly Region[]): Region =>
    sub(
      buf,
      0,
      parts.reduce((a, p) => a + p.count, 0),
    );
  /** One message of the blocks of `from`: in place where they lie together, else packed into `into` first. */
  const outgoing = (from: Region, x: Sent, into: () => Region): [Region, LocalOp[]] => {
    const whole = run(from, x);
    if (whole) return [whole, []];
    const buf = into();
    const blocks = blocksOf(x);
    const parts = packed(buf, blocks);
    return [span(buf, parts), blocks.map((b, j) => copy(parts[j] as Region, chunk(from, b)))];
  };
  for (let s = 0; s < k; s++) {
    const peer = swingPeer(rank, s, n);
    const mine = sentAt(rank, s);
    const theirs = sentAt(peer, s);
    const [msg, pack] = outgoing(out, mine, stage);
    if (pack.length > 0) yield step(`pack chunks ${named(mine)}`, [], pack);
    const label = `recvReduceSend chunks ${named(theirs)} with rank ${peer}`;
    // Received into tmp at their place where they lie together (and so do they in out: one
    // reduce), else packed at its start and reduced block by block.
    const into = run(tmp, theirs);
    if (into) {
      yield step(label, [send(peer, msg), recv(peer, into)], [reduce(run(out, theirs) as Region, into)]);
      continue;
    }
    const blocks = blocksOf(theirs);
    const landing = packed(tmp, blocks);
    yield step(
      label,
      [send(peer, msg), recv(peer, span(tmp, landing))],
      blocks.map((b, j) => reduce(chunk(out, b), landing[j] as Region)),
    );
  }
  for (let s = k - 1; s >= 0; s--) {
    const peer = swingPeer(rank, s, n);
    const theirs = sentAt(peer, s);
    const mine = sentAt(rank, s);
    const [msg, pack] = outgoing(out, theirs, stage);
    if (pack.length > 0) yield step(`pack chunks ${named(theirs)}`, [], pack);
    const label = `recvCopySend chunks ${named(mine)} with rank ${peer}`;
    const whole = run(out, mine);
    if (whole) {
      yield step(label, [send(peer, msg), recv(peer, whole)]);
      continue;
    }
    const blocks = blocksOf(mine);
    const landing = packed(tmp, blocks);
    yield step(
      label,
      [send(peer, msg), recv(peer, span(tmp, landing))],
      blocks.map((b, j) => copy(chunk(out, b), landing[j] as Region)),
    );
  }
}
