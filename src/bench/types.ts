/**
 * What `cclab bench` is asked, what it reports, and the one interface the measured backends
 * (mpi, nccl) implement so a single timing loop serves both.
 */

import type { EngineCollectives } from "../backends/builtin.js";
import type { Comm } from "../comm.js";
import type { View } from "../core/buffer.js";
import type { DType, TypedArray } from "../core/dtype.js";
import type { ReduceOp } from "../core/op.js";
import type { NetworkRequest } from "../model/request.js";
import { COLLECTIVES, type Collective, specOf } from "../specs/index.js";
import type { Machine } from "../tools/topology-shape.js";
import type { Floors } from "./floors.js";
import type { Average, PerCall, Spread } from "./stats.js";

export const BENCH_BACKENDS = ["sim", "mpi", "nccl"] as const;
export type BenchBackend = (typeof BENCH_BACKENDS)[number];

/** The collectives nccl-tests has a bus-bandwidth formula for: those with a count (alltoallv and barrier have none). */
export const BENCH_COLLECTIVES: readonly Collective[] = COLLECTIVES.filter((c) => specOf(c).counted);
export type BenchCollective = Collective;

export interface BenchOptions {
  readonly collective: BenchCollective;
  /** A registered algorithm, or 'auto' (chosen per size, as the front API does). */
  readonly algorithm: string;
  /**
   * The algorithms to compare, as a list: an algorithm file's own names, which may hold commas.
   * Without it, `algorithm` split at its commas.
   */
  readonly algorithms?: readonly string[];
  readonly algorithmFile?: string;
  readonly backend: BenchBackend;
  /** Ranks; under an existing MPI job the job's size. */
  readonly nranks: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly stepFactor: number;
  readonly iters: number;
  readonly warmupIters: number;
  readonly dtype: DType;
  readonly op: ReduceOp;
  readonly root: number;
  /** Pipelining segment in elements (default: the front API's, makeCall: the algorithm's own, else 128 KiB). */
  readonly segment?: number;
  /** A file to write the result to as JSON (-o x.json). */
  readonly json?: string;
  /** A file to draw busbw against size in (-o x.svg or x.html). */
  readonly chart?: string;
  /** --json: the result as JSON on stdout instead of the table. */
  readonly jsonStdout?: boolean;
  readonly progress: boolean;
  /** sim: alpha-beta parameters (µs, µs per byte). */
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  /** sim: sizes above this are modelled but not executed (#wrong N/A). */
  readonly simMaxBytes: number;
  /** sim: --topology and its flags: times from the network model instead of the alpha-beta model. */
  readonly network?: NetworkRequest;
  /** mpi, nccl: --topology and --placement: the world comm's algorithms get the machine's shape. */
  readonly machine?: Machine;
  /** mpi: measure the machine's floors in C first (floors.ts) and print them above the table. */
  readonly floors?: boolean;
  /** mpi, nccl: how times are taken across ranks (nccl-tests' -a; stats.ts); default 1, the mean. */
  readonly average?: Average;
}

/** One timed variant of one size. `wrong` is null where the data was not checked. */
export interface Measurement {
  /** Microseconds per call (across ranks as BenchResult.average says), or the model's time on sim. */
  readonly timeUs: number;
  readonly algbw: number;
  readonly busbw: number;
  readonly wrong: number | null;
  /** Measured backends: the rounds' min, median and max, and the mean (timeUs), µs per call. */
  readonly spread?: Spread;
  /** Host engines (mpi): every call timed on its own, each call's time across ranks as BenchResult.average says. */
  readonly perCall?: PerCall;
  /** Sizes up to SERIES_MAX_BYTES (1 MiB): those per-call times in call order, µs (rounds one after another). */
  readonly series?: readonly number[];
}

export interface BenchRow {
  /** Bytes, as nccl-tests counts them (allgather, reducescatter, alltoall, gather, scatter: the whole array). */
  readonly size: number;
  /** Elements in cclab's (and NCCL's) count argument: per rank for allgather/reducescatter/gather/scatter, per peer for alltoall. */
  readonly count: number;
  readonly type: DType;
  readonly redop: string;
  /** -1 for collectives without a root, as nccl-tests prints. */
  readonly root: number;
  /** The algorithm that ran (differs by size under 'auto'). */
  readonly algorithm: string;
  readonly outOfPlace: Measurement;
  readonly inPlace: Measurement;
  /** The backend's own collective on the same buffers, out of place (absent on sim). */
  readonly builtin: Measurement | null;
  /** Hand-rolled out-of-place algbw / built-in algbw (> 1: hand-rolled is faster), from the rounds' medians and from the means. */
  readonly ratio: { readonly median: number; readonly mean: number } | null;
}

