/**
 * Bine trees and butterflies (De Sensi, Pasqualoni, Piarulli, Bonato, Ba, Turisini, Domke, Hoefler,
 * "Bine Trees: Enhancing Collective Operations by Optimizing Communication Locality", SC'25):
 * the building blocks of the bine algorithms of every collective.
 *
 * Bine's peers are Swing's (lib/swing.ts): at step s rank r meets π(r, s) = r ± ρ(s), ρ(s) =
 * Σ_{i=0..s} (-2)^i = 1, -1, 3, -5, 11, ..., so a peer 2^s steps away in a binomial tree or a
 * butterfly is only about 2^s/1.5 ranks away, on both sides. Ranks near each other in rank order
 * (the same node, switch or group) therefore exchange more of the data among themselves and less
 * crosses the upper links: the paper's point (its abstract: global-link traffic cut by up to 33%).
 * Only the paper's abstract and introduction were available to cclab, so the headers name its
 * constructions rather than section numbers, and follow the authors' code, cited per function.
 *
 * - The **Bine tree** (the paper's "distance-halving" Bine tree): over p = 2^k vranks
 *   (vrank 0 the root) the holders of the message at step i = 0..k-1 each send it to π(v, k-1-i),
 *   the farthest peer first, as the authors' bine_bcast_small does with negabinary arithmetic
 *   (HLC-Lab/bine-trees, src/bcast.c: the peer is v's negabinary form with its low k-i digits
 *   flipped). Every subtree is a contiguous run of vranks (which is what lets gather and scatter
 *   move a whole subtree as one message, as the authors' gather_bine does), checked here as the
 *   tree is built. Sizes that are not a power of two: the authors' trees refuse them (MPI_ERR_SIZE,
 *   "TODO: implement non-power of two support similarly to standard binomial trees"); cclab folds
 *   as binomial trees do for the recursive algorithms: of the first 2·rem vranks (rem = n - p) the
 *   even one of each pair (2i, 2i+1) stands in the tree of p and the odd one hangs below it as one
 *   more child, its nearest neighbour, so subtrees stay contiguous and the root stays in.
 * - The **Bine butterfly**: reduce-scatter and all-gather with π(r, s) as the peer,
 *   the reduce-scatter nearest first (its largest messages stay local) and the all-gather farthest
 *   first. With ranks renumbered by ν (the authors' nu / remap_rank), ν(π(r, s)) agrees with ν(r)
 *   above bit k-1-s and differs in it, so Bine's butterflies are recursive halving and doubling
 *   (lib/fold.ts) run on ν with π as the peer: the blocks a rank sends at a step lie together in
 *   ν order, as the authors' *_remap variants lay them out.
 */
import { invariant } from "../../src/core/assert.js";
import type { Chunk } from "../../src/schedule/dsl.js";
import { type Fold, isPowerOfTwo, largestPowerOfTwo } from "./fold.js";
import { negabinary, rho, swingPeer } from "./swing.js";

/** ν(r) among n = 2^k ranks: r's negabinary distance from rank 0 (r for odd r, -r for even, or that less n when it fits in k digits), Gray-coded and bit-reversed. */
export function nu(r: number, n: number): number {
  invariant(isPowerOfTwo(n) && r >= 0 && r < n, () => `nu: rank ${r} of ${n} (n must be a power of two)`);
  const k = Math.log2(n);
  const d = r % 2 === 1 ? r : -r;
  // At least one of the two forms fits in k digits (the bijection test checks every n to 2^12).
  const forms = [d, d % 2 === 0 ? d + n : d - n].filter((x) => negabinary(x) >>> k === 0);
  return Math.min(...forms.map((x) => reverseBits(grayOf(negabinary(x)), k)));
}

const grayOf = (x: number): number => (x ^ (x >>> 1)) >>> 0;

/** The low `bits` bits of x (x < 2^bits) in reverse order. */
function reverseBits(x: number, bits: number): number {
  return bits === 0 ? 0 : Number.parseInt([...x.toString(2).padStart(bits, "0")].reverse().join(""), 2);
}

/** ν and its inverse over n = 2^k ranks, as arrays (made once per n: every rank's plan asks for the same). */
export interface Remap {
  /** nu[r] = ν(r). */
  readonly nu: Int32Array;
  /** rank[j]: the rank whose ν is j. */
  readonly rank: Int32Array;
}

/** By n: as many entries as powers of two a call has used. */
const remaps = new Map<number, Remap>();

export function bineRemap(n: number): Remap {
  let made = remaps.get(n);
  if (!made) {
    const nus = new Int32Array(n);
    const rank = new Int32Array(n);
    for (let r = 0; r < n; r++) {
      const j = nu(r, n);
      nus[r] = j;
      rank[j] = r;
    }
    made = { nu: nus, rank };
    remaps.set(n, made);
  }
  return made;
}

/**
 * The peer of participant q of p = 2^k at distance d (a power of two below p) of recursive halving
 * or doubling run on ν (lib/fold.ts): π(q, s) with d = 2^(k-1-s), so halving (d = p/2 first) meets
 * the nearest peer first.
 */
