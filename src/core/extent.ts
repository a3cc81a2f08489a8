/**
 * The largest and smallest of any number of values. `Math.max(...xs)` passes every element as an
 * argument, and past about 100,000 of them (a 256-GPU ring's operations) V8 throws "Maximum call
 * stack size exceeded"; these loop instead. Same results as Math.max/Math.min with `floor` (or
 * `ceiling`) as one more argument: NaN anywhere gives NaN, no values give the bound. And where a
 * value falls among sorted boundaries.
 */

/** The largest of `values` and `floor` (-Infinity when not given). */
export function maxOf(values: Iterable<number>, floor = Number.NEGATIVE_INFINITY): number {
  let m = floor;
  for (const v of values) m = Math.max(m, v);
  return m;
}

/** The smallest of `values` and `ceiling` (+Infinity when not given). */
export function minOf(values: Iterable<number>, ceiling = Number.POSITIVE_INFINITY): number {
  let m = ceiling;
  for (const v of values) m = Math.min(m, v);
  return m;
}

/** In ascending `sorted` whose first element is at most x: the last index i with sorted[i] <= x (binary search). */
export function lastAtMost(sorted: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((sorted[mid] as number) <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