export interface MemoryReport {
  /** The largest size, bytes. */
  readonly messageBytes: number;
  /** Peak RSS growth over the rank's RSS before its buffers existed, max over ranks, after the hand-rolled runs at the largest size. */
  readonly handRolledPeakBytes: number;
  /** The same after the built-in runs at the largest size too. */
  readonly builtinPeakBytes: number;
  readonly handRolledRatio: number;
  readonly builtinRatio: number;
  /** Bytes of the benchmark's own buffers (input + output at the largest size), included above. */
  readonly bufferBytes: number;
}

export interface BenchResult {
  readonly tool: "cclab bench";
  readonly collective: BenchCollective;
  readonly algorithm: string;
  readonly backend: BenchBackend;
  readonly nranks: number;
  readonly dtype: DType;
  readonly op: string;
  readonly root: number;
  readonly iters: number;
  readonly warmupIters: number;
  /** 'model': sim times come from the alpha-beta model; 'measured': wall-clock, across ranks as `average` says. */
  readonly timing: "model" | "measured";
  /** Measured: how times were taken across ranks (nccl-tests' -a: 0 rank 0's, 1 mean, 2 min, 3 max). */
  readonly average?: Average;
  /** e.g. 'MPI_Allreduce'; null on sim. */
  readonly builtinName: string | null;
  readonly model?: { readonly alpha: number; readonly beta: number; readonly gamma: number };
  /** mpi, nccl with --topology: the machine whose shape the algorithms were given. */
  readonly topology?: string;
  /** sim with --topology: the machine the network model timed (docs/network.md). */
  readonly network?: { readonly topology: string; readonly description: readonly string[]; readonly engine: string };
  /** sim: sizes above this were not executed. */
  readonly simMaxBytes?: number;
  readonly rows: readonly BenchRow[];
  /** Wrong elements over every checked row and variant of the hand-rolled algorithm. */
  readonly outOfBounds: number;
  /** Wrong elements of the built-in collective (an engine problem, reported separately). */
  readonly builtinWrong: number;
  /** nccl-tests' average: the mean busbw over every row's out-of-place and in-place results. */
  readonly avgBusBw: number;
  readonly memory?: MemoryReport;
  /** --floors: what the machine does in C, measured before the run. */
  readonly floors?: Floors;
}

/**
 * A Comm that also carries its engine's collectives (MpiComm, the nccl backend's comm): under
 * MPI's names (a `null` view is MPI_IN_PLACE; each may return a promise, for stream-ordered
 * engines) and as the specs call them (`builtin.spec`).
 */
export interface CommWithBuiltin extends Comm {
  readonly builtin: EngineCollectives;
}

export function hasBuiltin(c: Comm): c is CommWithBuiltin {
  return typeof (c as Partial<CommWithBuiltin>).builtin?.allreduce === "function";
}

/** What the timing loop needs from a process backend, on every rank. */
export interface BenchComm {
  /** The hand-rolled algorithms run on this. */
  readonly comm: CommWithBuiltin;
  /** 'MPI' or 'NCCL': prefixes the built-in's name in the header (MPI_Allreduce, ncclAllReduce). */
  readonly engine: "MPI" | "NCCL";
  barrier(): Promise<void>;
  /** The maximum of x over ranks (the warm-up's probe, which every rank must agree on; the memory figure). */
  maxOverRanks(x: number): Promise<number>;
  /** The sum of x over ranks (wrong-element counts). */
  sumOverRanks(x: number): Promise<number>;
  /** Each element taken across ranks as `how` says (nccl-tests' -a): the rounds' and the calls' times. */
  acrossRanks(xs: Float64Array, how: Average): Promise<Float64Array>;
  /** Fills a view from host memory (a plain write on host backends, a copy to the device on nccl). */
  write(v: View, fill: (host: TypedArray) => void): Promise<void>;
  /** Reads a view into host memory and applies f. */
  read<T>(v: View, f: (host: TypedArray) => T): Promise<T>;
}

/** Where lines go: stdout by default; tests capture them. */
export interface BenchIO {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export const STDIO: BenchIO = {
  out: (l) => void process.stdout.write(`${l}\n`),
  err: (l) => void process.stderr.write(`${l}\n`),
};
