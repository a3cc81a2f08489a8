/**
 * allreduce/swing_latency: Swing, latency-optimal: log2 n whole-buffer exchanges, at step s with
 * rank r ± ρ(s), ρ = 1, -1, 3, -5, 11, ... (peers swing left and right, so they stay close on a
 * ring or torus).
 *
 * Limits: any size, commutative ops; short messages; floats: ranks may end with different last bits
 *         (not NCCL's every-rank-identical result); every step sends the whole buffer; n not a
 *         power of two: the last n - p ranks (p = 2^⌊log2 n⌋) fold into the ranks n - p below them
 *         and get the result back (two extra steps); with --topology torus:AxB... or mesh:AxB...
 *         (one rank per host) the paper's D-dimensional form: each step in one dimension, 2D
 *         collectives at once (plain and mirrored, one per port) on 1/(2D) of the vector each,
 *         dimensions not a power of two folded whole-buffer into the largest power of two below
 *         them; with a ring or no topology the one-dimensional schedule on the rank line, which the
 *         alpha-beta model times as recursive doubling.
 * Cost:   ⌊log2 n⌋ (+2 when n is not a power of two) steps; (⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0))·count
 *         elements sent per rank.
 * Source: De Sensi, Bonato, Saam, Hoefler, Swing: Short-cutting Rings for Higher Bandwidth
 *         Allreduce (NSDI 2024): π and ρ as its Section 3.1 defines them; sizes not a power of two
 *         fold as the paper's Section 2.3.2 describes for recursive doubling and the authors'
 *         libswing does (HLC-Lab/bine_trees_fugaku, shrink/enlarge_non_power_of_two); on a torus or
 *         mesh its Section 4 (dimensions in turn, the multiport 2D collectives), peers as
 *         libswing's compute_peers.
 *
 * Step table: `cclab explain allreduce --algorithm swing_latency -n 4`
 * (kept current in test/golden/explain/allreduce/swing_latency.txt).
 * On a torus: `cclab explain allreduce --algorithm swing_latency --topology torus:2x2`
 * (kept current in test/golden/explain/allreduce/swing_latency.torus-2x2.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, type Region } from "../../src/schedule/dsl.js";
import { foldedSteps, isPowerOfTwo, largestPowerOfTwo } from "../lib/fold.js";
import { swingExchanges, tailFolded } from "../lib/swing.js";
import { folded, isGrid, type SwingGrid, swingGrid, swingGridLatency } from "../lib/swing_torus.js";

/** The cost on a torus or mesh: Σ log2 v_d steps on the core, a fold and an unfold per folded dimension. */
const gridCost = (g: SwingGrid) => ({
  steps: f(
    "Σ log2 v_d (v_d: the largest power of two <= A_d) + 2 per dimension not a power of two",
    () => g.steps + 2 * g.folded,
  ),
  sent: f(
    "(Σ log2 v_d + dimensions not a power of two)·count",
    (_n: number, count: number) => (g.steps + g.folded) * count,
  ),
});

export const swingLatency = defineAlgorithm({
  collective: "allreduce",
  name: "swing_latency",
  summary:
    "Swing, latency-optimal: log2 n whole-buffer exchanges, at step s with rank r ± ρ(s), ρ = 1, -1, 3, -5, 11, ... (peers swing left and right, so they stay close on a ring or torus).",
  limits:
    "any size, commutative ops; short messages; floats: ranks may end with different last bits (not NCCL's every-rank-identical result); every step sends the whole buffer; n not a power of two: the last n - p ranks (p = 2^⌊log2 n⌋) fold into the ranks n - p below them and get the result back (two extra steps); with --topology torus:AxB... or mesh:AxB... (one rank per host) the paper's D-dimensional form: each step in one dimension, 2D collectives at once (plain and mirrored, one per port) on 1/(2D) of the vector each, dimensions not a power of two folded whole-buffer into the largest power of two below them; with a ring or no topology the one-dimensional schedule on the rank line, which the alpha-beta model times as recursive doubling",
  source:
    "De Sensi, Bonato, Saam, Hoefler, Swing: Short-cutting Rings for Higher Bandwidth Allreduce (NSDI 2024): π and ρ as its Section 3.1 defines them; sizes not a power of two fold as the paper's Section 2.3.2 describes for recursive doubling and the authors' libswing does (HLC-Lab/bine_trees_fugaku, shrink/enlarge_non_power_of_two); on a torus or mesh its Section 4 (dimensions in turn, the multiport 2D collectives), peers as libswing's compute_peers",
  form: "in-place",
  ranksDiffer:
    "each rank sums the n contributions grouped by its own swing peers (rank 0 of 8: ((x0+x1)+(x7+x6))+..., rank 1: ((x1+x0)+(x2+x3))+...), so floating-point sums differ between ranks in the last bits; integer and min/max results agree",
  cost: {
    steps: f("⌊log2 n⌋ (+2 when n is not a power of two)", foldedSteps),
    sent: f(
      "(⌊log2 n⌋ + (n ≠ 2^k ? 1 : 0))·count",
      (n, count) => (Math.log2(largestPowerOfTwo(n)) + (isPowerOfTwo(n) ? 0 : 1)) * count,
    ),
  },
  topology: {
    families: ["torus", "mesh"],
    cost: (shape) => gridCost(swingGrid(shape as Parameters<typeof swingGrid>[0], "allreduce/swing_latency")),
  },
  *schedule({ rank, size, count, shape }, { output, scratch }) {
    let tmp: Region | undefined;
    const t = () => (tmp ??= scratch(count));
    if (isGrid(shape)) {
      const g = swingGrid(shape, "allreduce/swing_latency", rank);
      yield* folded(g, rank, output, t, (x) => swingGridLatency(g, x, output, t()));
      return;
    }
    const p = largestPowerOfTwo(size);
    yield* tailFolded(rank, size, p, output, t, () => swingExchanges(rank, p, output, t()));
  },
});
