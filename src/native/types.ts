/**
 * Typed bindings of the native addon (native/addon.cc): what each engine's functions take and
 * return. Offsets into buffers are in bytes unless named otherwise; handles are small integers.
 */
import type { DType, TypedArray } from "../core/dtype.js";
import type { Combine, OpName } from "../core/op.js";

export interface NativeEngines {
  readonly mpi: boolean;
  readonly mpiVersion?: string;
  /** The nccl engine is usable in this process now: CUDA compiled in and libnccl loaded (see NativeNccl.load). */
  readonly nccl: boolean;
  /** The NCCL version loaded, e.g. '2.28.9' (only while nccl is true). */
  readonly ncclVersion?: string;
  /** The addon was compiled with the CUDA toolkit (device memory, streams, kernels); absent in addons older than nccl.cc. */
  readonly cuda?: boolean;
}

/** Where a buffer argument may be null, MPI_IN_PLACE is meant. */
export type NativeBuf = TypedArray | ArrayBuffer;

/** A plan run's arrays bound in the addon (NativeMpi.runBind): opaque, held by the run. */
declare const nativeRun: unique symbol;
export type NativeRun = { readonly [nativeRun]: true };

export interface ProbeResult {
  readonly message: number;
  readonly source: number;
  readonly tag: number;
  readonly bytes: number;
}

/** The MPI functions NativeMpi.collective calls (native/mpi.cc kCollectives). */
export const MPI_COLLECTIVES = [
  "MPI_Barrier",
  "MPI_Bcast",
  "MPI_Reduce",
  "MPI_Allreduce",
  "MPI_Gather",
  "MPI_Scatter",
  "MPI_Allgather",
  "MPI_Reduce_scatter_block",
  "MPI_Alltoall",
] as const;
export type MpiCollective = (typeof MPI_COLLECTIVES)[number];

/** native/mpi.cc, argument order as in the MPI C API. */
export interface NativeMpi {
  readonly version: string;
  init(required: number): number;
  threadLevels(): { single: number; funneled: number; serialized: number; multiple: number };
  initialized(): boolean;
  finalized(): boolean;
  finalize(): void;
  errorString(code: number): string;
  errorCodes(): Record<string, number>;
  abort(comm: number, errorcode: number): void;

  commWorld(): number;
  rank(comm: number): number;
  size(comm: number): number;
  /** color < 0 is MPI_UNDEFINED; returns the new communicator's handle, or -1 for MPI_COMM_NULL. */
  commSplit(comm: number, color: number, key: number): number;
  /** MPI_Comm_dup: the same ranks, messages apart from comm's (channels, collectives). */
  commDup(comm: number): number;
  commFree(comm: number): void;
  /** MPI_TAG_UB. */
  tagUpperBound(): number;
  /** A handle of MPI_COMM_SELF. */
  commSelf(): number;
  /** MPI-2 dynamic processes, for ranks no mpirun started together: MPI_Open_port's port name. */
  openPort(): string;
  closePort(port: string): void;
  /** MPI_Comm_accept (blocks until a process connects): the intercommunicator's handle. */
  commAccept(port: string, root: number, comm: number): number;
  /** MPI_Comm_connect: the intercommunicator's handle. */
  commConnect(port: string, root: number, comm: number): number;
  /** MPI_Intercomm_merge: the intracommunicator, the `high` group's ranks after the other's. */
  intercommMerge(intercomm: number, high: boolean): number;
  commDisconnect(comm: number): void;

