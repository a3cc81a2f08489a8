/**
 * NCCL's own collectives on an NcclComm (comm.builtin): the oracle cclab's hand-rolled
 * algorithms are tested and benchmarked against. NCCL_BUILTINS is the one place that says how
 * cclab calls each: one row per collective, from cclab's layout (src/specs/<name>.ts) to the NCCL
 * function and its arguments in nccl.h's order. cclab's in-place layouts are NCCL's (sendbuff ==
 * recvbuff, or the rank's block of the larger buffer), so no row copies for in place but
 * all-to-all, which NCCL cannot do in place. Every NCCL collective goes through NcclEngine.call,
 * the one way into the addon (NativeNccl.collective, native/nccl.cc Collective); where NCCL has no
 * collective the row posts grouped ncclSend/ncclRecv (NcclEngine.p2p), as torch does.
 *
 * Stream-ordered: each returns (a promise) once its work is enqueued; comm.synchronize() or
 * reading a buffer back waits for it.
 *
 * | collective          | NCCL                                                                      |
 * |---------------------|---------------------------------------------------------------------------|
 * | barrier             | ncclAllReduce of one int32, then a stream wait (as torch's NCCL barrier)  |
 * | broadcast           | ncclBroadcast                                                             |
 * | allreduce, reduce   | ncclAllReduce, ncclReduce                                                 |
 * | allgather           | ncclAllGather                                                             |
 * | reducescatter       | ncclReduceScatter                                                         |
 * | gather, scatter     | ncclGather / ncclScatter (NCCL >= 2.28), else grouped send/recv as torch  |
 * | alltoall            | ncclAlltoAll (NCCL >= 2.28), else grouped send/recv as torch              |
 * | alltoallv           | grouped send/recv (torch's all_to_all_single with splits)                 |
 *
 * avg and premulsum run as ncclSum with cclab's scaling around it (sumScaling: pre-multiply a
 * copy of the input, or divide the result, which is what ncclAvg and ncclRedOpCreatePreMulSum do
 * inside NCCL), as the mpi backend does, so results compare exactly with cclab's for every op.
 * NCCL has no bitwise reductions: band/bor/bxor are refused.
 * CCLAB_NCCL_P2P_COLLECTIVES=1 uses the grouped send/recv forms even where NCCL has its own.
 */
import { type DataBuffer, type View, view } from "../../core/buffer.js";
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import { type ReduceOp, sumScaling } from "../../core/op.js";
import type { DevicePtr, NcclCollective, NcclLibrary, NcclOpName } from "../../native/types.js";
import { type BuiltinTable, builtinOf, displs, type EngineCall, type EngineCollectives, mpiNames } from "../builtin.js";
import type { DeviceBuffer } from "./buffer.js";
import type { NcclDevice } from "./device.js";
import type { P2PItem } from "./work.js";

interface Ptr {
  readonly ptr: DevicePtr;
  readonly off: number;
}

const NULL_PTR: Ptr = { ptr: 0n, off: 0 };
/** A row's input and output views (present where cclab's layout gives this rank one), and whether it is the root. */
const input = (x: EngineCall): View => x.input as View;
const output = (x: EngineCall): View => x.output as View;
const isRoot = (x: EngineCall): boolean => x.call.rank === x.call.root;

const SUM: ReduceOp = { name: "sum" };

/** The reductions: their input is scaled for avg and premulsum, their result divided for integer avg. */
const REDUCING: ReadonlySet<NcclCollective> = new Set(["ncclAllReduce", "ncclReduce", "ncclReduceScatter"]);

/** The collectives NCCL added in 2.28, by their NcclLibrary.optional flag. */
const NEWER = { ncclAlltoAll: "alltoAll", ncclGather: "gather", ncclScatter: "scatter" } as const;

/**
 * What the engine's collectives need of their comm (NcclComm is the one): an interface here, so
 * comm.ts, which makes its builtin, and builtin.ts do not import each other.
 */
