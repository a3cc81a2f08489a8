/**
 * The one default pipelining segment. A call that names no segment gets the algorithm's own
 * (`segmentBytes`, e.g. segmented_ring's 1 MiB, Open MPI's) or NCCL's order, 128 KiB, in elements
 * of the call's dtype. makeCall (specs/index.ts) is the only place that applies it, so the front
 * API, bench, model, explain and verify plan the same segments for the same call
 * (test/api.test.ts holds them to it).
 */
import { type DType, dtypeInfo } from "../core/dtype.js";

/** NCCL pipelines in chunks of this order (its default chunk size is 128 KiB for trees). */
export const DEFAULT_SEGMENT_BYTES = 128 * 1024;

/** What an algorithm may say about its segment (Algorithm.segmentBytes, src/schedule/dsl.ts). */
export interface SegmentPolicy {
  /** The segment in bytes for a call that names none; default DEFAULT_SEGMENT_BYTES. */
  readonly segmentBytes?: number;
}

/** The segment, in elements of `dtype`, of a call that names none: `alg`'s segmentBytes, else 128 KiB. */
export function defaultSegment(dtype: DType, alg?: SegmentPolicy): number {
  return Math.max(1, Math.floor((alg?.segmentBytes ?? DEFAULT_SEGMENT_BYTES) / dtypeInfo(dtype).bytes));
}
