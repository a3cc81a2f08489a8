/**
 * The front API, in the spirit of torch.distributed: allReduce(comm, buf, { op, algorithm }),
 * broadcast, reduce, gather, scatter, allGather, reduceScatter, allToAll(+v) and barrier (the
 * object versions are objects.ts). Arguments are validated here, once (the checks below), with messages
 * naming the rank, the operation and the argument; past this point only internal invariants are
 * asserted.
 *
 * Buffers may be typed arrays (a Float32Array is float32), cclab buffers or views.
 *
 * Collectives on one communicator run in the order each rank issues them, one at a time, as on
 * NCCL's stream: `Promise.all([allReduce(c, a), allReduce(c, b)])` is correct on every backend,
 * with b's messages never meeting a's. Each call's plan (its operations and their dependencies)
 * is compiled once per call shape and reused, so a repeated call generates no schedule.
 */
import { checkView } from "../checks.js";
import type { Comm } from "../comm.js";
import { type Buf, overlaps, type View } from "../core/buffer.js";
import type { DType } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { checkOpFitsDType, opLabel, parseOp, type ReduceOp } from "../core/op.js";
import type { Algorithm } from "../schedule/dsl.js";
import { execute, type PlanRunner, SETTLED } from "../schedule/executor.js";
import type { Plan } from "../schedule/plan.js";
import { type Collective, makeCall, rankCall, specOf } from "../specs/index.js";
import type { Layout, RankCall } from "../specs/types.js";
import { type Probe, type ProbeCall, planFor, probeFor } from "./plans.js";

export type { Buf } from "../core/buffer.js";
export { chooseFor, planFor, planStats } from "./plans.js";

export interface CollectiveOptions {
  /** A registered algorithm's name, 'auto' (default, auto.ts), or a bound Algorithm (withShape). */
  readonly algorithm?: string | Algorithm;
  /** Pipelining unit in elements, for segmented algorithms. */
  readonly segment?: number;
  /** Prefix for step labels in traces and errors. */
  readonly label?: string;
}
export interface ReduceOptions extends CollectiveOptions {
  /** 'sum' (default), 'prod', 'min', 'max', 'avg', 'band', 'bor', 'bxor', 'premulsum(s)' (either case) or a ReduceOp. */
  readonly op?: ReduceOp | string;
}
export interface RootOptions {
  /** Rank of the root in this communicator; default 0. */
  readonly root?: number;
}

// ---- The argument checks, made once here, at the public boundary ----

export const site = (comm: Comm, op: string, arg?: string) => ({ rank: comm.rank, op, arg });

/** A buffer argument as a view, checked: a typed array wraps (no copy), a buffer or view is bounds-checked. */
export function viewArg(comm: Comm, name: string, arg: string, b: unknown): View {
  return checkView(comm.rank, b, name, arg);
}

export function checkMember(comm: Comm, name: string): void {
  if (comm.rank < 0) {
    throw new InvalidArgumentError(
      { op: name, arg: "comm" },
      `this process is not a member of the group (world ranks ${comm.worldRanks.join(", ")})`,
    );
  }
}

export function checkRoot(comm: Comm, name: string, root: unknown): number {
  const r = root ?? 0;
  if (typeof r !== "number" || !Number.isInteger(r) || r < 0 || r >= comm.size) {
    throw new InvalidArgumentError(
      site(comm, name, "options.root"),
      `root must be an integer rank in [0, ${comm.size}), got ${typeof r === "string" ? JSON.stringify(r) : String(r)}`,
    );
  }
  return r;
}

/** `b` as a view of exactly `want` elements, of `dtype` (the dtype of the call's `against` buffer). */
export function sizedArg(
  comm: Comm,
  name: string,
  arg: string,
  b: unknown,
  want: number,
  dtype: DType,
  against = "input",
): View {
  if (b === undefined) throw new InvalidArgumentError(site(comm, name, arg), `is required here (${want} elements)`);
  const v = viewArg(comm, name, arg, b);
  if (v.count !== want)
    throw new InvalidArgumentError(site(comm, name, arg), `must have ${want} elements, has ${v.count}`);
  if (v.buffer.dtype !== dtype) {
    throw new InvalidArgumentError(
      site(comm, name, arg),
      `dtype ${v.buffer.dtype} differs from the ${against}'s ${dtype}`,
    );
  }
  return v;
}

/** options.op as a ReduceOp that fits the dtype ('SUM' and 'sum' alike). */
export function opFor(comm: Comm, name: string, options: { readonly op?: ReduceOp | string }, dtype: DType): ReduceOp {
  const raw = options.op ?? "sum";
  const op = parseOp(typeof raw === "string" ? raw.toLowerCase() : raw, site(comm, name, "options.op"));
  checkOpFitsDType(op, dtype, site(comm, name, "options.op"));
  return op;
}

