/**
 * An in-process stand-in for native/nccl.cc (NCCL plus the CUDA calls), so the nccl backend's
 * TypeScript (stream ordering, isend/irecv batching, non-blocking enqueue, async-error polling,
 * aborts, timeouts, builtin collectives, the differential harness) runs and is tested on machines
 * without a GPU. Like the sim backend it is a model, not NCCL: device memory is host memory,
 * every "GPU" runs its streams in order, a group's sends and receives match per (communicator,
 * sender, receiver) in posting order once the group reaches the head of its stream, and a
 * collective runs when it reaches the head of every member's stream. A matched send and receive
 * of different sizes raises ncclInvalidUsage on both communicators (real NCCL would hang).
 *
 * Non-blocking enqueue is modelled too: with inProgressPolls > 0, ncclGroupEnd and collectives
 * return ncclInProgress and their kernels reach the stream only after that many
 * ncclCommGetAsyncError polls, so anything the backend enqueued in between would run first (and
 * the tests would see it).
 *
 * Teardown as on one shared GPU, where every connection is NCCL's socket transport:
 * ncclCommFinalize reports ncclInProgress until every send of that rank has been delivered;
 * ncclCommAbort drops them; once a rank's communicator is destroyed or aborted (its process
 * gone), every peer still sending to or receiving from it, or waiting for it in a collective,
 * gets ncclRemoteError ("Connection closed by remote peer").
 */
import { randomBytes } from "node:crypto";
import type { NcclComm } from "../../src/backends/nccl/comm.js";
import { initNccl } from "../../src/backends/nccl/index.js";
import { type DType, dtypeInfo, type TypedArray } from "../../src/core/dtype.js";
import { type Combine, reduceArrays, scaleArrays, sumScaling } from "../../src/core/op.js";
import { KeyTable, MemoryStore } from "../../src/kvstore.js";
import {
  type DevicePtr,
  type NativeBuf,
  type NativeDeviceInfo,
  type NativeNccl,
  NCCL_RESULT,
  type NcclCollective,
  type NcclLibrary,
  type NcclOpName,
} from "../../src/native/types.js";

export interface FakeOptions {
  /** GPUs the fake reports (deviceCount). Default 1. */
  readonly devices?: number;
  /** ncclAlltoAll/ncclGather/ncclScatter present (NCCL >= 2.28). Default true. */
  readonly nccl228?: boolean;
  /** Polls of ncclCommGetAsyncError that report ncclInProgress after each group end or collective. Default 0. */
  readonly inProgressPolls?: number;
  /** An error (code, ncclGetLastError text) a rank's non-blocking ncclCommInitRank ends in, as NCCL's init thread reports it. */
  readonly initError?: (rank: number) => { readonly code: number; readonly message: string } | undefined;
}

const NAMES = [
  "no error",
  "unhandled cuda error",
  "unhandled system error",
  "internal error",
  "invalid argument",
  "invalid usage",
  "remote process exited or there was a network error",
  "NCCL operation in progress",
  "operation timed out",
];

interface Item {
  readonly type: "send" | "recv";
  readonly member: Member;
  readonly peer: number;
  readonly bytes: number;
  readonly mem: () => Uint8Array;
  done: boolean;
}

interface Coll {
  readonly name: NcclCollective;
  readonly send: () => Uint8Array | null;
  readonly recv: () => Uint8Array | null;
  readonly count: number;
  readonly dtype: DType;
  readonly op: NcclOpName;
  readonly root: number;
}

/** How far a collective's buffer spans, in counts (perRank: count × ranks), and whether only the root's is read. */
interface Extent {
  readonly perRank?: true;
  readonly rootOnly?: true;
}

