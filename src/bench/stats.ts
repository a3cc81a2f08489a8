/**
 * What a row's timings say on a shared machine. Each variant is timed in rounds (a batch of
 * back-to-back calls after a barrier, the maximum over ranks of the batch's mean per call); a rare
 * stall (a rank spinning while its peer is off the CPU) lands in one round and moves the mean,
 * not the median. So every row reports the rounds' min, median and max beside nccl-tests' mean
 * (all calls' total time / calls), and the ratio column compares medians; the mean ratio is
 * printed beside it.
 */

export interface Spread {
  /** Microseconds per call: the fastest, middle and slowest round. */
  readonly min: number;
  readonly median: number;
  readonly max: number;
  /** nccl-tests' number: total time over all calls (rounds weighted by their calls). */
  readonly mean: number;
  /** Rounds the spread is over. */
  readonly rounds: number;
}

/** The spread of per-round times `us[i]` (µs per call) with `calls[i]` calls each. */
export function spread(us: readonly number[], calls: readonly number[]): Spread {
  if (us.length === 0 || us.length !== calls.length) throw new RangeError("spread: one call count per round");
  const sorted = [...us].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  const total = calls.reduce((a, b) => a + b, 0);
  const mean = us.reduce((a, t, i) => a + t * (calls[i] as number), 0) / total;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number, mean, rounds: us.length };
}

/** How many calls each of `rounds` rounds makes out of `iters`, the first ones one more. */
export function roundSizes(iters: number, rounds: number): number[] {
  const r = Math.max(1, Math.min(rounds, iters));
  return Array.from({ length: r }, (_, i) => Math.floor(iters / r) + (i < iters % r ? 1 : 0));
}

/** Rounds per variant: 10 (or one per call when there are fewer calls). */
export const ROUNDS = 10;

/**
 * Warm-up calls before timing: at least `warmup`, and at small sizes enough for V8 to compile
 * the paths a call takes (its optimizing tiers kick in after a few hundred calls), so the first
 * rounds do not time the JIT.
 */
export function warmupCalls(warmup: number, bytes: number): number {
  return bytes <= 256 * 1024 ? Math.max(warmup, 200) : warmup;
}

/** Hand-rolled over built-in as algbw (> 1: hand-rolled is faster), by median and by mean; null without a built-in time. */
export function ratios(hand: Spread, builtin: Spread | undefined): { median: number; mean: number } | null {
  if (!builtin || hand.median <= 0 || hand.mean <= 0) return null;
  return { median: builtin.median / hand.median, mean: builtin.mean / hand.mean };
}
