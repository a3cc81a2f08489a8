/**
 * What a row's timings say on a shared machine. Each variant is timed in rounds (a batch of
 * back-to-back calls after a barrier, the batch's mean per call taken across ranks as -a says),
 * and on host engines every call of a round is also timed on its own (each call's time across
 * ranks as -a says).
 * A rare stall (a rank spinning while its peer is off the CPU) moves the mean, not the median;
 * the per-call p99 and max show how rare and how long. So every row reports the per-call min,
 * median, p99 and max beside nccl-tests' mean (all calls' total time / calls), and the ratio
 * column compares medians; the mean ratio is printed beside it.
 */

/**
 * How a time is taken across ranks, nccl-tests' -a: 0 rank 0's, 1 the mean over ranks (its
 * default), 2 the minimum, 3 the maximum. With 1 a call's time is what a rank waits on average;
 * with 3 the slowest rank's, where one rank's delay late in call i and its peers' wait for it in
 * call i + 1 both count.
 */
export type Average = 0 | 1 | 2 | 3;
export const AVERAGES: readonly Average[] = [0, 1, 2, 3];
/** bench's -a where none is given: the mean, nccl-tests' default. */
export const DEFAULT_AVERAGE: Average = 1;
/** What the header says of each -a. */
export const AVERAGE_TEXT: Readonly<Record<Average, string>> = {
  0: "rank 0's",
  1: "the mean over ranks",
  2: "the minimum over ranks",
  3: "the maximum over ranks",
};

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
 * Warm-up calls before timing: at least `warmup`, and enough for V8 to finish compiling the paths
 * a call takes. Its optimising tier (TurboFan) keeps marking functions of the call path for over
 * 2,000 calls on this machine, and each compile runs 1 - 25 ms on a background thread that shares
 * the spinning rank's core (mpirun binds each of 2 ranks to one), taking it for a scheduler slice
 * of ~4 ms: with 500 warm-up calls a third of the slow calls of a 1 KiB ring fell in a compile,
 * with 5,000 the p99 per call went from ~1.5 ms to ~12 - 40 µs; at 1 KiB 2,000 calls are ~5 ms,
 * less than the compiles they set off, which then landed in the timed calls; at 512 KiB, after 5
 * warm-up calls, 42 of 1,800 timed calls took over 5x the median (1 - 7 ms, at the same calls in
 * every run), after 400 none (measured on the development machine, 2026-11-27). So 10,000 up to
 * 64 KiB (at most about a second a variant: several at 64 KiB with three algorithms, each out of
 * and in place), and above it as many as move WARMUP_BYTES (512 at 512 KiB, 8 at 32 MiB).
 * Given `perCallUs` (a variant's call, measured), no more than fit in WARMUP_BUDGET_MS a variant:
 * where a call takes milliseconds (NCCL between ranks sharing a GPU over sockets: 2 - 3 ms at
 * 1 KiB) 10,000 calls would take minutes a size, and the JIT's compiles, of 1 - 25 ms, no longer
 * stand out against a call.
 */
export function warmupCalls(warmup: number, bytes: number, perCallUs = 0): number {
  const wanted = bytes <= 64 * 1024 ? 10_000 : Math.ceil(WARMUP_BYTES / bytes);
  const fit = perCallUs > 0 ? Math.floor((WARMUP_BUDGET_MS * 1000) / perCallUs) : wanted;
  return Math.max(warmup, Math.min(wanted, fit));
}

/**
 * Wall time a size's warm-up may give each variant, ms (warmupCalls): 10,000 calls of 200 µs, so
 * MPI's small sizes keep their 10,000 (n = 4 at 64 KiB on this machine: 100 - 200 µs a call).
 */
export const WARMUP_BUDGET_MS = 2000;

/** Bytes a size's warm-up moves at least, above 64 KiB (warmupCalls). */
export const WARMUP_BYTES = 256 * 1024 * 1024;

/**
 * Every call timed on its own (nccl-tests' -I): µs per call, each call's time taken across ranks
 * as -a says (the mean by default). The mean is of these, so a stall in any call shows.
 */
export interface PerCall {
  readonly min: number;
  readonly median: number;
  /** The 99th percentile (nearest rank): the call 1 in 100 is slower than. */
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
  readonly calls: number;
}

/** The p-th quantile (0..1) of sorted values, by nearest rank (nccl-tests' and most tools' p99). */
export function quantile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) throw new RangeError("quantile: no values");
  return sorted[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))] as number;
}

/** The per-call figures of `us` (µs per call, one per call). */
export function perCall(us: ArrayLike<number>): PerCall {
  const n = us.length;
  if (n === 0) throw new RangeError("perCall: no calls");
  const sorted = Float64Array.from(us).sort();
  let total = 0;
  for (let i = 0; i < n; i++) total += sorted[i] as number;
  const mid = n >> 1;
  const median = n % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return {
    min: sorted[0] as number,
    median,
    p99: quantile(sorted, 0.99),
    max: sorted[n - 1] as number,
    mean: total / n,
    calls: n,
  };
}

/** Sizes up to this get their per-call series in the JSON (µs per call, in call order). */
export const SERIES_MAX_BYTES = 1024 * 1024;

/**
 * Hand-rolled over built-in as algbw (> 1: hand-rolled is faster), by median and by mean; null
 * without a built-in time. The medians are per call where calls were timed one by one, else the
 * rounds'; the means are nccl-tests' (all calls' time over the calls).
 */
export function ratios(
  hand: { readonly median: number; readonly mean: number },
  builtin: { readonly median: number; readonly mean: number } | undefined,
): { median: number; mean: number } | null {
  if (!builtin || hand.median <= 0 || hand.mean <= 0) return null;
  return { median: builtin.median / hand.median, mean: builtin.mean / hand.mean };
}