  isend(buf: NativeBuf, byteOffset: number, bytes: number, dest: number, tag: number, comm: number): number;
  irecv(buf: NativeBuf, byteOffset: number, bytes: number, source: number, tag: number, comm: number): number;
  improbe(source: number, tag: number, comm: number): ProbeResult | null;
  imrecv(buf: NativeBuf, byteOffset: number, bytes: number, message: number): number;
  mrecvDiscard(message: number, bytes: number): void;
  /**
   * MPI_Testsome over the first `count` of `requests` until one completes or budgetUs pass
   * (between tries: spinning, sched_yield when yieldCpu, or nanosleep(sleepUs) when sleepUs > 0);
   * returns how many completed and writes 4 entries each into `out` (room for 4 x count):
   * [position in requests, bytes, tag, error code (0 = success)]. Allocates nothing. Completed
   * handles are freed. The wait of the mpi backend's point-to-point operations (runProgress is
   * the plan runner's).
   */
  progress(
    count: number,
    requests: Int32Array,
    out: Int32Array,
    budgetUs: number,
    yieldCpu: boolean,
    sleepUs?: number,
  ): number;
  /**
   * Binds a plan run's arrays for runProgress, once: `requests` and `out` as progress() takes
   * them, `desc` its posts, 6 entries each ([0 isend or 1 irecv, memory 0 - 2 (m0, m1, m2), byte
   * offset, bytes, peer, tag]; a post's handle goes to requests[count + k], and its memory is kept
   * alive by the caller, not the post, until it completes or is cancelled), `wake` a byte per request position (set: that request's completion releases
   * work), `ctrl` a call's numbers [count, posts, budgetUs, yieldCpu (0/1), sleepUs, minDone,
   * useWake (0/1)] and per memory 0 - 2 the bytes [lo, hi) of its buffer posts may touch (13 in
   * all), on communicator `comm`. The handle holds the arrays while it lives.
   */
  runBind(
    requests: Int32Array,
    out: Int32Array,
    desc: Float64Array,
    wake: Uint8Array,
    ctrl: Float64Array,
    comm: number,
  ): NativeRun;
  /**
   * For a bound run: posts ctrl's `posts` transfers, then progress() over count + posts requests,
   * its numbers in the bound ctrl and its posts' memories the ArrayBuffers m0 - m2 (desc's byte
   * offsets count from each buffer's start, each post checked against its memory's [lo, hi) in
   * ctrl); returns after minDone completions or, with useWake, as soon as a request whose wake
   * byte is set completes. One Node-API call per memory posted into and none per array, where a
   * TypedArray argument costs a type search.
   */
  runProgress(run: NativeRun, m0: ArrayBuffer, m1: ArrayBuffer, m2: ArrayBuffer): number;
  /** The code of a local reduction for localReduce (dtype and combine by name); throws for one that does not exist. */
  reduceCode(dtype: DType, combine: Combine): number;
  /**
   * dst[dOff..] = dst (op) src[sOff..], or = a[aOff..] (op) src, for count elements (offsets in
   * elements; an ArrayBuffer's from its start): native/reduce.cc's kernels, as reduce() below,
   * called with a reduceCode so a small reduction costs about its loop (the plan runner's local
   * reductions, which pass ArrayBuffers: one Node-API call each).
   */
  localReduce(
    code: number,
    dst: NativeBuf,
    dOff: number,
    src: NativeBuf,
    sOff: number,
    count: number,
    a?: NativeBuf,
    aOff?: number,
  ): void;
  /** MPI_Cancel + MPI_Wait: true if cancelled, false if it had completed; the handle is freed. */
  cancel(request: number): boolean;
  /** Blocks the event loop: for tests and tools only. */
  wait(request: number): number;
  pendingCount(): number;

  /**
   * MPI's collectives but MPI_Alltoallv, blocking: `fn` names the C function, the rest are the
   * arguments MPI's collectives take in the C API's order (sendbuf, recvbuf, count, datatype, op,
   * root, comm); each function reads those it has. A null send is MPI_IN_PLACE (MPI_Scatter: a
   * null recv); MPI_Bcast's buffer is recv. count is per rank for gather, scatter, allgather and
   * alltoall, the recvcount of MPI_Reduce_scatter_block. What cclab passes for each collective:
   * src/backends/mpi/builtin.ts.
   */
  collective(
    fn: MpiCollective,
    send: NativeBuf | null,
    soff: number,
    recv: NativeBuf | null,
    roff: number,
    count: number,
    dtype: DType,
    op: OpName | Combine,
    root: number,
    comm: number,
  ): void;
  /** MPI_Alltoallv: apart from collective() because it alone takes arrays (counts and displacements per rank). */
  alltoallv(
    send: NativeBuf | null,
    soff: number,
    sendcounts: readonly number[],
    sdispls: readonly number[],
    recv: NativeBuf,
    roff: number,
    recvcounts: readonly number[],
    rdispls: readonly number[],
    dtype: DType,
    comm: number,
  ): void;
}