export interface BuiltinComm {
  readonly rank: number;
  readonly size: number;
  readonly handle: number;
  readonly device: NcclDevice;
  checkLive(op: string): void;
  checkView(view: unknown, op: string, arg?: string): View;
  describe(kind: string, peer: number, label: string | undefined): string;
  alloc(dtype: DType, count: number): DataBuffer;
  copy(dst: View, src: View): void;
  scale(dst: View, src: View, mul: number, div: number): void;
  synchronize(): Promise<void>;
}

const sub = (v: View, offset: number, count: number): View => ({ buffer: v.buffer, offset: v.offset + offset, count });

/** NCCL's collectives on one communicator, as the table calls them. */
export class NcclEngine {
  private scratch: View | undefined;

  constructor(private readonly comm: BuiltinComm) {}

  get rank(): number {
    return this.comm.rank;
  }
  get size(): number {
    return this.comm.size;
  }
  private get dev() {
    return this.comm.device;
  }

  copy(dst: View, src: View): void {
    this.comm.copy(dst, src);
  }

  /** A device buffer of count elements (an in-place all-to-all's copy of its input). */
  alloc(dtype: DType, count: number): View {
    return view(this.comm.alloc(dtype, count));
  }

  /** NCCL has `fn` (a 2.28 addition) and CCLAB_NCCL_P2P_COLLECTIVES does not ask for send/recv instead. */
  has(fn: keyof typeof NEWER): boolean {
    if (/^(1|true|yes|on)$/i.test(process.env.CCLAB_NCCL_P2P_COLLECTIVES ?? "")) return false;
    const lib: NcclLibrary | null = this.dev.native.loaded();
    return lib?.optional[NEWER[fn]] === true;
  }

  private ptr(v: View | null): Ptr {
    if (v === null || v.count === 0) return NULL_PTR;
    const b = v.buffer as DeviceBuffer;
    return { ptr: b.ptr, off: v.offset * dtypeInfo(b.dtype).bytes };
  }

  private ncclOp(op: ReduceOp, fn: string): NcclOpName {
    if (op.name === "band" || op.name === "bor" || op.name === "bxor") {
      throw new InvalidArgumentError(
        { rank: this.rank, op: `builtin ${fn}`, arg: "op" },
        `NCCL has no bitwise reductions ('${op.name}'); its ops are sum, prod, min, max and avg`,
      );
    }
    return op.name === "avg" || op.name === "premulsum" ? "sum" : op.name;
  }

  /**
   * NCCL's function `fn` with the arguments NCCL's collectives take, in nccl.h's order (the
   * datatype is the views', the communicator and stream this comm's); a null view is a null
   * pointer (a buffer NCCL does not read on this rank). count is per rank for ncclAllGather,
   * ncclGather, ncclScatter and ncclAlltoAll, ncclReduceScatter's recvcount.
   */
  async call(fn: NcclCollective, send: View | null, recv: View | null, count: number, op = SUM, root = 0) {
    const reducing = REDUCING.has(fn);
    const nccl = reducing ? this.ncclOp(op, fn) : "sum";
    if (send !== null) this.comm.checkView(send, `builtin ${fn}`, "send");
    if (recv !== null) this.comm.checkView(recv, `builtin ${fn}`, "recv");
    const dtype = (send ?? recv)?.buffer.dtype ?? "int32";
    let scaled: View | null = null;
    if (reducing && send !== null) {
      // premulsum, float avg: a scaled copy of the input (never the caller's buffer).
      const { premul } = sumScaling(op, dtype, this.size);
      if (premul !== undefined) {
        scaled = this.alloc(dtype, fn === "ncclReduceScatter" ? count * this.size : count);
        this.comm.scale(scaled, sub(send, 0, scaled.count), premul, 1);
      }
    }
    const s = this.ptr(scaled ?? send);
    const r = this.ptr(recv);
    this.comm.checkLive(`builtin ${fn}`);
    await this.dev.collective(
      this.comm,
      `rank ${this.rank}: builtin ${fn}`,
      () =>
        this.dev.native.collective(
          fn,
          s.ptr,
          s.off,
          r.ptr,
          r.off,
          count,
          dtype,
          nccl,
          root,
          this.comm.handle,
          this.dev.stream,
        ),
      [scaled, send, recv],
    );
    // Integer avg: the sum divided in place (where this rank has the result).
    if (reducing && recv !== null && count > 0 && (fn !== "ncclReduce" || this.rank === root)) {
      const { postdiv } = sumScaling(op, dtype, this.size);
      const v = sub(recv, 0, count);
      if (postdiv !== undefined) this.comm.scale(v, v, 1, postdiv);
    }
  }

