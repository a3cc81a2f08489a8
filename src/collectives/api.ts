/**
 * The front API, in the spirit of torch.distributed: allReduce(comm, buf, { op, algorithm }),
 * broadcast, reduce, gather, scatter, allGather, reduceScatter, allToAll(+v), barrier and the
 * object versions. Arguments are validated here, once, with messages naming the rank, the
 * operation and the argument; past this point only internal invariants are asserted.
 */
import { deserialize } from "node:v8";
import { checkRoot as checkRootArg, checkView, serializeObject } from "../checks.js";
import type { Comm } from "../comm.js";
import { asView, type DataBuffer, isHostBuffer, isView, overlaps, type View } from "../core/buffer.js";
import { type DType, dtypeInfo } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { checkOpFitsDType, opLabel, parseOp, type ReduceOp } from "../core/op.js";
import { algorithmsOf, findAlgorithm } from "../registry.js";
import { faultCountDelta } from "../runtime/faults.js";
import { checkCall } from "../runtime/registry.js";
import { contextFor, DEFAULT_SEGMENT_BYTES } from "../schedule/context.js";
import { execute } from "../schedule/executor.js";
import { HAS_IN_PLACE, layout } from "../schedule/layout.js";
import type { Algorithm, Collective, ScheduleContext } from "../schedule/types.js";
import { type Choice, chooseAlgorithm } from "./auto.js";

type Buf = DataBuffer | View;

export interface CollectiveOptions {
  /** A registered algorithm's name, or 'auto' (default): see auto.ts for the table. */
  readonly algorithm?: string;
  /** Pipelining unit in elements, for segmented algorithms. */
  readonly segment?: number;
  /** Prefix for step labels in traces and errors. */
  readonly label?: string;
}
export interface ReduceOptions extends CollectiveOptions {
  /** 'sum' (default), 'prod', 'min', 'max', 'avg', 'band', 'bor', 'bxor', 'premulsum(s)' or a ReduceOp. */
  readonly op?: ReduceOp | string;
}
export interface RootOptions {
  /** Rank of the root in this communicator; default 0. */
  readonly root?: number;
}

/** Each comm's collective sequence number, for checked mode's fingerprint (torch counts the same way). */
const sequence = new WeakMap<Comm, number>();

function nextSeq(comm: Comm): number {
  const seq = sequence.get(comm) ?? 0;
  sequence.set(comm, seq + 1);
  return seq;
}

interface Call {
  readonly collective: Collective;
  readonly name: string;
  readonly input?: View;
  readonly output?: View;
  readonly count: number;
  readonly dtype: DType;
  readonly root?: number;
  readonly op?: ReduceOp;
  readonly sendCounts?: readonly number[];
  readonly recvCounts?: readonly number[];
  readonly options: CollectiveOptions;
}

function site(comm: Comm, op: string, arg?: string) {
  return { rank: comm.rank, op, arg };
}

function checkMember(comm: Comm, name: string): void {
  if (comm.rank < 0) {
    throw new InvalidArgumentError(
      { op: name, arg: "comm" },
      `this process is not a member of the group (world ranks ${comm.worldRanks.join(", ")})`,
    );
  }
}

function checkRoot(comm: Comm, name: string, root: unknown): number {
  return checkRootArg(comm.rank, comm.size, root, name);
}

/** A buffer or view argument, checked: its dtype known and its elements inside its buffer. */
function viewArg(comm: Comm, name: string, arg: string, b: unknown): View {
  if (isView(b)) return checkView(comm.rank, b, name, arg);
  const isBuffer = typeof b === "object" && b !== null && "dtype" in b && "count" in b && "location" in b;
  if (!isBuffer) {
    throw new InvalidArgumentError(site(comm, name, arg), `expected a buffer or a View, got ${describe(b)}`);
  }
  return checkView(comm.rank, asView(b as DataBuffer), name, arg);
}

function describe(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x === "object") return x.constructor?.name ?? "object";
  return `${typeof x} ${JSON.stringify(x)}`;
}

/** `b` as a view of exactly `want` elements, of the dtype of the call's `against` buffer. */
function checkBuf(
  comm: Comm,
  name: string,
  arg: string,
  b: Buf | undefined,
  want: number,
  dtype?: DType,
  against = "input",
): View {
  if (b === undefined) {
    throw new InvalidArgumentError(site(comm, name, arg), `is required here (${want} elements)`);
  }
  const v = viewArg(comm, name, arg, b);
  if (v.count !== want) {
    throw new InvalidArgumentError(site(comm, name, arg), `must have ${want} elements, has ${v.count}`);
  }
  if (dtype !== undefined && v.buffer.dtype !== dtype) {
    throw new InvalidArgumentError(
      site(comm, name, arg),
      `dtype ${v.buffer.dtype} differs from the ${against}'s ${dtype}`,
    );
  }
  return v;
}

