/**
 * Algorithms are schedules: data, not code that touches data. A schedule is a sequence of
 * steps; a step is a set of transfers posted together as one group, followed by local copies
 * and reductions. Regions name a buffer symbolically ('input', 'output', 'scratch') with an
 * offset and count in elements, so one schedule runs on sim, MPI and stream-ordered on a GPU,
 * and can be checked (check.ts) and explained (explain.ts) without running it.
 */
import type { DType } from "../core/dtype.js";
import type { ReduceOp } from "../core/op.js";

export const COLLECTIVES = [
  "broadcast",
  "reduce",
  "gather",
  "scatter",
  "allgather",
  "reducescatter",
  "allreduce",
  "alltoall",
  "alltoallv",
  "barrier",
] as const;
export type Collective = (typeof COLLECTIVES)[number];

export type BufferName = "input" | "output" | "scratch";

export interface Region {
  readonly buf: BufferName;
  /** In elements. */
  readonly offset: number;
  readonly count: number;
}

export interface Transfer {
  readonly kind: "send" | "recv";
  /** Rank in the communicator the collective runs on. */
  readonly peer: number;
  readonly region: Region;
}

export type LocalOp =
  | { readonly kind: "copy"; readonly dst: Region; readonly src: Region }
  /** dst <- dst (op) src */
  | { readonly kind: "reduce"; readonly dst: Region; readonly src: Region };

export interface Step {
  /** What the step does, in NCCL's primitive verbs where they fit: 'recvReduceSend chunk 2'. */
  readonly label: string;
  /** Posted together as one group; the step's local ops run after all of them complete. */
  readonly transfers: readonly Transfer[];
  readonly local: readonly LocalOp[];
}

export type Schedule = Iterable<Step>;

/**
 * What an algorithm is told about one rank's call. `count` means what it means in NCCL's API
 * for that collective (see layout.ts): elements per rank for allgather, reducescatter, gather,
 * scatter and alltoall (per peer); the whole message for broadcast, reduce and allreduce.
 */
export interface ScheduleContext {
  readonly collective: Collective;
  readonly rank: number;
  readonly size: number;
  readonly count: number;
  readonly root: number;
  readonly inPlace: boolean;
  readonly dtype: DType;
  readonly op: ReduceOp;
  /** Pipelining unit in elements, for algorithms that segment (chain broadcast, double binary tree). */
  readonly segment: number;
  /** alltoallv: elements this rank sends to each peer, and receives from each peer. */
  readonly sendCounts?: readonly number[];
  readonly recvCounts?: readonly number[];
}

/** Cost as the algorithm's header states it; the checker holds the schedule to it. */
export interface Cost {
  /** Human formula for the header and docs, e.g. '2(n-1)'. */
  readonly stepsFormula: string;
  /** Human formula, e.g. '2(n-1)/n · count · s' (s = bytes per element). */
  readonly bytesFormula: string;
  /** Communication steps (steps with at least one transfer), the maximum over ranks. */
  steps(size: number, count: number, segment: number): number;
  /** Elements sent, the maximum over ranks. */
  sentElements(size: number, count: number, segment: number): number;
}

export interface Algorithm {
  readonly collective: Collective;
  /** Unique within its collective, e.g. 'ring', 'double_binary_tree'. */
  readonly name: string;
  /** One line: what it does. */
  readonly summary: string;
  /** Where it applies and where it is weak, e.g. 'any size; latency grows as n'. */
  readonly limits: string;
  readonly cost: Cost;
  /** Scratch elements this rank needs (default 0). */
  scratch?(ctx: ScheduleContext): number;
  /** False where the algorithm has no in-place form (alltoallv). Default true. */
  readonly inPlace?: boolean;
  /** The steps of one rank's part. Must be a pure function of ctx. */
  schedule(ctx: ScheduleContext): Schedule;
  /** Source file, set by the registry for user-loaded algorithms and headers. */
  readonly file?: string;
}
