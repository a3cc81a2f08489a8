/**
 * What a collective *is*, in one record per collective (src/specs/<name>.ts), as MSCCLang's
 * Collective classes and nccl-tests' testColl records: the buffers each rank passes, whether it
 * is rooted or reducing, how its buffers alias in place, the result it must produce (one
 * definition that the symbolic checker and the sequential oracle both read), its default dtype,
 * nccl-tests' bus-bandwidth factor, the engine's own collective that checks it, and its names.
 *
 * One call record describes a collective call everywhere (front API, executor, checker, model,
 * verify, bench, trace): CollectiveCall, and its per-rank view RankCall.
 */
import type { View } from "../core/buffer.js";
import type { DType } from "../core/dtype.js";
import type { ReduceOp } from "../core/op.js";

/** One collective call, as every rank makes it. */
export interface CollectiveCall {
  /** The spec's name, e.g. 'allreduce'. */
  readonly collective: string;
  /** Ranks in the communicator. */
  readonly size: number;
  /**
   * NCCL's count for the collective: elements per rank for allgather, reducescatter, gather and
   * scatter; per peer for alltoall; the whole message for broadcast, reduce and allreduce;
   * unused (0) for alltoallv and barrier.
   */
  readonly count: number;
  /** The root rank of rooted collectives; 0 elsewhere. */
  readonly root: number;
  readonly dtype: DType;
  readonly op: ReduceOp;
  /** Input and output alias as the spec's in-place layout says. */
  readonly inPlace: boolean;
  /** Pipelining unit in elements, for algorithms that segment. */
  readonly segment: number;
  /** alltoallv: splits[src][dst], elements rank src sends to rank dst (the whole matrix, where known). */
  readonly splits?: readonly (readonly number[])[];
  /**
   * The machine the ranks run on (`--topology`, ranks laid out by `--placement`), for the
   * algorithms that declare they read it (Algorithm.topology); left out, the flat view every
   * other algorithm has.
   */
  readonly shape?: Shape;
}

/**
 * The shape of the machine as an algorithm sees it: a torus or mesh's dimensions (a ring is a
 * one-dimensional torus), a rail system's nodes, GPUs per node and rails, or no structure an
 * algorithm reads (full, fat-tree, a graph from a file). `hostOf[r]` is the host rank r sits on;
 * hosts are numbered as the network model numbers them (a grid's dimension 0 varies fastest: host
 * h has coordinate ⌊h / (A0·...·A(d-1))⌋ mod Ad in dimension d).
 */
export type Shape =
  | (ShapeBase & { readonly family: "torus" | "mesh" | "ring"; readonly dims: readonly number[] })
  | (ShapeBase & {
      readonly family: "rail";
      readonly nodes: number;
      readonly gpusPerNode: number;
      /** One rail per GPU of a node: GPU g of every node has its NIC on rail g. */
      readonly rails: number;
    })
  | (ShapeBase & { readonly family: "flat" });

interface ShapeBase {
  /** The topology as the user wrote it, normalised: 'torus:8x8'. */
  readonly name: string;
  /** Hosts of the machine (at least the ranks). */
  readonly hosts: number;
  /** Rank r sits on host hostOf[r]. */
  readonly hostOf: readonly number[];
}

/** What a Shape can be: its `family`. */
export type ShapeFamily = Shape["family"];

/**
 * One rank's view of a call. Real backends know only their own row and column of alltoallv's
 * split matrix, so a rank's counts are its own fields.
 */
export interface RankCall extends CollectiveCall {
  readonly rank: number;
  /** alltoallv: elements this rank sends to each peer, and receives from each peer. */
  readonly sendCounts?: readonly number[];
  readonly recvCounts?: readonly number[];
}

/**
 * How one rank's buffers alias in place: 'same' (input and output are one region),
 * 'input-in-output' (input is output[offset..]), 'output-in-input' (output is input[offset..]).
 */
export interface Alias {
  readonly kind: "same" | "input-in-output" | "output-in-input";
  readonly offset: number;
}

export interface Layout {
  readonly inputCount: number;
  readonly outputCount: number;
  /** Undefined where this rank's buffers cannot alias (non-roots of rooted collectives, alltoallv, barrier). */
  readonly alias?: Alias;
}

/**
 * What a run of one rank's output must hold: output elements [at, at + count) are input elements
 * [index, index + count) of rank `rank` (data movement), or the reduction over every rank of
 * input elements [reduce, reduce + count) (reductions).
 */