/** Which algorithm 'auto' picks for a call of this shape, and why. */
export function chooseFor(collective: Collective, size: number, count: number, dtype: DType): Choice {
  const names = algorithmsOf(collective).map((a) => a.name);
  const c = chooseAlgorithm(collective, size, count * dtypeInfo(dtype).bytes, names);
  if (!c)
    throw new InvalidArgumentError({ op: collective, arg: "algorithm" }, `no ${collective} algorithm is registered`);
  return c;
}

function pick(comm: Comm, call: Call): Algorithm {
  const requested = call.options.algorithm ?? "auto";
  if (typeof requested !== "string") {
    throw new InvalidArgumentError(site(comm, call.name, "options.algorithm"), "must be a string");
  }
  const name =
    requested === "auto" ? chooseFor(call.collective, comm.size, call.count, call.dtype).algorithm : requested;
  return findAlgorithm(call.collective, name, { rank: comm.rank, op: call.name });
}

/** In place iff the views alias exactly as layout.ts says; any other overlap is an error. */
function inPlaceOf(comm: Comm, call: Call, ctx: ScheduleContext): boolean {
  const { input, output } = call;
  if (!input || !output || !overlaps(input, output)) return false;
  const a = layout(ctx).alias;
  const exact =
    a !== undefined &&
    HAS_IN_PLACE.has(call.collective) &&
    (a.kind === "same"
      ? input.offset === output.offset && input.count === output.count
      : a.kind === "input-in-output"
        ? input.offset === output.offset + a.offset
        : output.offset === input.offset + a.offset);
  if (!exact) {
    throw new InvalidArgumentError(
      site(comm, call.name, "output"),
      a
        ? `input and output overlap but not in ${call.collective}'s in-place layout (${a.kind} at offset ${a.offset})`
        : `input and output overlap; ${call.collective} has no in-place form on this rank`,
    );
  }
  return true;
}

async function run(comm: Comm, call: Call): Promise<void> {
  const alg = pick(comm, call);
  const segment = call.options.segment;
  if (segment !== undefined && (!Number.isInteger(segment) || segment < 1)) {
    throw new InvalidArgumentError(
      site(comm, call.name, "options.segment"),
      `must be a positive integer, got ${segment}`,
    );
  }
  const op = call.op ?? { name: "sum" };
  const base = contextFor(
    alg,
    {
      size: comm.size,
      count: call.count,
      root: call.root ?? 0,
      dtype: call.dtype,
      op,
      segment: segment ?? Math.max(1, Math.floor(DEFAULT_SEGMENT_BYTES / dtypeInfo(call.dtype).bytes)),
    },
    comm.rank,
  );
  const probe: ScheduleContext = { ...base, sendCounts: call.sendCounts, recvCounts: call.recvCounts };
  const ctx: ScheduleContext = { ...probe, inPlace: inPlaceOf(comm, call, probe) };
  // Checked mode (cclab run --check / CCLAB_CHECK=1): every rank compares this call before any
  // data moves; a no-op for comms that did not come from the runtime. A count fault shifts only
  // the fingerprint here, so checked mode can be shown catching it.
  await checkCall(comm, {
    seq: nextSeq(comm),
    collective: call.collective,
    algorithm: alg.name,
    count: call.count + faultCountDelta(comm),
    dtype: call.dtype,
    op: call.op ? opLabel(op) : "",
    root: call.root ?? -1,
  });
  await execute(comm, alg, ctx, { input: call.input, output: call.output }, { label: call.options.label });
}

function opFor(comm: Comm, name: string, options: ReduceOptions, dtype: DType): ReduceOp {
  const op = parseOp(options.op ?? "sum", site(comm, name, "options.op"));
  checkOpFitsDType(op, dtype, site(comm, name, "options.op"));
  return op;
}

/** torch.distributed.all_reduce: in place on `buf`, or into options.output. */
export async function allReduce(comm: Comm, buf: Buf, options: ReduceOptions & { output?: Buf } = {}): Promise<void> {
  const name = "allReduce";
  checkMember(comm, name);
  const input = viewArg(comm, name, "buf", buf);
  const dtype = input.buffer.dtype;
  const output = options.output ? checkBuf(comm, name, "options.output", options.output, input.count, dtype) : input;
  const op = opFor(comm, name, options, dtype);
  await run(comm, { collective: "allreduce", name, input, output, count: input.count, dtype, op, options });
}

