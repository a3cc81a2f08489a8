/**
 * nccl-tests' arithmetic: the size sweep, what a size means for each collective, and the
 * algorithm and bus bandwidths (doc/PERFORMANCE.md in NVIDIA/nccl-tests).
 *
 * algbw = S / t, with S in bytes and GB = 1e9 bytes. busbw = algbw × a factor that makes the
 * number comparable with the link's peak whatever the rank count:
 *
 * | collective                      | factor     | S                                   |
 * |---------------------------------|------------|-------------------------------------|
 * | allreduce                       | 2(n-1)/n   | the message                         |
 * | reducescatter, allgather        | (n-1)/n    | the whole array (count per rank · n)|
 * | alltoall                        | (n-1)/n    | a rank's whole send buffer          |
 * | gather, scatter                 | (n-1)/n    | the root's whole buffer             |
 * | broadcast, reduce               | 1          | the message                         |
 */

import type { DType } from "../core/dtype.js";
import { dtypeInfo } from "../core/dtype.js";
import { specOf } from "../specs/index.js";
import type { BenchCollective } from "./types.js";

/** nccl-tests' correction from algorithm to bus bandwidth for n ranks (each spec's busFactor). */
export function busFactor(collective: BenchCollective, n: number): number {
  return specOf(collective).busFactor(n);
}

/** GB/s (1e9 bytes per second) for `bytes` moved in `us` microseconds; 0 for an empty or instant call. */
export function algBandwidth(bytes: number, us: number): number {
  return bytes > 0 && us > 0 ? bytes / (us * 1e-6) / 1e9 : 0;
}

export function busBandwidth(collective: BenchCollective, n: number, bytes: number, us: number): number {
  return algBandwidth(bytes, us) * busFactor(collective, n);
}

/**
 * What size S means for a collective on n ranks, as nccl-tests computes it: the element count
 * S / s, rounded down to a multiple of n where the count is per rank; `size` is then the bytes
 * actually moved (count · s, · n for per-rank counts) and `count` cclab's count argument.
 */
export function shapeOf(
  collective: BenchCollective,
  n: number,
  bytes: number,
  dtype: DType,
): { count: number; size: number } {
  const s = dtypeInfo(dtype).bytes;
  const total = Math.floor(bytes / s);
  if (specOf(collective).perRank) {
    const count = Math.floor(total / n);
    return { count, size: count * n * s };
  }
  return { count: total, size: total * s };
}

/** nccl-tests' sweep: minBytes, ×stepFactor, ..., up to maxBytes (inclusive). */
export function sizeSweep(minBytes: number, maxBytes: number, stepFactor: number): number[] {
  if (!(minBytes >= 0) || !(maxBytes >= minBytes)) {
    throw new RangeError(`need 0 <= minbytes <= maxbytes, got ${minBytes} and ${maxBytes}`);
  }
  if (!(stepFactor > 1)) throw new RangeError(`the step factor must be greater than 1, got ${stepFactor}`);
  const out: number[] = [];
  for (let b = minBytes; b <= maxBytes; b = Math.max(b + 1, Math.round(b * stepFactor))) {
    out.push(b);
    if (b === 0) break;
  }
  return out;
}

const UNITS: Record<string, number> = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** '8', '1K', '64M', '1G' (also 1KB, 1KiB, 1.5M): bytes, nccl-tests' binary suffixes. */
export function parseBytes(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(value);
  if (!m) throw new RangeError(`a size looks like 8, 1K, 64M or 1G; got '${value}'`);
  const bytes = Math.round(Number(m[1]) * (UNITS[(m[2] ?? "").toUpperCase()] as number));
  if (!Number.isSafeInteger(bytes)) throw new RangeError(`size '${value}' is too large`);
  return bytes;
}