/** Each NCCL collective's send and receive buffers, as nccl.h describes them. */
const SHAPES: Record<NcclCollective, { send: Extent; recv: Extent; nccl228?: true }> = {
  ncclAllReduce: { send: {}, recv: {} },
  ncclBroadcast: { send: { rootOnly: true }, recv: {} },
  ncclReduce: { send: {}, recv: { rootOnly: true } },
  ncclAllGather: { send: {}, recv: { perRank: true } },
  ncclReduceScatter: { send: { perRank: true }, recv: {} },
  ncclAlltoAll: { send: { perRank: true }, recv: { perRank: true }, nccl228: true },
  ncclGather: { send: {}, recv: { perRank: true, rootOnly: true }, nccl228: true },
  ncclScatter: { send: { perRank: true, rootOnly: true }, recv: {}, nccl228: true },
};

type Op =
  | { kind: "fn"; run: () => void }
  | { kind: "event"; ev: { done: boolean } }
  | { kind: "p2p"; items: Item[]; posted: boolean }
  | { kind: "coll"; member: Member; call: Coll; posted: boolean; done: boolean };

interface Group {
  readonly id: string;
  readonly nranks: number;
  readonly members: (Member | undefined)[];
  readonly channels: Map<string, { sends: Item[]; recvs: Item[] }>;
  readonly colls: Op[][];
}

interface Deferred {
  polls: number;
  ran: boolean;
  readonly run: () => void;
}

interface Member {
  readonly group: Group;
  readonly rank: number;
  readonly native: FakeNative;
  asyncError: number;
  lastError: string;
  aborted: boolean;
  /** Destroyed or aborted: its process let go of the communicator (and its connections). */
  gone: boolean;
  /** ncclCommFinalize was called: in progress until `sends` is empty. */
  finalizing: boolean;
  /** Sends of this rank not yet delivered. */
  readonly sends: Set<Item>;
  deferred: Deferred[];
}

/** A peer's connection closed under `m`, as NCCL's socket transport reports it. */
function connectionClosed(m: Member, peer: number): void {
  if (m.gone || m.asyncError !== NCCL_RESULT.success) return;
  m.asyncError = NCCL_RESULT.remoteError;
  m.lastError = `fake NCCL: NET/Socket : Connection closed by remote peer (rank ${peer})`;
}

function finish(i: Item): void {
  i.done = true;
  if (i.type === "send") i.member.sends.delete(i);
}

/** One "node": the fake GPUs and NCCL communicators shared by the ranks of one test. */
export class FakeNcclWorld {
  readonly natives: FakeNative[] = [];
  readonly groups = new Map<string, Group>();
  readonly memory = new Map<DevicePtr, { owner: FakeNative; bytes: Uint8Array }>();
  private nextPtr = 0x10000n;
  private scheduled = false;

  constructor(readonly options: FakeOptions = {}) {}

  /** A new process's binding (one per rank). */
  native(): FakeNative {
    const n = new FakeNative(this);
    this.natives.push(n);
    return n;
  }

  allocate(owner: FakeNative, bytes: number): DevicePtr {
    const p = this.nextPtr;
    this.nextPtr += BigInt(Math.ceil(Math.max(bytes, 1) / 256) * 256 + 256);
    this.memory.set(p, { owner, bytes: new Uint8Array(bytes) });
    return p;
  }

