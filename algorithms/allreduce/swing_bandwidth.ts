/**
 * allreduce/swing_bandwidth: Swing, bandwidth-optimal: a ⌈log2 n⌉-step reduce-scatter over n chunks
 * with the swinging peers r ± ρ(s), then the same steps backwards as an all-gather.
 *
 * Limits: any size, commutative ops; long messages at log latency: each chunk leaves a rank once
 *         each way (2(n-1)/n·count for any even n, not only powers of two); one message each way
 *         per step: for n a power of two the blocks are laid out as the steps split them, so each
 *         step's blocks lie together (the authors remap blocks likewise), elsewhere they are packed
 *         through scratch; odd n: π(r, s) is not mutual, so the last rank folds into rank n-2
 *         (cclab's choice: whole buffer in and out, two extra steps); with --topology torus:AxB...
 *         or mesh:AxB... (one rank per host) the paper's D-dimensional form: 2D collectives at once
 *         (plain and mirrored, one per port) on 1/(2D) of the vector each, each step in one
 *         dimension, blocks laid out so each message is one run; dimensions not a power of two
 *         folded whole-buffer into the largest power of two below them (cclab's choice, as
 *         libswing's latency-optimal form; the paper's one-dimensional rule above is not carried to
 *         several dimensions); with a ring or no topology the one-dimensional schedule on the rank
 *         line, which the alpha-beta model times as Rabenseifner at a power of two.
 * Cost:   2⌈log2 n'⌉ (n' = n, or n - 1 for odd n; +2 for odd n) steps; busiest rank's count - own
 *         chunk + chunks its peers sent it, = 2(n'-1)/n'·count when n' divides it; + count on rank
 *         n - 2 for odd n elements sent per rank.
 * Source: De Sensi, Bonato, Saam, Hoefler, Swing: Short-cutting Rings for Higher Bandwidth
 *         Allreduce (NSDI 2024): π and ρ as its Section 3.1 defines them, and for even n not a
 *         power of two its Section 3.2's rule (no block sent twice), computed as the authors'
 *         libswing does (HLC-Lab/bine_trees_fugaku, compute_valid_distances); for odd n the paper's
 *         last rank trades (n-1)/2^s single blocks at each step, where cclab folds it (limits); on
 *         a torus or mesh its Section 4: the dimensions in turn and the 2D plain and mirrored
 *         collectives at once, one per port (peers as libswing's compute_peers; blocks remapped so
 *         each step's blocks lie together, as libswing's remap_ranks).
 *
 * Step table: `cclab explain allreduce --algorithm swing_bandwidth -n 4`
 * (kept current in test/golden/explain/allreduce/swing_bandwidth.txt).
 * On a torus: `cclab explain allreduce --algorithm swing_bandwidth --topology torus:2x2`
 * (kept current in test/golden/explain/allreduce/swing_bandwidth.torus-2x2.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, partition, type Region } from "../../src/schedule/dsl.js";
import { swingLayout, swingReceived, swingReduceScatterAllGather, tailFolded } from "../lib/swing.js";
import {
  bandwidthSent,
  folded,
  isGrid,
  mostSentOnGrid,
  type SwingGrid,
  swingGrid,
  swingGridBandwidth,
} from "../lib/swing_torus.js";

/** The cost on a torus or mesh: a reduce-scatter and an all-gather of Σ log2 v_d steps each on the core, a fold and an unfold per folded dimension. */
const gridCost = (g: SwingGrid) => ({
  steps: f(
    "2·Σ log2 v_d (v_d: the largest power of two <= A_d) + 2 per dimension not a power of two",
    () => 2 * g.steps + 2 * g.folded,
  ),
  sent: f(
    "the busiest rank's blocks each way (2(N-1)/N·count on a core of N ranks when 2D·N divides it) + count per dimension it unfolds",
    (_n: number, count: number) => mostSentOnGrid(g, count, (b) => bandwidthSent(g, count, b)),
  ),
  exact: (_n: number, count: number) => count >= g.ports.length * g.coreSize,
});

/** The even number of ranks the core runs on: n, or n - 1 for odd n (the last rank folds into rank n - 2). */
const core = (n: number) => n - (n % 2);