export function butterflyPeer(q: number, p: number): (d: number) => number {
  const k = Math.log2(p);
  return (d) => swingPeer(q, k - 1 - Math.log2(d), p);
}

/**
 * A buffer of n·count elements (n ranks folded onto p participants by `fold`) cut into p chunks in
 * ν order: chunk j holds the blocks of participant q with ν(q) = j, the ranks [fold.first(q),
 * fold.first(q + 1)), so recursive halving and doubling on ν find each step's blocks together.
 */
export function nuChunks(fold: Fold, count: number): Chunk[] {
  const { rank } = bineRemap(fold.pof2);
  const chunks: Chunk[] = [];
  let offset = 0;
  for (let j = 0; j < fold.pof2; j++) {
    const q = rank[j] as number;
    const c = (fold.first(q + 1) - fold.first(q)) * count;
    chunks.push({ offset, count: c });
    offset += c;
  }
  return chunks;
}

/** One vrank's place in a Bine tree over n vranks (vrank 0 the root). */
export interface BineNode {
  /** Parent vrank; -1 at the root. */
  readonly parent: number;
  /** Child vranks in the order a broadcast sends to them (largest subtree first). */
  readonly children: readonly number[];
  /** The subtree is the vranks [first, first + subtree); the root's is [0, n). */
  readonly first: number;
  readonly subtree: number;
}

/** The Bine tree over p = 2^k vranks: parents, children in send order, and each subtree's run. */
interface CoreTree {
  readonly parent: Int32Array;
  readonly children: readonly number[][];
  readonly first: Int32Array;
  readonly subtree: Int32Array;
}

/** By p: as many entries as powers of two a call has used. */
const cores = new Map<number, CoreTree>();

function coreTree(p: number): CoreTree {
  let made = cores.get(p);
  if (!made) {
    made = makeCoreTree(p);
    cores.set(p, made);
  }
  return made;
}

/**
 * The tree by its definition: at step s = k-1 down to 0 every holder v sends to π(v, s). That
 * this reaches every vrank once (the authors' tree) and that each subtree is the run of vranks
 * [first, first + subtree) are what test/bine.test.ts proves for every power of two to 1024.
 */
function makeCoreTree(p: number): CoreTree {
  const k = Math.log2(p);
  const parent = new Int32Array(p);
  const offset = new Int32Array(p); // signed distance from the parent: ±ρ(s)
  const children: number[][] = Array.from({ length: p }, () => []);
  const order = [0]; // vranks in the order they receive
  for (let s = k - 1; s >= 0; s--) {
    for (const v of order.slice()) {
      const c = swingPeer(v, s, p);
      parent[c] = v;
      offset[c] = v % 2 === 0 ? rho(s) : -rho(s);
      (children[v] as number[]).push(c);
      order.push(c);
    }
  }
  // A subtree reaches `below` vranks under its root: the most any child's reaches past it.
  const below = new Int32Array(p);
  const size = new Int32Array(p).fill(1);
  const visit = (v: number): void => {
    for (const c of children[v] as number[]) {
      visit(c);
      below[v] = Math.max(below[v] as number, (below[c] as number) - (offset[c] as number));
      size[v] = (size[v] as number) + (size[c] as number);
    }
  };
  visit(0);
  // A run that holds no multiple of p (not the root's) lies inside (0, p): no wrap.
  const first = Int32Array.from(below, (b, v) => v - b);
  return { parent, children, first, subtree: size };
}

/**
 * vrank's node in the Bine tree over n vranks. With rem = n - 2^⌊log2 n⌋, vranks 2i and 2i+1
 * (i < rem) are one participant of the tree of 2^⌊log2 n⌋: 2i stands in it and 2i+1 is its
 * last child, a leaf.
 */
export function bineTree(vrank: number, n: number): BineNode {
  invariant(
    Number.isInteger(vrank) && vrank >= 0 && vrank < n,
    () => `bineTree: vrank ${vrank} is outside 0..${n - 1}`,
  );
  const p = largestPowerOfTwo(n);
  const rem = n - p;
  if (vrank % 2 === 1 && vrank >> 1 < rem) return { parent: vrank - 1, children: [], first: vrank, subtree: 1 };
  /** The first real vrank of participant q (of q = p: n). */
  const real = (q: number): number => q + Math.min(q, rem);
  const core = coreTree(p);
  const q = vrank - Math.min(rem, vrank >> 1);
  const children = (core.children[q] as number[]).map(real);
  if (q < rem) children.push(vrank + 1);
  if (q === 0) return { parent: -1, children, first: 0, subtree: n };
  const from = core.first[q] as number;
  const first = real(from);
  return {
    parent: real(core.parent[q] as number),
    children,
    first,
    subtree: real(from + (core.subtree[q] as number)) - first,
  };
}

/** The most elements a non-root rank forwards up or down a Bine tree with `count` per rank: its largest subtree. */
export function bineLargestSubtree(n: number): number {
  let most = 0;
  for (let v = 1; v < n; v++) most = Math.max(most, bineTree(v, n).subtree);
  return most;
}