export type Block = { readonly at: number; readonly count: number } & (
  | { readonly rank: number; readonly index: number }
  | { readonly reduce: number }
);

/** A call bound to one rank's memory, for the engine's built-in collective. */
export interface BuiltinCall {
  readonly call: RankCall;
  /** Absent where the layout gives this rank no such buffer; aliased as the layout says when in place. */
  readonly input?: View;
  readonly output?: View;
}

type Awaitable = void | Promise<void>;

/**
 * The engine's own collectives (MPI's, NCCL's): the oracle the hand-rolled algorithms are
 * differential-tested and benchmarked against. Each takes cclab's layout (src/specs/<name>.ts),
 * in place where the call is, and adapts it to the engine's conventions (MPI_IN_PLACE, NCCL's
 * sendbuff == recvbuff); every rank of the communicator calls the same method, as with MPI.
 */
export interface Builtin {
  broadcast(x: BuiltinCall): Awaitable;
  reduce(x: BuiltinCall): Awaitable;
  gather(x: BuiltinCall): Awaitable;
  scatter(x: BuiltinCall): Awaitable;
  allgather(x: BuiltinCall): Awaitable;
  reducescatter(x: BuiltinCall): Awaitable;
  allreduce(x: BuiltinCall): Awaitable;
  alltoall(x: BuiltinCall): Awaitable;
  alltoallv(x: BuiltinCall): Awaitable;
  barrier(x: BuiltinCall): Awaitable;
}

/** Which of the engines' collectives checks a cclab collective, by name for tables. */
export interface BuiltinRef {
  readonly mpi: string;
  readonly nccl: string;
  run(b: Builtin, x: BuiltinCall): Awaitable;
}

export interface CollectiveSpec {
  /** cclab's name: 'allreduce'. */
  readonly name: string;
  /** Other names users type: torch's ('all_reduce'), the front API's ('allReduce'), NCCL's. */
  readonly aliases: readonly string[];
  /** The front API function: 'allReduce'. */
  readonly api: string;
  /** One line: what it computes. */
  readonly summary: string;
  readonly rooted: boolean;
  /** Combines data with a reduce op. */
  readonly reducing: boolean;
  /** Whether `count` is an argument (false for alltoallv and barrier: their sizes come from elsewhere). */
  readonly counted: boolean;
  /** Has an in-place form. */
  readonly inPlace: boolean;
  /** Moves data (false for the barrier, which is checked by who has heard from whom instead). */
  readonly data: boolean;
  readonly defaultDtype: DType;
  /** One rank's buffers. */
  layout(c: RankCall): Layout;
  /**
   * The definition: what rank c.rank's output holds, as runs of elements (the checker, the
   * oracle and bench's data check all read it). `call` has alltoallv's whole split matrix.
   */
  result(c: RankCall, call: CollectiveCall): readonly Block[];
  /**
   * nccl-tests' size S of a call is count · s, times n where this is true (count per rank or per
   * peer: allgather, reducescatter, gather, scatter, alltoall); algbw = S / t.
   */
  readonly perRank: boolean;
  /** Sizes come from a split matrix (alltoallv), not a count. */
  readonly splits: boolean;
  /** Every rank ends with the same result (all-reduce, all-gather, broadcast): semantics.md A3 compares ranks. */
  readonly replicated: boolean;
  /** The algorithms `cclab model` sweeps when told none (the textbook pair), where there is one. */
  readonly compare?: readonly string[];
  /** nccl-tests' bus-bandwidth factor: busbw = algbw · busFactor(n) (nccl-tests' PERFORMANCE.md). */
  busFactor(n: number): number;
  /** The engine's own collective that checks it. */
  readonly builtin: BuiltinRef;
  /** The call `cclab explain` shows by default: one element per chunk, so each cell is one rank's share. */
  explainCall(size: number): Partial<CollectiveCall>;
  /**
   * The call's rotation, where it has one (the proof past 1,024 ranks turns rank 0's plan onto
   * every rank by it, src/schedule/rotation.ts): rank r's input turns by r · input elements and
   * its output by r · output, and rank q's contribution to input element e becomes rank q+r's to
   * element e + r · input. Undefined where the call has none (a count that does not split into n
   * equal chunks).
   */
  rotation?(n: number, count: number): { readonly input: number; readonly output: number } | undefined;
}
