/**
 * Swing on a D-dimensional torus or mesh (De Sensi, Bonato, Saam, Hoefler, "Swing: Short-cutting
 * Rings for Higher Bandwidth Allreduce", NSDI 2024, Section 4): the building block of
 * allreduce/swing_latency and allreduce/swing_bandwidth when a call carries a torus or mesh shape.
 *
 * Each step moves along one dimension: a rank at coordinate x in dimension d talks to x ± ρ(j) in
 * that dimension (+ for even x, - for odd, ρ(j) = 1, -1, 3, -5, ... as in one dimension, j the
 * dimension's own step count), and the steps go round the dimensions in turn, a dimension dropping
 * out once its log2 A steps are done. Multiport: the vector is split into 2D parts and 2D such
 * collectives run at once, collective i starting on dimension i mod D, the last D of them mirrored
 * (every distance negated), so a rank drives all of its 2D links at every step. A dimension whose
 * size is not a power of two is folded first, dimension by dimension, as the authors' library does
 * (libswing's shrink_non_power_of_two and enlarge_non_power_of_two): the ranks at coordinates
 * v..A-1 (v the largest power of two below A) hand their vector to the ranks A-v below them and get
 * the result back at the end; the core runs on the v-sized grid.
 *
 * The bandwidth-optimal form is a reduce-scatter and an all-gather over the same steps: at a step a
 * rank sends its peer the blocks its peer's side reaches in the steps left (a product of the
 * one-dimensional Swing's halves, so every block leaves a rank once each way). The blocks of each
 * collective are laid out so that every such set lies together (the authors remap blocks alike):
 * one message per collective and step, no packing.
 */
import { invariant } from "../../src/core/assert.js";
import { InvalidArgumentError } from "../../src/core/errors.js";
import {
  type Chunk,
  type LocalOp,
  partition,
  type Region,
  recv,
  reduce,
  type Schedule,
  send,
  step,
  sub,
  type Transfer,
} from "../../src/schedule/dsl.js";
import type { Shape } from "../../src/specs/types.js";
import { largestPowerOfTwo } from "./fold.js";
import { mod } from "./ring.js";
import { rho } from "./swing.js";

/** A shape Swing runs on in several dimensions. */
export type GridShape = Extract<Shape, { readonly dims: readonly number[] }> & { readonly family: "torus" | "mesh" };

/** Whether a call's shape is a torus or mesh (Swing's multidimensional form); a ring or none is the flat one. */
export const isGrid = (s: Shape | undefined): s is GridShape => s?.family === "torus" || s?.family === "mesh";

/** One of the 2D concurrent collectives: the dimension and that dimension's step of each of its steps. */
export interface SwingPort {
  readonly dims: readonly number[];
  readonly steps: readonly number[];
  /** The mirrored collectives negate every distance. */
  readonly mirrored: boolean;
}

/** Swing's view of a torus or mesh. */
export interface SwingGrid {
  readonly name: string;
  /** A_d, and the core v_d each is folded to (the largest power of two <= A_d). */
  readonly dims: readonly number[];
  readonly core: readonly number[];
  /** Ranks in the core, Π v_d. */
  readonly coreSize: number;
  /** The steps of each collective on the core, Σ log2 v_d. */
  readonly steps: number;
  readonly ports: readonly SwingPort[];
  /** Dimensions folded (A_d not a power of two). */
  readonly folded: number;
  /** Host h holds rank rankAt[h]; rank r sits on host hostOf[r]. */
  readonly rankAt: Int32Array;
  readonly hostOf: readonly number[];
}

const grids = new WeakMap<GridShape, SwingGrid>();

/**
 * The grid of `shape` for algorithm `who` (named in errors), checked: Swing's torus form needs
 * one rank on every host of the machine.
 */