  resolve(owner: FakeNative, ptr: DevicePtr, off: number, bytes: number): Uint8Array {
    const m = this.memory.get(ptr);
    if (!m) throw new Error(`fake cuda: ${ptr.toString(16)} is not an allocation (freed, or never allocated)`);
    if (m.owner !== owner) throw new Error("fake cuda: pointer of another process's device");
    if (off + bytes > m.bytes.length) {
      throw new Error(`fake cuda: [${off}, ${off + bytes}) is outside an allocation of ${m.bytes.length} bytes`);
    }
    return m.bytes.subarray(off, off + bytes);
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Runs every stream as far as it can go. */
  pump(): void {
    for (;;) {
      let progress = false;
      for (const n of this.natives) {
        for (const q of n.streams.values()) if (this.drain(q)) progress = true;
      }
      if (this.match()) progress = true;
      if (!progress) return;
    }
  }

  private drain(q: Op[]): boolean {
    let progress = false;
    while (q.length > 0) {
      const op = q[0]!;
      if (op.kind === "fn") {
        q.shift();
        op.run();
      } else if (op.kind === "event") {
        q.shift();
        op.ev.done = true;
      } else if (op.kind === "p2p") {
        if (!op.posted) {
          op.posted = true;
          for (const i of op.items) this.postItem(i);
          progress = true;
        }
        if (!op.items.every((i) => i.done || i.member.gone)) return progress;
        q.shift();
      } else {
        if (op.member.aborted) {
          q.shift();
          progress = true;
          continue;
        }
        if (!op.posted) {
          op.posted = true;
          op.member.group.colls[op.member.rank]!.push(op);
          this.runCollectives(op.member.group);
          progress = true;
        }
        if (!op.done) return progress;
        q.shift();
      }
      progress = true;
    }
    return progress;
  }

  private postItem(i: Item): void {
    if (i.member.group.members[i.peer]?.gone) connectionClosed(i.member, i.peer);
    const from = i.type === "send" ? i.member.rank : i.peer;
    const to = i.type === "send" ? i.peer : i.member.rank;
    const key = `${from}->${to}`;
    const ch = i.member.group.channels.get(key) ?? { sends: [], recvs: [] };
    i.member.group.channels.set(key, ch);
    (i.type === "send" ? ch.sends : ch.recvs).push(i);
  }

  private match(): boolean {
    let progress = false;
    for (const g of this.groups.values()) {
      for (const ch of g.channels.values()) {
        while (ch.sends.length > 0 && ch.recvs.length > 0) {
          const s = ch.sends.shift()!;
          const r = ch.recvs.shift()!;
          if (s.bytes !== r.bytes) {
            for (const m of [s.member, r.member]) {
              m.asyncError = NCCL_RESULT.invalidUsage;
              m.lastError = `fake NCCL: rank ${s.member.rank} sent ${s.bytes} bytes, rank ${r.member.rank} expected ${r.bytes}`;
            }
          } else if (s.bytes > 0) {
            r.mem().set(s.mem());
          }
          finish(s);
          finish(r);
          progress = true;
        }
      }
    }
    return progress;
  }

  /** `gone` let go of its communicator: every peer with something outstanding with it hears so. */
  dropped(gone: Member): void {
    const g = gone.group;
    for (const ch of g.channels.values()) {
      for (const list of [ch.sends, ch.recvs]) {
        for (let k = list.length - 1; k >= 0; k--) if (list[k]!.member === gone) finish(list.splice(k, 1)[0]!);
      }
    }
    for (const ch of g.channels.values()) {
      for (const i of [...ch.sends, ...ch.recvs]) if (i.peer === gone.rank) connectionClosed(i.member, gone.rank);
    }
    for (const m of g.members) if (m && m !== gone && g.colls[m.rank]!.length > 0) connectionClosed(m, gone.rank);
    for (const i of [...gone.sends]) finish(i);
    this.schedule();
  }

  private runCollectives(g: Group): void {
    while (g.colls.every((q) => q.length > 0)) {
      const heads = g.colls.map((q) => q.shift()!) as Extract<Op, { kind: "coll" }>[];
      const names = new Set(heads.map((h) => `${h.call.name}/${h.call.count}/${h.call.dtype}/${h.call.root}`));
      if (names.size > 1) {
        for (const h of heads) {
          h.member.asyncError = NCCL_RESULT.invalidUsage;
          h.member.lastError = `fake NCCL: ranks called different collectives: ${[...names].join(" vs ")}`;
        }
      } else {
        try {
          collective(heads.map((h) => h.call));
        } catch (e) {
          for (const h of heads) {
            h.member.asyncError = NCCL_RESULT.internalError;
            h.member.lastError = `fake NCCL: ${e instanceof Error ? e.message : String(e)}`;
          }
        }
      }
      for (const h of heads) h.done = true;
    }
  }
}

/** The collective's effect on every rank's buffers (reductions in rank order, as the oracle). */
function collective(calls: Coll[]): void {
  const c = calls[0]!;
  if (c.count === 0) return;
  const n = calls.length;
  const info = dtypeInfo(c.dtype);
  const esz = info.bytes;
  const typed = (u8: Uint8Array, count: number): TypedArray =>
    new (info.array as unknown as new (b: ArrayBufferLike, o: number, l: number) => TypedArray)(
      u8.buffer,
      u8.byteOffset,
      count,
    );
  const sends = calls.map((x) => x.send()?.slice() ?? null);
  // ncclAvg as NCCL computes it (sumScaling): floats pre-multiply by 1/n, integers divide the sum.
  const { premul, postdiv } = sumScaling({ name: c.op }, c.dtype, n);
  const reduced = (len: number, from: (r: number) => Uint8Array): Uint8Array => {
    const contrib = (r: number): Uint8Array => {
      const x = from(r).slice();
      if (premul !== undefined) scaleArrays(c.dtype, typed(x, len), 0, typed(x, len), 0, len, premul, 1);
      return x;
    };
    const acc = contrib(0);
    const combine: Combine = c.op === "avg" ? "sum" : c.op;
    for (let r = 1; r < n; r++) reduceArrays(c.dtype, combine, typed(acc, len), 0, typed(contrib(r), len), 0, len);
    if (postdiv !== undefined) scaleArrays(c.dtype, typed(acc, len), 0, typed(acc, len), 0, len, 1, postdiv);
    return acc;
  };
  const bytes = c.count * esz;
  const put = (r: number, data: Uint8Array, at = 0) => calls[r]!.recv()?.set(data, at);
  switch (c.name) {
    case "ncclAllReduce": {
      const acc = reduced(c.count, (r) => sends[r]!);
      for (let r = 0; r < n; r++) put(r, acc);
      break;
    }
    case "ncclReduce":
      put(
        c.root,
        reduced(c.count, (r) => sends[r]!),
      );
      break;
    case "ncclBroadcast":
      for (let r = 0; r < n; r++) put(r, sends[c.root]!);
      break;
    case "ncclAllGather":
      for (let r = 0; r < n; r++) for (let s = 0; s < n; s++) put(r, sends[s]!, s * bytes);
      break;
    case "ncclReduceScatter": {
      const acc = reduced(c.count * n, (r) => sends[r]!);
      for (let r = 0; r < n; r++) put(r, acc.subarray(r * bytes, (r + 1) * bytes));
      break;
    }
    case "ncclAlltoAll":
      for (let d = 0; d < n; d++) {
        for (let s = 0; s < n; s++) put(d, sends[s]!.subarray(d * bytes, (d + 1) * bytes), s * bytes);
      }
      break;
    case "ncclGather":
      for (let s = 0; s < n; s++) put(c.root, sends[s]!, s * bytes);
      break;
    case "ncclScatter":
      for (let r = 0; r < n; r++) put(r, sends[c.root]!.subarray(r * bytes, (r + 1) * bytes));
      break;
    default:
      throw new Error(`fake NCCL: no collective ${c.name}`);
  }
}

/** One process's binding: implements NativeNccl over FakeNcclWorld. */
export class FakeNative implements NativeNccl {
  readonly cuda = true;
  readonly cudaRuntimeVersion = 13000;
  readonly streams = new Map<number, Op[]>();
  private readonly events = new Map<number, { done: boolean }>();
  /** cudaEventCreate calls, for tests (the backend should reuse its events). */
  eventsCreated = 0;
  private readonly members = new Map<number, Member>();
  private nextHandle = 1;
  private device = 0;
  private groupDepth = 0;
  private groupItems: { item: Item; stream: number }[] = [];
  /** Every commAbort, for tests. */
  readonly aborted: number[] = [];