// ---- Running a call ----

/** A front-API call: what the probe cache keys on (plans.ts's ProbeCall), and the buffers. */
interface Call extends ProbeCall {
  readonly input?: View;
  readonly output?: View;
  readonly options: CollectiveOptions;
}

/**
 * In place iff the views alias exactly as the spec's layout says; any other overlap is an error.
 * The layout's alias is worked out once per probe (a loop in place repeats it).
 */
function inPlaceOf(comm: Comm, call: Call, p: Probe): boolean {
  const { input, output } = call;
  if (!input || !output || !overlaps(input, output)) return false;
  if (p.alias === undefined) {
    const spec = specOf(call.collective);
    p.alias = (spec.inPlace ? spec.layout(p.call).alias : undefined) ?? null;
  }
  const a = p.alias ?? undefined;
  const exact =
    a !== undefined &&
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

/**
 * Per comm: its collectives in flight (the next one waits for the last: issue order, as on
 * NCCL's stream), the last one's end, and the next call's sequence number (what checked mode
 * compares, as torch counts). The probes of its last few call shapes are plans.ts's (probeFor).
 */
interface Queue {
  active: number;
  tail?: Promise<void>;
  seq: number;
  readonly done: () => void;
}
const queues = new WeakMap<Comm, Queue>();

function queueOf(comm: Comm): Queue {
  let q = queues.get(comm);
  if (!q) {
    const made: Queue = {
      active: 0,
      seq: 0,
      done: () => {
        made.active--;
      },
    };
    queues.set(comm, (q = made));
  }
  return q;
}

/**
 * Hands the call to its engine's runner: the comm's own (MPI's) where it has one, else the
 * executor, which runs the plan through the comm's point-to-point calls. May throw (its callers
 * turn that into a rejection).
 */
function runPlan(comm: Comm, plan: Plan, call: Call): Promise<void> {
  if (plan.ops.length === 0) return SETTLED;
  const runner = comm.streamOrdered ? undefined : (comm as { readonly planRunner?: PlanRunner }).planRunner;
  return runner ? runner.runPlan(plan, call, call.options) : execute(comm, plan, call, call.options);
}

function run(comm: Comm, call: Call): Promise<void> {
  const queue = queueOf(comm);
  const probe = probeFor(comm, call);
  const { alg } = probe;
  const plan = inPlaceOf(comm, call, probe)
    ? (probe.inPlacePlan ??= planFor(alg, { ...probe.call, inPlace: true }))
    : (probe.plan ??= planFor(alg, probe.call));
  const seq = queue.seq++;
  const hook = comm.beforeCollective;
  if (queue.active === 0 && !hook) {
    // Nothing in flight on this comm and no hook: run now (the call and its options are the
    // runner's bound buffers and options as they are). A call the plan runner finished before
    // returning is SETTLED, and nothing is left to queue behind.
    const now = runPlan(comm, plan, call);
    if (now === SETTLED) return now;
    queue.active++;
    queue.tail = now.then(queue.done, queue.done);
    return now;
  }
  const go = (): Promise<void> => {
    // Checked mode and fault injection hook in here (src/runtime), before any data moves.
    if (!hook) return runPlan(comm, plan, call);
    try {
      return Promise.resolve(
        hook.call(comm, {
          seq,
          collective: call.collective,
          algorithm: alg.name,
          count: call.count,
          dtype: call.dtype,
          op: call.op ? opLabel(probe.call.op) : "",
          root: call.root ?? -1,
        }),
      ).then(() => runPlan(comm, plan, call));
    } catch (e) {
      return Promise.reject(e);
    }
  };
  const mine = queue.active === 0 || !queue.tail ? go() : queue.tail.then(go, go);
  queue.active++;
  queue.tail = mine.then(queue.done, queue.done);
  return mine;
}

/** The layout of a runCollective call, kept per call object: a loop passes the same one over and over. */
const layouts = new WeakMap<object, { readonly size: number; readonly rank: number; readonly layout: Layout }>();

function layoutFor(comm: Comm, c: Parameters<typeof runCollective>[1]): Layout {
  const last = layouts.get(c);
  if (last && last.size === comm.size && last.rank === comm.rank) return last.layout;
  const layout = specOf(c.collective).layout(
    rankCall(makeCall({ ...c, size: comm.size }), comm.rank, { sendCounts: c.sendCounts, recvCounts: c.recvCounts }),
  );
  layouts.set(c, { size: comm.size, rank: comm.rank, layout });
  return layout;
}

/**
 * Any collective by its spec, with this rank's buffers already laid out as the spec says (in place
 * where they alias): what the property tests, verify, the differential tests and bench call, so
 * each builds its buffers one way. Buffers are checked against the layout like any argument.
 */
export function runCollective(
  comm: Comm,
  c: Omit<RankCall, "rank" | "size" | "inPlace" | "segment" | "dtype" | "splits"> & { readonly dtype?: DType },
  buffers: { readonly input?: View; readonly output?: View },
  options: CollectiveOptions = {},
): Promise<void> {
  // As start(), without a closure a call (bench's timed calls come this way).
  try {
    const spec = specOf(c.collective);
    checkMember(comm, spec.api);
    return run(comm, collectiveCall(comm, spec, c, buffers, options));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** runCollective's call, checked: buffers against the spec's layout, dtype, op and root. */
function collectiveCall(
  comm: Comm,
  spec: ReturnType<typeof specOf>,
  c: Parameters<typeof runCollective>[1],
  buffers: Parameters<typeof runCollective>[2],
  options: CollectiveOptions,
): Call {
  const name = spec.api;
  const l = layoutFor(comm, c);
  const dtype = c.dtype ?? buffers.input?.buffer.dtype ?? buffers.output?.buffer.dtype ?? spec.defaultDtype;
  const input =
    l.inputCount > 0 || buffers.input ? sizedArg(comm, name, "input", buffers.input, l.inputCount, dtype) : undefined;
  const output =
    l.outputCount > 0 || buffers.output
      ? sizedArg(comm, name, "output", buffers.output, l.outputCount, dtype)
      : undefined;
  if (spec.reducing) checkOpFitsDType(c.op, dtype, site(comm, name, "options.op"));
  return {
    collective: spec.name as Collective,
    name,
    input,
    output,
    count: c.count,
    dtype,
    root: spec.rooted ? checkRoot(comm, name, c.root) : undefined,
    op: spec.reducing ? c.op : undefined,
    sendCounts: c.sendCounts,
    recvCounts: c.recvCounts,
    options,
  };
}

/** Validation errors reject the call's promise (they never throw synchronously from an async API). */
function start(comm: Comm, name: string, build: () => Call): Promise<void> {
  try {
    checkMember(comm, name);
    return run(comm, build());
  } catch (e) {
    return Promise.reject(e);
  }
}

/** torch.distributed.all_reduce: in place on `buf`, or into options.output. */
export function allReduce(comm: Comm, buf: Buf, options: ReduceOptions & { output?: Buf } = {}): Promise<void> {
  const name = "allReduce";
  return start(comm, name, () => {
    const input = viewArg(comm, name, "buf", buf);
    const dtype = input.buffer.dtype;
    const output = options.output ? sizedArg(comm, name, "options.output", options.output, input.count, dtype) : input;
    const op = opFor(comm, name, options, dtype);
    return { collective: "allreduce", name, input, output, count: input.count, dtype, op, options };
  });
}

/** torch.distributed.broadcast: `buf` holds the root's data; every rank receives into it (or options.output). */
export function broadcast(
  comm: Comm,
  buf: Buf,
  options: CollectiveOptions & RootOptions & { output?: Buf } = {},
): Promise<void> {
  const name = "broadcast";
  return start(comm, name, () => {
    const root = checkRoot(comm, name, options.root);
    const v = viewArg(comm, name, "buf", buf);
    const output = options.output ? sizedArg(comm, name, "options.output", options.output, v.count, v.buffer.dtype) : v;
    const input = comm.rank === root ? v : undefined;
    return { collective: "broadcast", name, input, output, count: v.count, dtype: v.buffer.dtype, root, options };
  });
}

/** torch.distributed.reduce: the reduction of every rank's `buf` lands in the root's `buf` (or options.output there). */
export function reduce(
  comm: Comm,
  buf: Buf,
  options: ReduceOptions & RootOptions & { output?: Buf } = {},
): Promise<void> {
  const name = "reduce";
  return start(comm, name, () => {
    const root = checkRoot(comm, name, options.root);
    const input = viewArg(comm, name, "buf", buf);
    const dtype = input.buffer.dtype;
    const op = opFor(comm, name, options, dtype);
    const output =
      comm.rank !== root
        ? undefined
        : options.output
          ? sizedArg(comm, name, "options.output", options.output, input.count, dtype)
          : input;
    return { collective: "reduce", name, input, output, count: input.count, dtype, root, op, options };
  });
}

/** torch.distributed.gather: every rank's `input` lands at the root in `output` (count·size elements, rank order). */
export function gather(
  comm: Comm,
  input: Buf,
  options: CollectiveOptions & RootOptions & { output?: Buf } = {},
): Promise<void> {
  const name = "gather";
  return start(comm, name, () => {
    const root = checkRoot(comm, name, options.root);
    const inp = viewArg(comm, name, "input", input);
    const dtype = inp.buffer.dtype;
    const output =
      comm.rank === root
        ? sizedArg(comm, name, "options.output", options.output, inp.count * comm.size, dtype)
        : undefined;
    return { collective: "gather", name, input: inp, output, count: inp.count, dtype, root, options };
  });
}

/** torch.distributed.scatter: the root's `input` (count·size elements) is split across the ranks' `output`. */
export function scatter(
  comm: Comm,
  output: Buf,
  options: CollectiveOptions & RootOptions & { input?: Buf } = {},
): Promise<void> {
  const name = "scatter";
  return start(comm, name, () => {
    const root = checkRoot(comm, name, options.root);
    const out = viewArg(comm, name, "output", output);
    const dtype = out.buffer.dtype;
    const input =
      comm.rank === root
        ? sizedArg(comm, name, "options.input", options.input, out.count * comm.size, dtype, "output")
        : undefined;
    return { collective: "scatter", name, input, output: out, count: out.count, dtype, root, options };
  });
}

/** torch.distributed.all_gather_into_tensor(output, input): output = concat of every rank's input. */
export function allGather(comm: Comm, output: Buf, input: Buf, options: CollectiveOptions = {}): Promise<void> {
  const name = "allGather";
  return start(comm, name, () => {
    const inp = viewArg(comm, name, "input", input);
    const dtype = inp.buffer.dtype;
    const out = sizedArg(comm, name, "output", output, inp.count * comm.size, dtype);
    return { collective: "allgather", name, input: inp, output: out, count: inp.count, dtype, options };
  });
}

/** torch.distributed.reduce_scatter_tensor(output, input): rank r gets chunk r of the reduction of every input. */
export function reduceScatter(comm: Comm, output: Buf, input: Buf, options: ReduceOptions = {}): Promise<void> {
  const name = "reduceScatter";
  return start(comm, name, () => {
    const out = viewArg(comm, name, "output", output);
    const dtype = out.buffer.dtype;
    const inp = sizedArg(comm, name, "input", input, out.count * comm.size, dtype, "output");
    const op = opFor(comm, name, options, dtype);
    return { collective: "reducescatter", name, input: inp, output: out, count: out.count, dtype, op, options };
  });
}

/** torch.distributed.all_to_all_single(output, input): block j of rank i's input lands as block i of rank j's output. */
export function allToAll(comm: Comm, output: Buf, input: Buf, options: CollectiveOptions = {}): Promise<void> {
  const name = "allToAll";
  return start(comm, name, () => {
    const inp = viewArg(comm, name, "input", input);
    const dtype = inp.buffer.dtype;
    if (inp.count % comm.size !== 0) {
      throw new InvalidArgumentError(
        site(comm, name, "input"),
        `has ${inp.count} elements, not a multiple of the group size ${comm.size}`,
      );
    }
    const out = sizedArg(comm, name, "output", output, inp.count, dtype);
    return { collective: "alltoall", name, input: inp, output: out, count: inp.count / comm.size, dtype, options };
  });
}

export interface SplitOptions extends CollectiveOptions {
  /** Elements this rank sends to each peer (torch's input_split_sizes). */
  readonly inputSplits: readonly number[];
  /** Elements this rank receives from each peer (torch's output_split_sizes). */
  readonly outputSplits: readonly number[];
}

/** all_to_all_single with input/output split sizes (all-to-all-v). */
export function allToAllv(comm: Comm, output: Buf, input: Buf, options: SplitOptions): Promise<void> {
  const name = "allToAllv";
  return start(comm, name, () => {
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
    sizedArg(comm, name, "input", inp, total(sendCounts), dtype);
    const out = sizedArg(comm, name, "output", output, total(recvCounts), dtype);
    if (overlaps(inp, out)) {
      throw new InvalidArgumentError(
        site(comm, name, "output"),
        "overlaps the input; all-to-all-v has no in-place form",
      );
    }
    return { collective: "alltoallv", name, input: inp, output: out, count: 0, dtype, sendCounts, recvCounts, options };
  });
}

/** torch.distributed.barrier: returns on each rank only after every rank has entered. */
export function barrier(comm: Comm, options: CollectiveOptions = {}): Promise<void> {
  const name = "barrier";
  return start(comm, name, () => ({
    collective: "barrier",
    name,
    count: 0,
    dtype: specOf("barrier").defaultDtype,
    options,
  }));
}
