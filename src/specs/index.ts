/**
 * The collectives cclab knows, one spec file each. Adding a collective is one spec file here plus
 * its algorithms (algorithms/<name>/), and a method on the engines' Builtin where they have one.
 * Everything else (front API checks, checker, oracle, verify, bench, CLI names) reads the spec.
 */
import { type DType, dtypeInfo } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { suggest } from "../core/suggest.js";
import { allgather } from "./allgather.js";
import { allreduce } from "./allreduce.js";
import { alltoall } from "./alltoall.js";
import { alltoallv } from "./alltoallv.js";
import { barrier } from "./barrier.js";
import { broadcast } from "./broadcast.js";
import { gather } from "./gather.js";
import { reduce } from "./reduce.js";
import { reducescatter } from "./reducescatter.js";
import { scatter } from "./scatter.js";
import type { CollectiveCall, CollectiveSpec, Layout, RankCall } from "./types.js";

export type * from "./types.js";

/** In the order tables list them. */
export const SPECS = [
  broadcast,
  reduce,
  gather,
  scatter,
  allgather,
  reducescatter,
  allreduce,
  alltoall,
  alltoallv,
  barrier,
] as const;

export type Collective = (typeof SPECS)[number]["name"];
export const COLLECTIVES: readonly Collective[] = SPECS.map((s) => s.name);

const BY_NAME = new Map<string, CollectiveSpec>();
for (const s of SPECS) {
  for (const n of [s.name, s.api, ...s.aliases]) BY_NAME.set(n.toLowerCase(), s);
}

/** The spec of a collective by any of its names (allreduce, all_reduce, allReduce), or undefined. */
export function findSpec(name: string): CollectiveSpec | undefined {
  return BY_NAME.get(name) ?? BY_NAME.get(name.toLowerCase());
}

/** The spec of a collective by any of its names; an unknown name is an error listing the names, with a suggestion. */
export function specOf(name: string, site: { rank?: number; op: string; arg?: string } = { op: "collective" }) {
  const s = findSpec(name);
  if (s) return s;
  const hint = suggest(name, [...BY_NAME.keys()]);
  throw new InvalidArgumentError(
    { ...site, arg: site.arg ?? "collective" },
    `unknown collective '${name}'${hint ? `; did you mean '${hint}'?` : ""}; expected one of ${COLLECTIVES.join(", ")} (torch's names such as all_reduce work too)`,
  );
}

/** NCCL pipelines in chunks of this order (its default chunk size is 128 KiB for trees). */
export const DEFAULT_SEGMENT_BYTES = 128 * 1024;

/** What an algorithm may say about its segment (Algorithm.segmentBytes, src/schedule/dsl.ts). */
export interface SegmentPolicy {
  /** The segment in bytes for a call that names none; default DEFAULT_SEGMENT_BYTES. */
  readonly segmentBytes?: number;
}

/**
 * The one default pipelining segment, in elements of `dtype`, of a call that names none: the
 * algorithm's own (`segmentBytes`, e.g. segmented_ring's 1 MiB, Open MPI's), else 128 KiB.
 * makeCall is the only place that applies it, so the front API, bench, model, explain and verify
 * plan the same segments for the same call (test/api.test.ts holds them to it).
 */
export function defaultSegment(dtype: DType, alg?: SegmentPolicy): number {
  return Math.max(1, Math.floor((alg?.segmentBytes ?? DEFAULT_SEGMENT_BYTES) / dtypeInfo(dtype).bytes));
}

/**
 * The one call builder: a call with the defaults filled in (the spec's dtype, sum, root 0, out of
 * place) and the one default segment (defaultSegment: `alg`'s own segmentBytes, else 128 KiB). The
 * front API, bench, model, explain, verify and trace all build their calls here, so the same call
 * plans the same segments everywhere; pass the algorithm that will run it.
 */
export function makeCall(
  c: Partial<CollectiveCall> & { readonly collective: string; readonly size: number },
  alg?: SegmentPolicy,
): CollectiveCall {
  const spec = specOf(c.collective);
  const dtype = c.dtype ?? spec.defaultDtype;
  return {
    collective: spec.name,
    size: c.size,
    count: spec.counted ? (c.count ?? 0) : 0,
    root: spec.rooted ? (c.root ?? 0) : 0,
    dtype,
    op: c.op ?? { name: "sum" },
    inPlace: spec.inPlace && (c.inPlace ?? false),
    segment: Math.max(1, c.segment ?? defaultSegment(dtype, alg)),
    splits: c.splits,
    ...(c.shape ? { shape: c.shape } : {}),
  };
}

/**
 * Rank `rank`'s view of a call: alltoallv's split matrix becomes its row of send counts and
 * column of receive counts; a real backend's rank, which knows only its own, passes them as `own`.
 */
export function rankCall(
  call: CollectiveCall,
  rank: number,
  own?: { readonly sendCounts?: readonly number[]; readonly recvCounts?: readonly number[] },
): RankCall {
  if (own) return { ...call, rank, sendCounts: own.sendCounts, recvCounts: own.recvCounts };
  if (!call.splits) return { ...call, rank };
  return {
    ...call,
    rank,
    sendCounts: call.splits[rank] ?? [],
    recvCounts: call.splits.map((row) => row[rank] ?? 0),
  };
}

/** One rank's buffers for a call. */
export function layoutOf(c: RankCall): Layout {
  return specOf(c.collective).layout(c);
}

export type { DType };
