/**
 * The gloo-style matrix the static checks run over: every n in 1..maxSize, counts 0, < n,
 * not divisible by n, every kind of root, in and out of place, a few segment sizes.
 */
import type { CallArgs } from "../schedule/context.js";
import { HAS_IN_PLACE, ROOTED } from "../schedule/layout.js";
import type { Algorithm } from "../schedule/types.js";

/** A deterministic, lopsided alltoallv split matrix with zeros in it. */
export function splitMatrix(n: number, salt = 0): number[][] {
  return Array.from({ length: n }, (_, s) => Array.from({ length: n }, (_, d) => (s * 7 + d * 3 + n + salt) % 4));
}

export function checkCases(alg: Algorithm, maxSize = 64): CallArgs[] {
  const cases: CallArgs[] = [];
  for (let n = 1; n <= maxSize; n++) {
    const counts = n <= 16 ? [0, 1, n - 1, n, n + 1, 2 * n + 3] : [0, n - 1, n + 3];
    const roots = ROOTED.has(alg.collective) ? [...new Set([0, n - 1, Math.floor(n / 2)])] : [0];
    const modes = HAS_IN_PLACE.has(alg.collective) && alg.inPlace !== false ? [false, true] : [false];
    const segment = 1 + (n % 3);
    if (alg.collective === "barrier") {
      cases.push({ size: n, count: 0, segment });
      continue;
    }
    if (alg.collective === "alltoallv") {
      cases.push({ size: n, count: 0, sendCounts: splitMatrix(n), segment });
      if (n <= 16) cases.push({ size: n, count: 0, sendCounts: splitMatrix(n, 1), segment });
      continue;
    }
    for (const count of [...new Set(counts.map((c) => Math.max(0, c)))]) {
      for (const root of roots) {
        for (const inPlace of modes) cases.push({ size: n, count, root, inPlace, segment });
      }
    }
  }
  return cases;
}