export function swingGrid(shape: GridShape, who: string, rank?: number): SwingGrid {
  let g = grids.get(shape);
  if (g) return g;
  const size = shape.hostOf.length;
  const hosts = shape.dims.reduce((a, b) => a * b, 1);
  const site = { ...(rank !== undefined ? { rank } : {}), op: who, arg: "--topology" };
  if (size !== hosts)
    throw new InvalidArgumentError(
      site,
      `Swing on '${shape.name}' runs one rank on each of its ${hosts} hosts, got ${size} ranks: give -n ${hosts}, or a topology of ${size} hosts`,
    );
  const rankAt = new Int32Array(hosts).fill(-1);
  shape.hostOf.forEach((h, r) => {
    if (rankAt[h] !== -1)
      throw new InvalidArgumentError(
        site,
        `Swing on '${shape.name}' runs one rank per host, but ranks ${rankAt[h]} and ${r} share host ${h}: use --placement block, round-robin or a file naming each host once`,
      );
    rankAt[h] = r;
  });
  const dims = [...shape.dims];
  const core = dims.map(largestPowerOfTwo);
  const perDim = core.map((v) => Math.log2(v));
  const active = dims.map((_, d) => d).filter((d) => (perDim[d] as number) > 0);
  const ports: SwingPort[] = [];
  for (let i = 0; i < 2 * active.length; i++) {
    const seq: number[] = [];
    const js: number[] = [];
    const next = dims.map(() => 0);
    // Round-robin over the dimensions from this collective's own, skipping the finished ones.
    let at = i % active.length;
    for (let left = active.length; left > 0; at = (at + 1) % active.length) {
      const d = active[at] as number;
      const j = next[d] as number;
      if (j >= (perDim[d] as number)) continue;
      seq.push(d);
      js.push(j);
      next[d] = j + 1;
      if (j + 1 === perDim[d]) left--;
    }
    ports.push({ dims: seq, steps: js, mirrored: i >= active.length });
  }
  g = {
    name: shape.name,
    dims,
    core,
    coreSize: core.reduce((a, b) => a * b, 1),
    steps: perDim.reduce((a, b) => a + b, 0),
    ports,
    folded: dims.filter((a, d) => a !== core[d]).length,
    rankAt,
    hostOf: shape.hostOf,
  };
  grids.set(shape, g);
  return g;
}

/** Coordinates of host h (dimension 0 varies fastest, as the network model numbers hosts). */
export function coordsOf(dims: readonly number[], h: number): number[] {
  const x: number[] = [];
  for (const a of dims) {
    x.push(h % a);
    h = Math.floor(h / a);
  }
  return x;
}

/** The index of coordinates x in a grid of `dims` (dimension 0 fastest). */
export function indexOf(dims: readonly number[], x: readonly number[]): number {
  let i = 0;
  for (let d = dims.length - 1; d >= 0; d--) i = i * (dims[d] as number) + (x[d] as number);
  return i;
}

/** The core coordinates of collective `port`'s peer at step s of the core coordinates x. */
export function corePeer(g: SwingGrid, port: SwingPort, x: readonly number[], s: number): number[] {
  const d = port.dims[s] as number;
  const xd = x[d] as number;
  const sign = (xd % 2 === 0 ? 1 : -1) * (port.mirrored ? -1 : 1);
  const y = [...x];
  y[d] = mod(xd + sign * rho(port.steps[s] as number), g.core[d] as number);
  return y;
}

/** The rank at core (or real) coordinates x. */
const rankAtCoords = (g: SwingGrid, x: readonly number[]): number => g.rankAt[indexOf(g.dims, x)] as number;

/** The fold partner of coordinates x in dimension d (x_d ± (A_d - v_d)). */
function partner(g: SwingGrid, x: readonly number[], d: number, by: number): number {
  const y = [...x];
  y[d] = (x[d] as number) + by;
  return rankAtCoords(g, y);
}

/**
 * Runs `core` on the core grid, with the fold around it: the ranks outside the core in a folded
 * dimension hand their vector in, dimension by dimension, and get the result back in the reverse
 * order. `out` holds the rank's vector (in place), `tmp()` is a scratch of the same size.
 */
export function* folded(
  g: SwingGrid,
  rank: number,
  out: Region,
  tmp: () => Region,
  core: (x: readonly number[]) => Schedule,
): Schedule {
  const x = coordsOf(g.dims, g.hostOf[rank] as number);
  // The first folded dimension in which this rank lies outside the core (it hands its vector in there).
  let outAt = g.dims.length;
  for (let d = 0; d < g.dims.length; d++) {
    const e = (g.dims[d] as number) - (g.core[d] as number);
    if (e === 0) continue;
    if ((x[d] as number) >= (g.core[d] as number)) {
      const peer = partner(g, x, d, -e);
      yield step(`fold: send to rank ${peer} (dimension ${d})`, [send(peer, out)]);
      outAt = d;
      break;
    }
    if ((x[d] as number) + e >= (g.core[d] as number)) {
      const peer = partner(g, x, d, e);
      const t = tmp();
      yield step(`fold: recv from rank ${peer} (dimension ${d})`, [recv(peer, t)], [reduce(out, t)]);
    }
  }
  if (outAt === g.dims.length) yield* core(x);
  for (let d = Math.min(outAt, g.dims.length - 1); d >= 0; d--) {
    const e = (g.dims[d] as number) - (g.core[d] as number);
    if (e === 0) continue;
    if (d === outAt) {
      const peer = partner(g, x, d, -e);
      yield step(`unfold: recv from rank ${peer} (dimension ${d})`, [recv(peer, out)]);
    } else if ((x[d] as number) + e >= (g.core[d] as number)) {
      const peer = partner(g, x, d, e);
      yield step(`unfold: send to rank ${peer} (dimension ${d})`, [send(peer, out)]);
    }
  }
}

