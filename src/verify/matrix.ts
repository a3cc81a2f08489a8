/**
 * The gloo-style matrix the static checks run over: every n in 1..maxSize (and any further n
 * asked for), counts 0, < n, at least n and not divisible by n (so every chunk holds data), every
 * kind of root, in and out of place, a few segment sizes, and for alltoallv lopsided split
 * matrices with zeros in them.
 */
import type { Algorithm } from "../schedule/dsl.js";
import { ROTATION_FROM } from "../schedule/rotation.js";
import { makeCall, specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";

/** A deterministic, lopsided alltoallv split matrix with zeros in it. */
export function splitMatrix(n: number, salt = 0): number[][] {
  return Array.from({ length: n }, (_, s) => Array.from({ length: n }, (_, d) => (s * 7 + d * 3 + n + salt) % 4));
}

/**
 * The calls the static proof checks: n = 1..maxSize and each n of `sizes` (an algorithm written
 * for some sizes only, an imported MSCCL program, is checked at its own sizes whatever these say).
 */
export function checkCases(alg: Algorithm, maxSize = 64, sizes: readonly number[] = []): CollectiveCall[] {
  const spec = specOf(alg.collective);
  const d = alg.domain;
  if (d) {
    // Written for some calls only (an imported MSCCL program): every size it names, whatever
    // maxSize, counts 0 and 1..3 whole units, its roots, in and out of place.
    const cases: CollectiveCall[] = [];
    const m = d.countMultiple ?? 1;
    for (const n of d.sizes) {
      const roots = spec.rooted ? (d.roots ?? [...new Set([0, n - 1, Math.floor(n / 2)])]) : [0];
      const modes = spec.inPlace && alg.inPlace !== false ? [false, true] : [false];
      for (const count of [0, m, 2 * m, 3 * m]) {
        for (const root of roots) {
          for (const inPlace of modes)
            cases.push(makeCall({ collective: spec.name, size: n, segment: 1, count, root, inPlace }));
        }
      }
    }
    return cases;
  }
  const all = [...new Set([...Array.from({ length: maxSize }, (_, i) => i + 1), ...sizes])].sort((a, b) => a - b);
  // The sweep 1..maxSize meets segments 1, 2 and 3 on neighbouring n; an n asked for on its own
  // meets only its own, so it also gets segment 1 on its full chunks (a schedule wrong where a
  // chunk spans more segments than another is wrong there).
  return all.flatMap((n) => casesAt(alg, n, n > maxSize));
}

/**
 * The calls at one n: counts 0, n - 1 (one chunk empty) and n + 3 (every chunk full, not
 * divisible by n for n > 3), at segment 1 + n mod 3; with `alone`, count n + 3 at segment 1 too.
 */
export function casesAt(alg: Algorithm, n: number, alone = false): CollectiveCall[] {
  const spec = specOf(alg.collective);
  const cases: CollectiveCall[] = [];
  const segment = 1 + (n % 3);
  const base = { collective: spec.name, size: n, segment };
  if (n >= ROTATION_FROM && spec.counted && !spec.rooted) {
    // Past 1,024 ranks the proof is by rotation (src/schedule/rotation.ts): the count that gives
    // every rank one chunk of every other's, n, in and out of place.
    const modes = spec.inPlace && alg.inPlace !== false ? [false, true] : [false];
    return modes.map((inPlace) => makeCall({ ...base, count: n, root: 0, inPlace }));
  }
  if (!spec.counted) {
    const splits = spec.splits ? [splitMatrix(n), ...(n <= 16 ? [splitMatrix(n, 1)] : [])] : [undefined];
    for (const s of splits) cases.push(makeCall({ ...base, splits: s }));
    return cases;
  }
  const counts = n <= 16 ? [0, 1, n - 1, n, n + 1, 2 * n + 3] : [0, n - 1, n + 3];
  const roots = spec.rooted ? [...new Set([0, n - 1, Math.floor(n / 2)])] : [0];
  const modes = spec.inPlace && alg.inPlace !== false ? [false, true] : [false];
  for (const count of [...new Set(counts.map((c) => Math.max(0, c)))]) {
    for (const root of roots) for (const inPlace of modes) cases.push(makeCall({ ...base, count, root, inPlace }));
  }
  if (alone && segment !== 1) {
    for (const root of roots)
      for (const inPlace of modes) cases.push(makeCall({ ...base, segment: 1, count: n + 3, root, inPlace }));
  }
  return cases;
}