  constructor(readonly world: FakeNcclWorld) {}

  private get inProgressPolls(): number {
    return this.world.options.inProgressPolls ?? 0;
  }

  load(): NcclLibrary {
    return this.loaded();
  }
  loaded(): NcclLibrary {
    const all = this.world.options.nccl228 ?? true;
    return {
      ok: true,
      path: "(fake)",
      version: 22809,
      versionString: "2.28.9",
      optional: {
        commInitRankConfig: true,
        commFinalize: true,
        getLastError: true,
        alltoAll: all,
        gather: all,
        scatter: all,
      },
    };
  }
  errorString(code: number): string {
    return NAMES[code] ?? `unknown result code ${code}`;
  }
  getUniqueId(): Uint8Array {
    return new Uint8Array(randomBytes(128));
  }
  driverVersion(): number {
    return 13000;
  }
  runtimeVersion(): number {
    return 13000;
  }
  deviceCount(): number {
    return this.world.options.devices ?? 1;
  }
  setDevice(device: number): void {
    if (device < 0 || device >= this.deviceCount()) throw cudaError(101, "cudaErrorInvalidDevice", "cudaSetDevice");
    this.device = device;
  }
  getDevice(): number {
    return this.device;
  }
  deviceInfo(device: number): NativeDeviceInfo {
    return {
      name: `Fake GPU ${device}`,
      major: 9,
      minor: 0,
      totalMemory: 1 << 30,
      pciBusId: `0000:0${device}:00.0`,
      memoryPools: true,
    };
  }