/** The vector's part per collective: 2D parts (MPICH's uneven split), the empty ones left out. */
export function portParts(g: SwingGrid, count: number): { readonly port: SwingPort; readonly part: Chunk }[] {
  const parts = partition(count, g.ports.length);
  return g.ports.map((port, i) => ({ port, part: parts[i] as Chunk })).filter((p) => p.part.count > 0);
}

/**
 * Latency-optimal Swing on the core: log2 Π v_d steps, at each of which every collective sends its
 * whole part to its peer and reduces what the peer sends back (all 2D parts in one step, as the
 * authors' library posts every port's send and receive before waiting on any).
 */
export function* swingGridLatency(g: SwingGrid, x: readonly number[], out: Region, tmp: Region): Schedule {
  const parts = portParts(g, out.count);
  for (let s = 0; s < g.steps; s++) {
    const transfers: Transfer[] = [];
    const local: LocalOp[] = [];
    const peers: number[] = [];
    for (const { port, part } of parts) {
      const peer = rankAtCoords(g, corePeer(g, port, x, s));
      const mine = sub(out, part.offset, part.count);
      const theirs = sub(tmp, part.offset, part.count);
      transfers.push(send(peer, mine), recv(peer, theirs));
      local.push(reduce(mine, theirs));
      peers.push(peer);
    }
    yield step(`swing step ${s}: exchange with ranks ${[...new Set(peers)].join(",")}`, transfers, local);
  }
}

/**
 * The blocks of one collective: block b (the core rank at core index b) is chunk pos[b] of the
 * collective's part; from[s·N + b] is where the blocks b's side reaches in steps s.. (2^(K-s) of
 * them) start. Every such set lies together (checked when built).
 */
interface PortBlocks {
  readonly pos: Int32Array;
  readonly from: Int32Array;
}

const blocksMade = new WeakMap<SwingPort, PortBlocks>();

/** The layout of collective `port`'s blocks: core ranks sorted by their side at every step, coarse first. */
export function portBlocks(g: SwingGrid, port: SwingPort): PortBlocks {
  let made = blocksMade.get(port);
  if (made) return made;
  const N = g.coreSize;
  const K = g.steps;
  // side[s·N + b]: the smallest core index b's side reaches at step s (side K: b alone).
  const side = new Int32Array((K + 1) * N);
  for (let b = 0; b < N; b++) side[K * N + b] = b;
  const coords = Array.from({ length: N }, (_, b) => coordsOf(g.core, b));
  for (let s = K - 1; s >= 0; s--) {
    for (let b = 0; b < N; b++) {
      const q = indexOf(g.core, corePeer(g, port, coords[b] as number[], s));
      side[s * N + b] = Math.min(side[(s + 1) * N + b] as number, side[(s + 1) * N + q] as number);
    }
  }
  const order = Array.from({ length: N }, (_, b) => b);
  order.sort((a, b) => {
    for (let s = 1; s <= K; s++) {
      const d = (side[s * N + a] as number) - (side[s * N + b] as number);
      if (d !== 0) return d;
    }
    return 0;
  });
  const pos = new Int32Array(N);
  order.forEach((b, j) => {
    pos[b] = j;
  });
  const from = new Int32Array((K + 1) * N).fill(N);
  for (let s = 0; s <= K; s++) {
    const start = new Map<number, number>();
    for (let j = 0; j < N; j++) {
      const id = side[s * N + (order[j] as number)] as number;
      if (!start.has(id)) start.set(id, j);
    }
    for (let b = 0; b < N; b++) {
      const at = start.get(side[s * N + b] as number) as number;
      from[s * N + b] = at;
      // Each side of 2^(K-s) blocks lies together: the side's blocks fill [at, at + 2^(K-s)).
      invariant(
        side[s * N + (order[at + 2 ** (K - s) - 1] as number)] === side[s * N + b] &&
          (at === 0 || side[s * N + (order[at - 1] as number)] !== side[s * N + b]),
        () => `swing on ${g.name}: the side of core rank ${b} at step ${s} does not lie together`,
      );
    }
  }
  made = { pos, from };
  blocksMade.set(port, made);
  return made;
}