export interface NativeAddon {
  engines(): NativeEngines;
  /** dst[dOff..] = (a ?? dst)[aOff..] (combine) src[sOff..] for count elements (offsets in elements). */
  reduce(
    dtype: DType,
    combine: Combine,
    dst: TypedArray,
    dOff: number,
    src: TypedArray,
    sOff: number,
    count: number,
    a?: TypedArray,
    aOff?: number,
  ): void;
  /** dst[dOff..] = src[sOff..] * mul / div for count elements (offsets in elements). */
  scale(
    dtype: DType,
    dst: TypedArray,
    dOff: number,
    src: TypedArray,
    sOff: number,
    count: number,
    mul: number,
    div: number,
  ): void;
  /** Present only when the addon was compiled with MPI. */
  readonly mpi?: NativeMpi;
  /** native/nccl.cc: present in every addon built since the nccl engine (its CUDA half only with CUDA). */
  readonly nccl?: NativeNccl;
}

/** A device address (cudaMalloc's pointer); 0n is null. */
export type DevicePtr = bigint;

/** NCCL's ncclResult_t values. */
export const NCCL_RESULT = {
  success: 0,
  unhandledCudaError: 1,
  systemError: 2,
  internalError: 3,
  invalidArgument: 4,
  invalidUsage: 5,
  remoteError: 6,
  inProgress: 7,
  timeout: 8,
} as const;

/** The NCCL functions NativeNccl.collective calls (native/nccl.cc kCollectives). */
export const NCCL_COLLECTIVES = [
  "ncclAllReduce",
  "ncclBroadcast",
  "ncclReduce",
  "ncclAllGather",
  "ncclReduceScatter",
  "ncclAlltoAll",
  "ncclGather",
  "ncclScatter",
] as const;
export type NcclCollective = (typeof NCCL_COLLECTIVES)[number];

/** The reduce ops NCCL has (no bitwise ones). */
export type NcclOpName = "sum" | "prod" | "min" | "max" | "avg";

export interface NcclLibrary {
  readonly ok: true;
  readonly path: string;
  /** ncclGetVersion's code, e.g. 22809. */
  readonly version: number;
  readonly versionString: string;
  /** Entry points newer than the required set, found by dlsym. */
  readonly optional: {
    readonly commInitRankConfig: boolean;
    readonly commFinalize: boolean;
    readonly getLastError: boolean;
    readonly alltoAll: boolean;
    readonly gather: boolean;
    readonly scatter: boolean;
  };
}

export interface NcclLoadFailure {
  readonly ok: false;
  /** Every candidate, with dlopen's (or the symbol check's) reason. */
  readonly tried: readonly { readonly path: string; readonly error: string }[];
}

export interface NativeDeviceInfo {
  readonly name: string;
  readonly major: number;
  readonly minor: number;
  readonly totalMemory: number;
  readonly pciBusId: string;
  /** Stream-ordered allocation (cudaMallocAsync) is available. */
  readonly memoryPools: boolean;
}

/**
 * native/nccl.cc: NCCL (dlopen()ed by load) and the CUDA runtime calls the nccl backend needs,
 * argument order as in nccl.h and the CUDA runtime API. Streams, events and communicators are
 * handles (never 0); device offsets are bytes, counts elements. NCCL calls return
 * NCCL_RESULT.success or .inProgress (non-blocking communicators) and throw anything else, as
 * errors that src/native/load.ts turns into EngineError ('nccl' or 'cuda'). Without CUDA compiled
 * in (cuda false) every device and communicator call throws, saying so.
 */
export interface NativeNccl {
  readonly cuda: boolean;
  /** CUDART_VERSION compiled against (0 without CUDA). */
  readonly cudaRuntimeVersion: number;