/**
 * The busiest rank's elements sent: in the reduce-scatter every chunk but its own, in the
 * all-gather back what its peers sent it; + count for rank n - 2, which hands an odd n's last
 * rank the result.
 */
function mostSent(n: number, count: number): number {
  const m = core(n);
  // Block b lies at position j of the buffer (swingLayout) and has that position's chunk's size.
  const sizes = partition(count, m).map((x) => x.count);
  const order = swingLayout(m);
  const received = swingReceived(m, sizes);
  let most = 0;
  for (let j = 0; j < m; j++) {
    const r = order[j] as number;
    // Rank m - 1 hands an odd n's last rank the result.
    const sent = count - (sizes[j] as number) + (r === m - 1 && n > m ? count : 0) + (received[r] as number);
    most = Math.max(most, sent);
  }
  return most;
}

export const swingBandwidth = defineAlgorithm({
  collective: "allreduce",
  name: "swing_bandwidth",
  summary:
    "Swing, bandwidth-optimal: a ⌈log2 n⌉-step reduce-scatter over n chunks with the swinging peers r ± ρ(s), then the same steps backwards as an all-gather.",
  limits:
    "any size, commutative ops; long messages at log latency: each chunk leaves a rank once each way (2(n-1)/n·count for any even n, not only powers of two); one message each way per step: for n a power of two the blocks are laid out as the steps split them, so each step's blocks lie together (the authors remap blocks likewise), elsewhere they are packed through scratch; odd n: π(r, s) is not mutual, so the last rank folds into rank n-2 (cclab's choice: whole buffer in and out, two extra steps); with --topology torus:AxB... or mesh:AxB... (one rank per host) the paper's D-dimensional form: 2D collectives at once (plain and mirrored, one per port) on 1/(2D) of the vector each, each step in one dimension, blocks laid out so each message is one run; dimensions not a power of two folded whole-buffer into the largest power of two below them (cclab's choice, as libswing's latency-optimal form; the paper's one-dimensional rule above is not carried to several dimensions); with a ring or no topology the one-dimensional schedule on the rank line, which the alpha-beta model times as Rabenseifner at a power of two",
  source:
    "De Sensi, Bonato, Saam, Hoefler, Swing: Short-cutting Rings for Higher Bandwidth Allreduce (NSDI 2024): π and ρ as its Section 3.1 defines them, and for even n not a power of two its Section 3.2's rule (no block sent twice), computed as the authors' libswing does (HLC-Lab/bine_trees_fugaku, compute_valid_distances); for odd n the paper's last rank trades (n-1)/2^s single blocks at each step, where cclab folds it (limits); on a torus or mesh its Section 4: the dimensions in turn and the 2D plain and mirrored collectives at once, one per port (peers as libswing's compute_peers; blocks remapped so each step's blocks lie together, as libswing's remap_ranks)",
  form: "in-place",
  cost: {
    steps: f("2⌈log2 n'⌉ (n' = n, or n - 1 for odd n; +2 for odd n)", (n) => {
      const m = core(n);
      return 2 * Math.ceil(Math.log2(m)) + (n > m ? 2 : 0);
    }),
    sent: f(
      "busiest rank's count - own chunk + chunks its peers sent it, = 2(n'-1)/n'·count when n' divides it; + count on rank n - 2 for odd n",
      mostSent,
    ),
  },
  topology: {
    families: ["torus", "mesh"],
    cost: (shape) => gridCost(swingGrid(shape as Parameters<typeof swingGrid>[0], "allreduce/swing_bandwidth")),
  },
  *schedule({ rank, size, count, shape }, { output, scratch }) {
    let tmp: Region | undefined;
    let stage: Region | undefined;
    const t = () => (tmp ??= scratch(count));
    if (isGrid(shape)) {
      const g = swingGrid(shape, "allreduce/swing_bandwidth", rank);
      yield* folded(g, rank, output, t, (x) => swingGridBandwidth(g, x, output, t()));
      return;
    }
    const m = core(size);
    yield* tailFolded(rank, size, m, output, t, () =>
      swingReduceScatterAllGather(rank, m, output, partition(count, m), t(), () => (stage ??= scratch(count))),
    );
  },
});
