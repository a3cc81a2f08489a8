/**
 * Typed bindings of the native addon (native/addon.cc): what each engine's functions take and
 * return. Offsets into buffers are in bytes unless named otherwise; handles are small integers.
 */
import type { DType, TypedArray } from "../core/dtype.js";
import type { Combine, OpName } from "../core/op.js";

export interface NativeEngines {
  readonly mpi: boolean;
  readonly mpiVersion?: string;
  readonly nccl: boolean;
}

/** Where a buffer argument may be null, MPI_IN_PLACE is meant. */
export type NativeBuf = TypedArray | ArrayBuffer;

export interface TestResult {
  readonly request: number;
  readonly bytes?: number;
  readonly error?: { readonly code: number; readonly message: string };
}

export interface ProbeResult {
  readonly message: number;
  readonly source: number;
  readonly tag: number;
  readonly bytes: number;
}

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
  commFree(comm: number): void;

  isend(buf: NativeBuf, byteOffset: number, bytes: number, dest: number, tag: number, comm: number): number;
  irecv(buf: NativeBuf, byteOffset: number, bytes: number, source: number, tag: number, comm: number): number;
  improbe(source: number, tag: number, comm: number): ProbeResult | null;
  imrecv(buf: NativeBuf, byteOffset: number, bytes: number, message: number): number;
  mrecvDiscard(message: number, bytes: number): void;
  /** null while pending, else the bytes transferred; the request handle is freed on completion. */
  test(request: number): number | null;
  testsome(requests: readonly number[]): TestResult[];
  /** Blocks the event loop: for tests and tools only. */
  wait(request: number): number;
  pendingCount(): number;

  barrier(comm: number): void;
  bcast(buf: NativeBuf, off: number, count: number, dtype: DType, root: number, comm: number): void;
  allreduce(
    send: NativeBuf | null,
    soff: number,
    recv: NativeBuf,
    roff: number,
    count: number,
    dtype: DType,
    op: OpName | Combine,
    comm: number,
  ): void;
  reduce(
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
  gather(
    send: NativeBuf | null,
    soff: number,
    recv: NativeBuf | null,
    roff: number,
    count: number,
    dtype: DType,
    root: number,
    comm: number,
  ): void;
  scatter(
    send: NativeBuf | null,
    soff: number,
    recv: NativeBuf | null,
    roff: number,
    count: number,
    dtype: DType,
    root: number,
    comm: number,
  ): void;
  allgather(
    send: NativeBuf | null,
    soff: number,
    recv: NativeBuf,
    roff: number,
    count: number,
    dtype: DType,
    comm: number,
  ): void;
  reduceScatterBlock(
    send: NativeBuf | null,
    soff: number,
    recv: NativeBuf,
    roff: number,
    recvcount: number,
    dtype: DType,
    op: OpName | Combine,
    comm: number,
  ): void;
  alltoall(
    send: NativeBuf | null,
    soff: number,
    recv: NativeBuf,
    roff: number,
    count: number,
    dtype: DType,
    comm: number,
  ): void;
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
  /** dst[dOff..] = dst (combine) src[sOff..] for count elements (offsets in elements). */
  reduce(
    dtype: DType,
    combine: Combine,
    dst: TypedArray,
    dOff: number,
    src: TypedArray,
    sOff: number,
    count: number,
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
}