  /** Returns on every rank once all have entered and this rank's stream has drained. */
  async barrier(): Promise<void> {
    this.scratch ??= this.alloc("int32", 1);
    await this.call("ncclAllReduce", this.scratch, this.scratch, 1);
    await this.comm.synchronize();
  }

  /** One ncclSend or ncclRecv of a group. */
  item(kind: "send" | "recv", v: View, peer: number, what: string): P2PItem {
    return {
      kind,
      comm: this.comm,
      buffer: v.buffer as DeviceBuffer,
      off: this.ptr(v).off,
      count: v.count,
      peer,
      what: `${this.comm.describe(kind, peer, undefined)} (builtin ${what})`,
    };
  }

  /** Sends and receives posted as one NCCL group (empty ones left out). */
  async p2p(what: string, items: P2PItem[]): Promise<void> {
    this.comm.checkLive(`builtin ${what}`);
    await this.dev.flush(
      items.filter((i) => i.count > 0),
      `rank ${this.rank}: builtin ${what}`,
    );
  }

  /** Counts and displacements in elements, one per rank, as grouped send/recv. send = null: in place in recv. */
  async alltoallv(
    send: View | null,
    sendcounts: readonly number[],
    sdispls: readonly number[],
    recv: View,
    recvcounts: readonly number[],
    rdispls: readonly number[],
  ): Promise<void> {
    if (send !== null) this.comm.checkView(send, "builtin alltoallv", "send");
    this.comm.checkView(recv, "builtin alltoallv", "recv");
    const n = this.size;
    for (const [name, a] of [
      ["sendcounts", sendcounts],
      ["sdispls", sdispls],
      ["recvcounts", recvcounts],
      ["rdispls", rdispls],
    ] as const) {
      if (!Array.isArray(a) || a.length !== n) {
        throw new InvalidArgumentError(
          { rank: this.rank, op: "builtin alltoallv", arg: name },
          `expected ${n} entries, one per rank`,
        );
      }
    }
    let src = send;
    if (src === null) {
      src = this.alloc(recv.buffer.dtype, recv.count);
      this.copy(src, recv);
    }
    const items: P2PItem[] = [];
    for (let p = 0; p < n; p++) {
      const sv = sub(src, sdispls[p]!, sendcounts[p]!);
      const rv = sub(recv, rdispls[p]!, recvcounts[p]!);
      if (p === this.rank) {
        if (rv.count > 0) this.copy(rv, sv);
        continue;
      }
      items.push(this.item("send", sv, p, "alltoallv"));
      items.push(this.item("recv", rv, p, "alltoallv"));
    }
    await this.p2p("alltoallv", items);
  }
}

/** Block p (count elements) of a view. */
const block = (v: View, p: number, count: number): View => view(v, p * count, count);