/**
 * Bandwidth-optimal Swing on the core: each collective's part cut into Π v_d blocks; a
 * reduce-scatter (at step s a rank sends its peer the blocks the peer's side reaches in steps s+1..,
 * and reduces those it receives) then the same steps backwards as an all-gather.
 */
export function* swingGridBandwidth(g: SwingGrid, x: readonly number[], out: Region, tmp: Region): Schedule {
  const N = g.coreSize;
  const K = g.steps;
  const me = indexOf(g.core, x);
  const parts = portParts(g, out.count).map(({ port, part }) => ({
    port,
    part,
    chunks: partition(part.count, N),
    blocks: portBlocks(g, port),
  }));
  type Part = (typeof parts)[number];
  /** The region of `buf` holding the side of core rank b at step s in part p. */
  const side = (p: Part, buf: Region, b: number, s: number): Region => {
    const at = p.blocks.from[s * N + b] as number;
    const a = p.chunks[at] as Chunk;
    const z = p.chunks[at + 2 ** (K - s) - 1] as Chunk;
    return sub(buf, p.part.offset + a.offset, z.offset + z.count - a.offset);
  };
  const peerOf = (p: Part, s: number) => indexOf(g.core, corePeer(g, p.port, x, s));
  for (let s = 0; s < K; s++) {
    const transfers: Transfer[] = [];
    const local: LocalOp[] = [];
    for (const p of parts) {
      const q = peerOf(p, s);
      const peer = g.rankAt[indexOf(g.dims, coordsOf(g.core, q))] as number;
      const theirs = side(p, out, q, s + 1);
      const mine = side(p, tmp, me, s + 1);
      if (theirs.count > 0) transfers.push(send(peer, theirs));
      if (mine.count > 0) {
        transfers.push(recv(peer, mine));
        local.push(reduce(side(p, out, me, s + 1), mine));
      }
    }
    if (transfers.length > 0) yield step(`swing reduce-scatter step ${s}`, transfers, local);
  }
  for (let s = K - 1; s >= 0; s--) {
    const transfers: Transfer[] = [];
    for (const p of parts) {
      const q = peerOf(p, s);
      const peer = g.rankAt[indexOf(g.dims, coordsOf(g.core, q))] as number;
      const mine = side(p, out, me, s + 1);
      const theirs = side(p, out, q, s + 1);
      if (mine.count > 0) transfers.push(send(peer, mine));
      if (theirs.count > 0) transfers.push(recv(peer, theirs));
    }
    if (transfers.length > 0) yield step(`swing all-gather step ${s}`, transfers);
  }
}

/**
 * What the busiest rank sends, in elements, for a call of `count` on grid g: `core` its sends in
 * the core collective for core index b, plus a whole vector per folded dimension where it hands
 * the result back.
 */
export function mostSentOnGrid(g: SwingGrid, count: number, core: (b: number) => number): number {
  let most = 0;
  for (let h = 0; h < g.rankAt.length; h++) {
    const x = coordsOf(g.dims, h);
    let out = -1;
    let back = 0;
    for (let d = 0; d < g.dims.length && out < 0; d++) {
      const e = (g.dims[d] as number) - (g.core[d] as number);
      if (e === 0) continue;
      if ((x[d] as number) >= (g.core[d] as number)) out = d;
      else if ((x[d] as number) + e >= (g.core[d] as number)) back++;
    }
    const sent = out >= 0 ? count + back * count : core(indexOf(g.core, x)) + back * count;
    most = Math.max(most, sent);
  }
  return most;
}

/** Elements core rank b sends in the bandwidth-optimal core for a vector of `count`. */
export function bandwidthSent(g: SwingGrid, count: number, b: number): number {
  const N = g.coreSize;
  const K = g.steps;
  let sent = 0;
  for (const { port, part } of portParts(g, count)) {
    const chunks = partition(part.count, N);
    const { from } = portBlocks(g, port);
    const x = coordsOf(g.core, b);
    // Elements before position j of the layout: a side's size is one difference.
    const before = (j: number) => (j < N ? (chunks[j] as Chunk).offset : part.count);
    const size = (c: number, s: number) => {
      const at = from[s * N + c] as number;
      return before(at + 2 ** (K - s)) - before(at);
    };
    for (let s = 0; s < K; s++) {
      const q = indexOf(g.core, corePeer(g, port, x, s));
      sent += size(q, s + 1) + size(b, s + 1);
    }
  }
  return sent;
}