/** torch.distributed.broadcast: `buf` holds the root's data; every rank receives into it (or options.output). */
export async function broadcast(
  comm: Comm,
  buf: Buf,
  options: CollectiveOptions & RootOptions & { output?: Buf } = {},
) {
  const name = "broadcast";
  checkMember(comm, name);
  const root = checkRoot(comm, name, options.root);
  const v = viewArg(comm, name, "buf", buf);
  const output = options.output ? checkBuf(comm, name, "options.output", options.output, v.count, v.buffer.dtype) : v;
  const input = comm.rank === root ? v : undefined;
  await run(comm, {
    collective: "broadcast",
    name,
    input,
    output,
    count: v.count,
    dtype: v.buffer.dtype,
    root,
    options,
  });
}

/** torch.distributed.reduce: the reduction of every rank's `buf` lands in the root's `buf` (or options.output there). */
export async function reduce(comm: Comm, buf: Buf, options: ReduceOptions & RootOptions & { output?: Buf } = {}) {
  const name = "reduce";
  checkMember(comm, name);
  const root = checkRoot(comm, name, options.root);
  const input = viewArg(comm, name, "buf", buf);
  const dtype = input.buffer.dtype;
  const op = opFor(comm, name, options, dtype);
  const output =
    comm.rank !== root
      ? undefined
      : options.output
        ? checkBuf(comm, name, "options.output", options.output, input.count, dtype)
        : input;
  await run(comm, { collective: "reduce", name, input, output, count: input.count, dtype, root, op, options });
}

/** torch.distributed.gather: every rank's `input` lands at the root in `output` (count·size elements, rank order). */
export async function gather(comm: Comm, input: Buf, options: CollectiveOptions & RootOptions & { output?: Buf } = {}) {
  const name = "gather";
  checkMember(comm, name);
  const root = checkRoot(comm, name, options.root);
  const inp = viewArg(comm, name, "input", input);
  const dtype = inp.buffer.dtype;
  const output =
    comm.rank === root
      ? checkBuf(comm, name, "options.output", options.output, inp.count * comm.size, dtype)
      : undefined;
  await run(comm, { collective: "gather", name, input: inp, output, count: inp.count, dtype, root, options });
}

/** torch.distributed.scatter: the root's `input` (count·size elements) is split across the ranks' `output`. */
export async function scatter(
  comm: Comm,
  output: Buf,
  options: CollectiveOptions & RootOptions & { input?: Buf } = {},
) {
  const name = "scatter";
  checkMember(comm, name);
  const root = checkRoot(comm, name, options.root);
  const out = viewArg(comm, name, "output", output);
  const dtype = out.buffer.dtype;
  const input =
    comm.rank === root
      ? checkBuf(comm, name, "options.input", options.input, out.count * comm.size, dtype, "output")
      : undefined;
  await run(comm, { collective: "scatter", name, input, output: out, count: out.count, dtype, root, options });
}

/** torch.distributed.all_gather_into_tensor(output, input): output = concat of every rank's input. */
export async function allGather(comm: Comm, output: Buf, input: Buf, options: CollectiveOptions = {}): Promise<void> {
  const name = "allGather";
  checkMember(comm, name);
  const inp = viewArg(comm, name, "input", input);
  const dtype = inp.buffer.dtype;
  const out = checkBuf(comm, name, "output", output, inp.count * comm.size, dtype);
  await run(comm, { collective: "allgather", name, input: inp, output: out, count: inp.count, dtype, options });
}

/** torch.distributed.reduce_scatter_tensor(output, input): rank r gets chunk r of the reduction of every input. */
export async function reduceScatter(comm: Comm, output: Buf, input: Buf, options: ReduceOptions = {}): Promise<void> {
  const name = "reduceScatter";
  checkMember(comm, name);
  const out = viewArg(comm, name, "output", output);
  const dtype = out.buffer.dtype;
  const inp = checkBuf(comm, name, "input", input, out.count * comm.size, dtype, "output");
  const op = opFor(comm, name, options, dtype);
  await run(comm, { collective: "reducescatter", name, input: inp, output: out, count: out.count, dtype, op, options });
}

/** torch.distributed.all_to_all_single(output, input): block j of rank i's input lands as block i of rank j's output. */
export async function allToAll(comm: Comm, output: Buf, input: Buf, options: CollectiveOptions = {}): Promise<void> {
  const name = "allToAll";
  checkMember(comm, name);
  const inp = viewArg(comm, name, "input", input);
  const dtype = inp.buffer.dtype;
  if (inp.count % comm.size !== 0) {
    throw new InvalidArgumentError(
      site(comm, name, "input"),
      `has ${inp.count} elements, not a multiple of the group size ${comm.size}`,
    );
  }
  const out = checkBuf(comm, name, "output", output, inp.count, dtype);
  const count = inp.count / comm.size;
  await run(comm, { collective: "alltoall", name, input: inp, output: out, count, dtype, options });
}