  private queue(stream: number): Op[] {
    const q = this.streams.get(stream);
    if (!q) throw new Error(`invalid or destroyed stream handle ${stream}`);
    return q;
  }
  private enqueue(stream: number, op: Op): void {
    this.queue(stream).push(op);
    this.world.schedule();
  }
  private mem(ptr: DevicePtr, off: number, bytes: number): () => Uint8Array {
    return () => this.world.resolve(this, ptr, off, bytes);
  }
  private typed(dtype: DType, ptr: DevicePtr, off: number, count: number): TypedArray {
    const u8 = this.world.resolve(this, ptr, off, count * dtypeInfo(dtype).bytes);
    return new (dtypeInfo(dtype).array as unknown as new (b: ArrayBufferLike, o: number, l: number) => TypedArray)(
      u8.buffer,
      u8.byteOffset,
      count,
    );
  }

  malloc(bytes: number, stream: number): DevicePtr {
    this.queue(stream);
    return bytes === 0 ? 0n : this.world.allocate(this, bytes);
  }
  free(ptr: DevicePtr, stream: number): void {
    if (ptr === 0n) return;
    this.enqueue(stream, { kind: "fn", run: () => this.world.memory.delete(ptr) });
  }
  private idleOrThrow(stream: number, what: string): void {
    this.world.pump();
    if (this.queue(stream).length > 0) {
      throw new Error(`fake cuda: ${what} on a busy stream (the real call would block the event loop)`);
    }
  }
  memcpyHtoD(dst: DevicePtr, dstOff: number, src: NativeBuf, srcOff: number, bytes: number, stream: number): void {
    this.idleOrThrow(stream, "memcpyHtoD");
    const s =
      src instanceof ArrayBuffer ? new Uint8Array(src) : new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
    this.world.resolve(this, dst, dstOff, bytes).set(s.subarray(srcOff, srcOff + bytes));
  }
  memcpyDtoH(dst: NativeBuf, dstOff: number, src: DevicePtr, srcOff: number, bytes: number, stream: number): void {
    this.idleOrThrow(stream, "memcpyDtoH");
    const d =
      dst instanceof ArrayBuffer ? new Uint8Array(dst) : new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength);
    d.set(this.world.resolve(this, src, srcOff, bytes), dstOff);
  }
  memcpyDtoD(dst: DevicePtr, dstOff: number, src: DevicePtr, srcOff: number, bytes: number, stream: number): void {
    this.enqueue(stream, {
      kind: "fn",
      run: () => this.world.resolve(this, dst, dstOff, bytes).set(this.world.resolve(this, src, srcOff, bytes).slice()),
    });
  }
  memset(ptr: DevicePtr, off: number, value: number, bytes: number, stream: number): void {
    this.enqueue(stream, { kind: "fn", run: () => this.world.resolve(this, ptr, off, bytes).fill(value) });
  }
  private nextStream = 1;
  streamCreate(): number {
    const h = this.nextStream++;
    this.streams.set(h, []);
    return h;
  }
  streamDestroy(stream: number): void {
    this.streams.delete(stream);
  }
  streamQuery(stream: number): boolean {
    this.world.pump();
    return this.queue(stream).length === 0;
  }
  streamSynchronize(stream: number): void {
    this.idleOrThrow(stream, "streamSynchronize (would deadlock a single-threaded fake)");
  }
  private nextEvent = 1;
  eventCreate(): number {
    this.eventsCreated++;
    const h = this.nextEvent++;
    this.events.set(h, { done: true });
    return h;
  }
  eventRecord(event: number, stream: number): void {
    const ev = this.events.get(event);
    if (!ev) throw new Error(`invalid or destroyed event handle ${event}`);
    ev.done = false;
    this.enqueue(stream, { kind: "event", ev });
  }
  eventQuery(event: number): boolean {
    this.world.pump();
    const ev = this.events.get(event);
    if (!ev) throw new Error(`invalid or destroyed event handle ${event}`);
    return ev.done;
  }
  eventDestroy(event: number): void {
    this.events.delete(event);
  }
  localReduce(
    dtype: DType,
    combine: Combine,
    dst: DevicePtr,
    dOff: number,
    src: DevicePtr,
    sOff: number,
    count: number,
    stream: number,
  ): void {
    if (dtypeInfo(dtype).kind === "float" && (combine === "band" || combine === "bor" || combine === "bxor")) {
      throw new TypeError("reduce op is bitwise and does not apply to a floating-point dtype");
    }
    this.enqueue(stream, {
      kind: "fn",
      run: () =>
        reduceArrays(
          dtype,
          combine,
          this.typed(dtype, dst, dOff, count),
          0,
          this.typed(dtype, src, sOff, count),
          0,
          count,
        ),
    });
  }
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
  ): void {
    this.enqueue(stream, {
      kind: "fn",
      run: () =>
        scaleArrays(
          dtype,
          this.typed(dtype, dst, dOff, count),
          0,
          this.typed(dtype, src, sOff, count),
          0,
          count,
          mul,
          div,
        ),
    });
  }

  // ---- NCCL ----

  private member(comm: number): Member {
    const m = this.members.get(comm);
    if (!m) throw new Error(`invalid or destroyed communicator handle ${comm}`);
    return m;
  }

  commInitRank(nranks: number, id: Uint8Array, rank: number, blocking: boolean): number {
    if (blocking) throw new Error("fake NCCL: blocking communicators would deadlock ranks sharing one thread");
    const key = Buffer.from(id).toString("hex");
    let g = this.world.groups.get(key);
    if (!g) {
      g = { id: key, nranks, members: [], channels: new Map(), colls: Array.from({ length: nranks }, () => []) };
      this.world.groups.set(key, g);
    }
    if (g.nranks !== nranks) throw ncclError(NCCL_RESULT.invalidArgument, "ncclCommInitRank", this);
    if (rank < 0 || rank >= nranks || g.members[rank])
      throw ncclError(NCCL_RESULT.invalidArgument, "ncclCommInitRank", this);
    const m: Member = {
      group: g,
      rank,
      native: this,
      asyncError: 0,
      lastError: "",
      aborted: false,
      gone: false,
      finalizing: false,
      sends: new Set(),
      deferred: [],
    };
    const refused = this.world.options.initError?.(rank);
    if (refused) {
      m.asyncError = refused.code;
      m.lastError = refused.message;
    }
    g.members[rank] = m;
    const h = this.nextHandle++;
    this.members.set(h, m);
    return h;
  }
  commGetAsyncError(comm: number): number {
    const m = this.member(comm);
    this.world.pump();
    if (m.asyncError !== NCCL_RESULT.success) return m.asyncError;
    const g = m.group;
    for (let r = 0; r < g.nranks; r++) if (!g.members[r]) return NCCL_RESULT.inProgress;
    if (m.finalizing) return m.sends.size > 0 ? NCCL_RESULT.inProgress : NCCL_RESULT.success;
    for (const d of m.deferred) {
      if (d.polls > 0) d.polls--;
      if (d.polls === 0 && !d.ran) {
        d.ran = true;
        d.run();
      }
    }
    m.deferred = m.deferred.filter((d) => !d.ran);
    return m.deferred.length > 0 ? NCCL_RESULT.inProgress : NCCL_RESULT.success;
  }
  /** Test hook: an asynchronous error on a communicator (a peer died, a network error). */
  injectAsyncError(comm: number, code: number = NCCL_RESULT.remoteError, message = "fake: injected"): void {
    const m = this.member(comm);
    m.asyncError = code;
    m.lastError = message;
  }
  lastError(comm: number): string {
    return this.members.get(comm)?.lastError ?? "";
  }
  commCount(comm: number): number {
    return this.member(comm).group.nranks;
  }
  /** Every commFinalize and commDestroy, for tests. */
  readonly finalized: number[] = [];
  readonly destroyed: number[] = [];
  commFinalize(comm: number): number {
    const m = this.member(comm);
    if (m.finalizing) throw ncclError(NCCL_RESULT.invalidArgument, "ncclCommFinalize", this);
    m.finalizing = true;
    this.finalized.push(comm);
    return NCCL_RESULT.inProgress;
  }
  private drop(comm: number, abort: boolean): void {
    const m = this.member(comm);
    this.members.delete(comm);
    if (abort) {
      m.aborted = true;
      this.aborted.push(comm);
    } else {
      this.destroyed.push(comm);
    }
    m.gone = true;
    this.world.dropped(m);
  }
  commDestroy(comm: number): void {
    this.drop(comm, false);
  }
  commAbort(comm: number): void {
    this.drop(comm, true);
  }
  groupStart(): void {
    this.groupDepth++;
  }
  groupEnd(): number {
    if (this.groupDepth === 0) throw ncclError(NCCL_RESULT.invalidUsage, "ncclGroupEnd", this);
    this.groupDepth--;
    if (this.groupDepth > 0) return NCCL_RESULT.success;
    const all = this.groupItems;
    this.groupItems = [];
    if (all.length === 0) return NCCL_RESULT.success;
    const stream = all[0]!.stream;
    const op: Op = { kind: "p2p", items: all.map((a) => a.item), posted: false };
    return this.launch([...new Set(all.map((a) => a.item.member))], () => this.enqueue(stream, op));
  }
  /** Enqueues now, or after inProgressPolls polls of every member's async error. */
  private launch(members: Member[], run: () => void): number {
    if (this.inProgressPolls <= 0) {
      run();
      return NCCL_RESULT.success;
    }
    const d: Deferred = { polls: this.inProgressPolls, ran: false, run };
    for (const m of members) m.deferred.push(d);
    return NCCL_RESULT.inProgress;
  }
  private p2p(
    type: "send" | "recv",
    ptr: DevicePtr,
    off: number,
    count: number,
    dtype: DType,
    peer: number,
    comm: number,
    stream: number,
  ): number {
    const m = this.member(comm);
    this.queue(stream);
    if (peer < 0 || peer >= m.group.nranks)
      throw ncclError(NCCL_RESULT.invalidArgument, `nccl${type === "send" ? "Send" : "Recv"}`, this);
    const bytes = count * dtypeInfo(dtype).bytes;
    const item: Item = { type, member: m, peer, bytes, mem: this.mem(ptr, off, bytes), done: false };
    if (type === "send") m.sends.add(item);
    if (this.groupDepth > 0) {
      this.groupItems.push({ item, stream });
      return NCCL_RESULT.success;
    }
    return this.launch([m], () => this.enqueue(stream, { kind: "p2p", items: [item], posted: false }));
  }
  send(ptr: DevicePtr, off: number, count: number, dtype: DType, peer: number, comm: number, stream: number): number {
    return this.p2p("send", ptr, off, count, dtype, peer, comm, stream);
  }
  recv(ptr: DevicePtr, off: number, count: number, dtype: DType, peer: number, comm: number, stream: number): number {
    return this.p2p("recv", ptr, off, count, dtype, peer, comm, stream);
  }
  /** NativeNccl.collective: one entry for every NCCL collective, its arguments typed from the binding's. */
  collective(...args: Parameters<NativeNccl["collective"]>): number {
    const [fn, sp, so, rp, ro, count, dtype, op, root, comm, stream] = args;
    const shape = SHAPES[fn];
    if (!shape) throw new TypeError(`no NCCL collective '${fn}'`);
    if (shape.nccl228 && this.world.options.nccl228 === false) throw new Error(`${fn} needs NCCL 2.28 or newer`);
    if (this.groupDepth > 0) throw new Error("fake NCCL: collectives inside a group are not modelled");
    const m = this.member(comm);
    this.queue(stream);
    const b = count * dtypeInfo(dtype).bytes;
    const isRoot = m.rank === root;
    // The bytes a buffer spans on this rank, or null where this rank's NCCL does not read it.
    const at = (ptr: DevicePtr, off: number, e: Extent) =>
      (e.rootOnly && !isRoot) || ptr === 0n ? () => null : this.mem(ptr, off, e.perRank ? b * m.group.nranks : b);
    const call: Coll = { name: fn, send: at(sp, so, shape.send), recv: at(rp, ro, shape.recv), count, dtype, op, root };
    return this.launch([m], () => this.enqueue(stream, { kind: "coll", member: m, call, posted: false, done: false }));
  }
}