/** gather and scatter without ncclGather/ncclScatter: the root exchanges a block with every other rank. */
async function rootedP2P(x: EngineCall, nccl: NcclEngine, kind: "gather" | "scatter"): Promise<void> {
  const { count, root } = x.call;
  // The root's blocks are in its output (gather) or input (scatter); each other rank has one.
  const [rootKind, otherKind] = kind === "gather" ? (["recv", "send"] as const) : (["send", "recv"] as const);
  const items: P2PItem[] = [];
  if (isRoot(x)) {
    const blocks = kind === "gather" ? output(x) : input(x);
    for (let p = 0; p < nccl.size; p++) {
      if (p !== root) items.push(nccl.item(rootKind, block(blocks, p, count), p, kind));
    }
    if (!x.call.inPlace) {
      if (kind === "gather") nccl.copy(block(output(x), root, count), input(x));
      else nccl.copy(output(x), block(input(x), root, count));
    }
  } else {
    items.push(nccl.item(otherKind, block(kind === "gather" ? input(x) : output(x), 0, count), root, kind));
  }
  await nccl.p2p(kind, items);
}

/**
 * How cclab calls NCCL, per collective: the NCCL function and its arguments (sendbuff, recvbuff,
 * count, op, root; null where this rank's NCCL does not read the buffer), or the grouped
 * send/recv that stand in where NCCL lacks the collective.
 */
export const NCCL_BUILTINS: BuiltinTable<NcclEngine> = {
  barrier: (nccl) => nccl.barrier(),
  broadcast: (nccl, x) => nccl.call("ncclBroadcast", x.input ?? output(x), output(x), x.call.count, SUM, x.call.root),
  reduce: (nccl, x) =>
    nccl.call("ncclReduce", input(x), isRoot(x) ? output(x) : null, x.call.count, x.call.op, x.call.root),
  gather: (nccl, x) =>
    nccl.has("ncclGather")
      ? nccl.call("ncclGather", input(x), isRoot(x) ? output(x) : null, x.call.count, SUM, x.call.root)
      : rootedP2P(x, nccl, "gather"),
  scatter: (nccl, x) =>
    nccl.has("ncclScatter")
      ? nccl.call("ncclScatter", isRoot(x) ? input(x) : null, output(x), x.call.count, SUM, x.call.root)
      : rootedP2P(x, nccl, "scatter"),
  allgather: (nccl, x) => nccl.call("ncclAllGather", input(x), output(x), x.call.count),
  reducescatter: (nccl, x) => nccl.call("ncclReduceScatter", input(x), output(x), x.call.count, x.call.op),
  allreduce: (nccl, x) => nccl.call("ncclAllReduce", input(x), output(x), x.call.count, x.call.op),
  alltoall: async (nccl, x) => {
    const { count } = x.call;
    let src = input(x);
    if (x.call.inPlace) {
      // NCCL has no in-place all-to-all: work from a copy of the input.
      src = nccl.alloc(src.buffer.dtype, count * nccl.size);
      nccl.copy(src, input(x));
    }
    if (nccl.has("ncclAlltoAll")) return nccl.call("ncclAlltoAll", src, output(x), count);
    const counts = Array.from({ length: nccl.size }, () => count);
    return nccl.alltoallv(src, counts, displs(counts), output(x), counts, displs(counts));
  },
  alltoallv: (nccl, x) => {
    const sc = x.call.sendCounts ?? [];
    const rc = x.call.recvCounts ?? [];
    return nccl.alltoallv(input(x), sc, displs(sc), output(x), rc, displs(rc));
  },
};

/** comm.builtin of the nccl backend: NCCL's collectives under MPI's names, and `spec` as the specs call them. */
export type NcclBuiltin = EngineCollectives<Promise<void>>;

export function ncclBuiltin(comm: BuiltinComm): NcclBuiltin {
  const engine = new NcclEngine(comm);
  return mpiNames<Promise<void>>({
    rank: comm.rank,
    spec: builtinOf(NCCL_BUILTINS, engine),
    run: (k, x) => NCCL_BUILTINS[k](engine, x),
    copy: (dst, src) => comm.copy(dst, src),
    alltoallv: (...a) => engine.alltoallv(...a),
    async: true,
  });
}