export interface SplitOptions extends CollectiveOptions {
  /** Elements this rank sends to each peer (torch's input_split_sizes). */
  readonly inputSplits: readonly number[];
  /** Elements this rank receives from each peer (torch's output_split_sizes). */
  readonly outputSplits: readonly number[];
}

/** all_to_all_single with input/output split sizes (all-to-all-v). */
export async function allToAllv(comm: Comm, output: Buf, input: Buf, options: SplitOptions): Promise<void> {
  const name = "allToAllv";
  checkMember(comm, name);
  const splits = (arg: "inputSplits" | "outputSplits"): number[] => {
    const s = options?.[arg];
    if (!Array.isArray(s) || s.length !== comm.size || s.some((x) => !Number.isInteger(x) || x < 0)) {
      throw new InvalidArgumentError(
        site(comm, name, `options.${arg}`),
        `must list ${comm.size} non-negative integers (one per rank), got ${JSON.stringify(s)}`,
      );
    }
    return [...s];
  };
  const sendCounts = splits("inputSplits");
  const recvCounts = splits("outputSplits");
  const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const inp = viewArg(comm, name, "input", input);
  const dtype = inp.buffer.dtype;
  checkBuf(comm, name, "input", input, total(sendCounts), dtype);
  const out = checkBuf(comm, name, "output", output, total(recvCounts), dtype);
  if (overlaps(inp, out)) {
    throw new InvalidArgumentError(site(comm, name, "output"), "overlaps the input; all-to-all-v has no in-place form");
  }
  await run(comm, {
    collective: "alltoallv",
    name,
    input: inp,
    output: out,
    count: 0,
    dtype,
    sendCounts,
    recvCounts,
    options,
  });
}

/** torch.distributed.barrier: returns on each rank only after every rank has entered. */
export async function barrier(comm: Comm, options: CollectiveOptions = {}): Promise<void> {
  const name = "barrier";
  checkMember(comm, name);
  await run(comm, { collective: "barrier", name, count: 0, dtype: "uint8", options });
}

function hostBytes(comm: Comm, name: string, b: DataBuffer): Uint8Array {
  if (!isHostBuffer(b)) {
    throw new InvalidArgumentError(
      site(comm, name),
      `object collectives need host memory; backend '${comm.backend}' gave ${b.location}`,
    );
  }
  return b.data as Uint8Array;
}

/** torch.distributed.broadcast_object_list for one object: returns the root's object on every rank (v8.serialize). */
export async function broadcastObject<T>(
  comm: Comm,
  obj: T,
  options: CollectiveOptions & RootOptions = {},
): Promise<T> {
  const name = "broadcastObject";
  checkMember(comm, name);
  const root = checkRoot(comm, name, options.root);
  const bytes = comm.rank === root ? serializeObject(comm.rank, name, obj) : undefined;
  const len = comm.alloc("int64", 1);
  if (bytes) (len as unknown as { data: BigInt64Array }).data[0] = BigInt(bytes.length);
  await broadcast(comm, len, { ...options, root });
  const n = Number((len as unknown as { data: BigInt64Array }).data[0]);
  const payload = comm.alloc("uint8", n);
  const host = hostBytes(comm, name, payload);
  if (bytes) host.set(bytes);
  await broadcast(comm, payload, { ...options, root });
  return deserialize(host) as T;
}

/** torch.distributed.all_gather_object: every rank's object, in rank order, on every rank. */
export async function allGatherObject<T>(comm: Comm, obj: T, options: CollectiveOptions = {}): Promise<T[]> {
  const name = "allGatherObject";
  checkMember(comm, name);
  const bytes = serializeObject(comm.rank, name, obj);
  const mine = comm.alloc("int64", 1);
  const lens = comm.alloc("int64", comm.size);
  (mine as unknown as { data: BigInt64Array }).data[0] = BigInt(bytes.length);
  await allGather(comm, lens, mine, options);
  const sizes = [...(lens as unknown as { data: BigInt64Array }).data].map(Number);
  const max = Math.max(0, ...sizes);
  // Pad every object to the longest, as torch does, so one fixed-size all-gather carries them.
  const padded = comm.alloc("uint8", max);
  hostBytes(comm, name, padded).set(bytes);
  const all = comm.alloc("uint8", max * comm.size);
  await allGather(comm, all, padded, options);
  const host = hostBytes(comm, name, all);
  return sizes.map((s, r) => deserialize(host.subarray(r * max, r * max + s)) as T);
}