  /** dlopen()s the first candidate that is NCCL >= 2.10; once one is loaded, later calls return it. */
  load(candidates: readonly string[]): NcclLibrary | NcclLoadFailure;
  loaded(): NcclLibrary | null;
  errorString(code: number): string;
  getUniqueId(): Uint8Array;

  /** cudaDriverGetVersion (0: no driver). */
  driverVersion(): number;
  runtimeVersion(): number;
  deviceCount(): number;
  setDevice(device: number): void;
  getDevice(): number;
  deviceInfo(device: number): NativeDeviceInfo;
  /** Stream-ordered where the device has memory pools; 0 bytes gives 0n. */
  malloc(bytes: number, stream: number): DevicePtr;
  free(ptr: DevicePtr, stream: number): void;
  /** Synchronous (the backend calls them on an idle stream only). */
  memcpyHtoD(
    dst: DevicePtr,
    dstOff: number,
    src: NativeBuf,
    srcByteOffset: number,
    bytes: number,
    stream: number,
  ): void;
  memcpyDtoH(
    dst: NativeBuf,
    dstByteOffset: number,
    src: DevicePtr,
    srcOff: number,
    bytes: number,
    stream: number,
  ): void;
  /** Enqueued. */
  memcpyDtoD(dst: DevicePtr, dstOff: number, src: DevicePtr, srcOff: number, bytes: number, stream: number): void;
  memset(ptr: DevicePtr, off: number, value: number, bytes: number, stream: number): void;
  streamCreate(): number;
  streamDestroy(stream: number): void;
  /** True once everything enqueued on the stream has completed. */
  streamQuery(stream: number): boolean;
  /** Blocks the event loop: tools and tests only. */
  streamSynchronize(stream: number): void;
  eventCreate(): number;
  eventRecord(event: number, stream: number): void;
  eventQuery(event: number): boolean;
  eventDestroy(event: number): void;
  /** dst = dst (combine) src, count elements, enqueued (native/cuda_reduce.cu). */
  localReduce(
    dtype: DType,
    combine: Combine,
    dst: DevicePtr,
    dOff: number,
    src: DevicePtr,
    sOff: number,
    count: number,
    stream: number,
  ): void;
  /** dst = src * mul / div, count elements, enqueued. */
  localScale(
    dtype: DType,
    dst: DevicePtr,
    dOff: number,
    src: DevicePtr,
    sOff: number,
    count: number,
    mul: number,
    div: number,
    stream: number,
  ): void;

  /** blocking = false uses ncclCommInitRankConfig (NCCL >= 2.14): poll commGetAsyncError until not inProgress. */
  commInitRank(nranks: number, id: Uint8Array, rank: number, blocking: boolean): number;
  /** The communicator's state: success, inProgress, or the error that broke it. */
  commGetAsyncError(comm: number): number;
  /** ncclGetLastError's text if it changed since the last NCCL call that succeeded ('' when stale, or where NCCL lacks it). */
  lastError(comm: number): string;
  commCount(comm: number): number;
  commFinalize(comm: number): number;
  commDestroy(comm: number): void;
  commAbort(comm: number): void;
  groupStart(): void;
  groupEnd(): number;
  send(ptr: DevicePtr, off: number, count: number, dtype: DType, peer: number, comm: number, stream: number): number;
  recv(ptr: DevicePtr, off: number, count: number, dtype: DType, peer: number, comm: number, stream: number): number;
  /**
   * NCCL's collectives, stream-ordered: `fn` names the C function, the rest are the arguments
   * NCCL's collectives take in nccl.h's order (sendbuff, recvbuff, count, datatype, op, root, comm,
   * stream); each function reads those it has. ncclAlltoAll, ncclGather and ncclScatter need
   * NCCL >= 2.28 (NcclLibrary.optional). What cclab passes for each collective:
   * src/backends/nccl/builtin.ts.
   */
  collective(
    fn: NcclCollective,
    sptr: DevicePtr,
    soff: number,
    rptr: DevicePtr,
    roff: number,
    count: number,
    dtype: DType,
    op: NcclOpName,
    root: number,
    comm: number,
    stream: number,
  ): number;
}