function cudaError(code: number, name: string, context: string): Error {
  return Object.assign(new Error(`${context}: cuda error ${code}: ${name}`), {
    engine: "cuda",
    code,
    engineMessage: name,
    context,
  });
}

function ncclError(code: number, context: string, n: FakeNative): Error {
  const msg = n.errorString(code);
  return Object.assign(new Error(`${context}: nccl error ${code}: ${msg}`), {
    engine: "nccl",
    code,
    engineMessage: msg,
    context,
  });
}

export interface FakeRunOptions extends FakeOptions {
  readonly timeoutMs?: number;
  /** Called with each rank's abort error (default: ignore; the failing promise carries it). */
  readonly onAbort?: (rank: number, e: Error) => void;
}

/**
 * Runs fn on n ranks of one fake world (each rank its own FakeNative, as its own process would
 * have), with the store and initNccl as cclab run would use them. Each rank's comm is destroyed
 * as soon as its fn settles, as cclab run's rank process does when main returns; resolves once
 * every comm has finished finalizing.
 */
export async function runFakeRanks<T>(
  n: number,
  fn: (comm: NcclComm, native: FakeNative, world: FakeNcclWorld) => Promise<T>,
  o: FakeRunOptions = {},
): Promise<T[]> {
  const world = new FakeNcclWorld(o);
  const timeoutMs = o.timeoutMs ?? 30_000;
  // One table, each rank's view held to the TCP store's rule (a rank writes only rank/<r>/...).
  const table = new KeyTable();
  const natives = Array.from({ length: n }, () => world.native());
  const comms = await Promise.all(
    natives.map((native, rank) =>
      initNccl({
        rank,
        size: n,
        localRank: rank,
        store: new MemoryStore(table, timeoutMs, rank),
        native,
        timeoutMs,
        onAbort: (e) => o.onAbort?.(rank, e),
      }),
    ),
  );
  try {
    return await Promise.all(comms.map((c, r) => fn(c, natives[r]!, world).finally(() => c.destroy())));
  } finally {
    for (const c of comms) c.destroy();
    await Promise.all(comms.map((c) => c.device.finalized()));
  }
}
