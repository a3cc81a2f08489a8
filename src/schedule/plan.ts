/**
 * Compiling one rank's part of a call into a plan: the algorithm's steps, with the prologue every
 * algorithm of a collective shares added here once, every region and peer validated, and each
 * operation's dependencies worked out from the memory it reads and writes. The executor, the
 * checker, explain and the model all run plans, so they see the same operations.
 *
 * The shared prologue (algorithms never write it):
 *   - a counted collective with count 0: nothing to do;
 *   - one rank: out of place, the input is copied to where the spec's layout puts the output;
 *   - algorithms marked `form: "in-place"`, out of place: the input is first copied where the
 *     in-place layout puts it, and the schedule runs in place;
 *   - premulsum, and avg on floating-point types, scale a copy of the input first (NCCL's
 *     pre-multiplied sum); avg on integers divides the result at the end (docs/semantics.md).
 *
 * Operations on no elements (the empty chunks of a call with fewer elements than ranks) are
 * validated and then dropped: they move and compute nothing, and a 32 B ring on 4,096 ranks would
 * otherwise be 2(n-1) steps of empty messages on every rank. Plan.steps keeps every step as the
 * algorithm wrote it (a step's cost is counted from there), so a step may have no operations.
 *
 * Dependencies: an operation waits for every earlier operation of its rank whose memory it
 * overlaps where either writes (read-after-write, write-after-read, write-after-write), with
 * memory resolved through the in-place aliasing. Transfers of one step are posted together and
 * must not depend on each other (a receive sharing memory with another transfer of its step is a
 * race). Sends and receives to one peer on one channel keep program order (the executors post
 * them in order), so messages match in the order the steps name them.
 */
import type { CallTag } from "../comm.js";
import { invariant } from "../core/assert.js";
import { grow } from "../core/growable.js";
import { sumScaling } from "../core/op.js";
import { specOf } from "../specs/index.js";
import type { Layout, RankCall } from "../specs/types.js";
import { Deps, Intervals } from "./deps.js";
import {
  type Algorithm,
  type BufferName,
  copy,
  type Memory,
  outsideDomain,
  type Region,
  region,
  regionText,
  type Step,
  step,
} from "./dsl.js";
import { callSeenBy } from "./shape.js";

export class ScheduleError extends Error {
  override name = "ScheduleError";
}

export type OpKind = "send" | "recv" | "copy" | "reduce" | "scale";

/** One operation of a plan, its regions in buffer names (input, output, scratch). */
export interface PlanOp {
  readonly kind: OpKind;
  /** Index of the step (group) it belongs to, in Plan.steps. */
  readonly step: number;
  /** send/recv: the peer, the channel and the region moved. */
  readonly peer: number;
  readonly channel: number;
  /** Region written (recv, copy, reduce, scale), or read (send). */
  readonly region: Region;
  /** copy/reduce/scale source; reduce's first operand is `with` (default the destination). */
  readonly src?: Region;
  readonly with?: Region;
  /** scale: dst <- src · mul / div. */
  readonly mul?: number;
  readonly div?: number;
  /** Indices of the earlier operations of this rank it waits for. */
  readonly deps: readonly number[];
}

export interface Plan {
  readonly alg: Algorithm;
  readonly call: RankCall;
  readonly layout: Layout;
  /** Every step, the prologue's included, in program order. */
  readonly steps: readonly Step[];
  /** Steps of the prologue and epilogue (not the algorithm's own). */
  readonly shared: ReadonlySet<number>;
  readonly ops: readonly PlanOp[];
  /** Scratch elements the plan needs. */
  readonly scratch: number;
  /** The call the algorithm's schedule was generated for (in place after the in-place prologue). */
  readonly scheduled: RankCall;
  /** Where the caller's input must stay unchanged: input elements [from, to). */
  readonly protectedInput: readonly (readonly [number, number])[];
  /**
   * Where each operation's regions live, through the aliasing: for op i, at 6i..6i+5, the memory
   * (0 input, 1 output, 2 scratch) and first element of its region, its src and its with (-1, 0
   * where it has none).
   */
  readonly places: Int32Array;
}

const LIMIT_STEPS = 1_000_000;
const NO_DEPS: readonly number[] = Object.freeze([]);

/** The scaling the op needs around a sum, per docs/semantics.md: before (each input), after (the result). */
export function opScaling(c: RankCall): { pre?: { mul: number; div: number }; post?: { mul: number; div: number } } {
  if (!specOf(c.collective).reducing) return {};
  const { premul, postdiv } = sumScaling(c.op, c.dtype, c.size);
  return {
    ...(premul !== undefined ? { pre: { mul: premul, div: 1 } } : {}),
    ...(postdiv !== undefined ? { post: { mul: 1, div: postdiv } } : {}),
  };
}

/** A scratch allocator: regions handed out one after another from `base`. */
function allocator(base: number): Memory["scratch"] & { readonly used: () => number } {
  let next = base;
  const alloc = (count: number): Region => {
    invariant(Number.isInteger(count) && count >= 0, () => `scratch(${count}): need a non-negative integer`);
    const r = region("scratch", next, count);
    next += count;
    return r;
  };
  return Object.assign(alloc, { used: () => next });
}

/** Where a symbolic region lives: memory 0 (input), 1 (output), 2 (scratch), through the aliasing in place. */
export interface Place {
  readonly mem: number;
  readonly from: number;
  readonly to: number;
}

export function placer(layout: Layout, inPlace: boolean): (r: Region) => Place {
  const a = inPlace ? layout.alias : undefined;
  return (r) => {
    let mem = r.buf === "input" ? 0 : r.buf === "output" ? 1 : 2;
    let off = r.offset;
    if (a && r.buf !== "scratch") {
      if (a.kind === "same") mem = 1;
      else if (a.kind === "input-in-output" && r.buf === "input") [mem, off] = [1, off + a.offset];
      else if (a.kind === "output-in-input" && r.buf === "output") [mem, off] = [0, off + a.offset];
    }
    return { mem, from: off, to: off + r.count };
  };
}

/**
 * Compiles rank c.rank's part of `alg` for call c. Structural errors (a region outside its
 * buffer, a peer that is no rank, counts that differ, an endless schedule) throw ScheduleError
 * naming the algorithm, rank, step and region.
 */
export function compile(alg: Algorithm, given: RankCall): Plan {
  const frame = {} as PlanFrame;
  const steps = [...planSteps(alg, given, frame)];
  return finish(alg, frame.call, frame.scheduled, frame.layout, steps, frame.shared, frame.scratch);
}

/** What planSteps settles besides the steps, once they are all out. */
export interface PlanFrame {
  /** The call as planned (inPlace only where the spec and the algorithm have an in-place form). */
  call: RankCall;
  /** The call the algorithm's schedule was generated for. */
  scheduled: RankCall;
  layout: Layout;
  /** Indices of the prologue's and epilogue's steps. */
  shared: Set<number>;
  /** Scratch elements used. */
  scratch: number;
}

/**
 * Every step of rank c.rank's plan in program order, the prologue every algorithm shares (one
 * rank, count 0, scaling, the in-place form's copy) and the epilogue included, as compile takes
 * them; `frame` is filled in as they come. The checker's rotation proof (rotation.ts) walks these
 * for every rank without compiling them.
 */
export function* planSteps(alg: Algorithm, given: RankCall, frame: PlanFrame): Generator<Step> {
  const c = callSeenBy(alg, given);
  const spec = specOf(c.collective);
  const layout = spec.layout(c);
  const inPlace = c.inPlace && spec.inPlace && alg.inPlace !== false;
  const call: RankCall = { ...c, inPlace };
  const shared = new Set<number>();
  let index = 0;
  Object.assign(frame, { call, scheduled: call, layout, shared, scratch: 0 });
  const sharedStep = (s: Step): Step => {
    shared.add(index++);
    return s;
  };
  let input = region("input", 0, layout.inputCount);
  let output = region("output", 0, layout.outputCount);
  const alias = layout.alias;

  const trivial = (spec.counted && c.count === 0) || c.size === 1;
  if (trivial) {
    // One rank holds the whole result already: out of place, copy the input to where the output takes it.
    if (c.size === 1 && !inPlace && layout.outputCount > 0) {
      const src = alias?.kind === "output-in-input" ? region("input", alias.offset, layout.outputCount) : input;
      const dst = alias?.kind === "input-in-output" ? region("output", alias.offset, layout.inputCount) : output;
      if (src.count > 0) yield sharedStep(step("copy input", [], [copy(dst, src)]));
    }
    const scale = opScaling(call);
    const s = scale.pre ?? scale.post;
    // premulsum scales the single contribution; avg at n = 1 divides by 1 (nothing to do).
    if (c.size === 1 && layout.outputCount > 0 && s && (s.mul !== 1 || s.div !== 1)) {
      yield sharedStep(scaleStep(output, output, s.mul, s.div));
    }
    return;
  }

  const outside = outsideDomain(alg, c);
  if (outside) throw new ScheduleError(`${alg.collective}/${alg.name}, rank ${c.rank}: ${outside}`);
  let scheduled = call;
  let scratchBase = 0;
  const scale = opScaling(call);
  const toOutput = alias && alias.kind !== "output-in-input" && (inPlace || alg.form === "in-place");
  if (scale.pre && layout.inputCount > 0 && !toOutput) {
    // Scale a copy: the caller's input stays untouched and the schedule reads the copy, out of
    // place. (In place, or for an in-place-form schedule, it is scaled where the schedule reads it.)
    const scaled = region("scratch", 0, layout.inputCount);
    yield sharedStep(scaleStep(scaled, input, scale.pre.mul, scale.pre.div));
    scratchBase = layout.inputCount;
    input = scaled;
    scheduled = { ...call, inPlace: false };
  } else if (alias && (inPlace || toOutput)) {
    // In place the schedule sees the input as the part of the output it is (or the output as
    // the part of the input); an in-place-form schedule out of place first gets the input there.
    if (alias.kind === "output-in-input") output = region("input", alias.offset, layout.outputCount);
    else {
      const at = region("output", alias.kind === "same" ? 0 : alias.offset, layout.inputCount);
      // An in-place schedule of a scaled op gets its input scaled into place (in place: scaled where it is).
      if (scale.pre && at.count > 0)
        yield sharedStep(scaleStep(at, inPlace ? at : input, scale.pre.mul, scale.pre.div));
      else if (!inPlace && at.count > 0) yield sharedStep(step("copy input", [], [copy(at, input)]));
      input = at;
      scheduled = { ...call, inPlace: true };
    }
  }
  frame.scheduled = scheduled;

  const alloc = allocator(scratchBase);
  const where = `${alg.collective}/${alg.name}, rank ${c.rank}`;
  let n = 0;
  for (const s of alg.schedule(scheduled, { input, output, scratch: alloc })) {
    index++;
    yield s;
    if (++n > LIMIT_STEPS) throw new ScheduleError(`${where}: more than a million steps; endless schedule?`);
  }
  frame.scratch = alloc.used();
  if (scale.post && layout.outputCount > 0) yield sharedStep(scaleStep(output, output, scale.post.mul, scale.post.div));
}

function scaleStep(dst: Region, src: Region, mul: number, div: number): Step {
  const what = mul === 1 ? `divide by ${div}` : `multiply by ${mul}${div !== 1 ? `/${div}` : ""}`;
  return step(`scale: ${what}`, [], [{ kind: "scale", dst, src, mul, div }]);
}

function finish(
  alg: Algorithm,
  call: RankCall,
  scheduled: RankCall,
  layout: Layout,
  steps: Step[],
  shared: Set<number>,
  scratch: number,
): Plan {
  const sizes: Record<BufferName, number> = { input: layout.inputCount, output: layout.outputCount, scratch };
  const where = (i: number) => `${alg.collective}/${alg.name}, rank ${call.rank}, step ${i} ('${steps[i]?.label}')`;
  const check = (r: Region, i: number, what: string) => {
    const ok =
      (r.buf === "input" || r.buf === "output" || r.buf === "scratch") &&
      Number.isInteger(r.offset) &&
      Number.isInteger(r.count) &&
      r.offset >= 0 &&
      r.count >= 0 &&
      r.offset + r.count <= sizes[r.buf];
    if (!ok) {
      throw new ScheduleError(
        `${where(i)}: ${what} region ${regionText(r)} is outside ${r.buf} (${sizes[r.buf] ?? "?"} elements)`,
      );
    }
  };
  const place = placer(layout, call.inPlace);
  // First every operation is validated and placed (and its memory's boundaries noted), then its
  // dependencies are worked out in program order over intervals cut at all of those boundaries.
  // Each operation's dependencies are filled in by the second pass.
  const ops: { -readonly [K in keyof PlanOp]: PlanOp[K] }[] = [];
  const bounds: number[][] = [[], [], []];
  // places[6i..6i+5]: memory and first element of op i's region, src and with (grown as ops come).
  // Doubles while compiling (the second pass reads offsets back, and the model compiles buffers
  // of 2^31 elements and more); the plan keeps them as Plan.places says.
  let places = new Float64Array(256);
  /** Records where op `index`'s k-th region lives. */
  const at = (index: number, k: number, r: Region): void => {
    const p = place(r);
    if (6 * index + 6 > places.length) places = grow(places, 2 * places.length + 6);
    places[6 * index + 2 * k] = p.mem;
    places[6 * index + 2 * k + 1] = p.from;
    (bounds[p.mem] as number[]).push(p.from, p.to);
  };
  // Always after at() for the same operation, which made the room.
  const none = (index: number, k: number) => {
    places[6 * index + 2 * k] = -1;
    places[6 * index + 2 * k + 1] = 0;
  };

  steps.forEach((s, i) => {
    for (const t of s.transfers) {
      if (!Number.isInteger(t.peer) || t.peer < 0 || t.peer >= call.size) {
        throw new ScheduleError(`${where(i)}: ${t.kind} peer ${t.peer} is not a rank of ${call.size}`);
      }
      // Channels are kept as 32-bit integers (flat plans): past 2^31 - 1 one would wrap onto another.
      if (t.channel !== undefined && (!Number.isInteger(t.channel) || t.channel < 0 || t.channel > 0x7fffffff)) {
        throw new ScheduleError(`${where(i)}: ${t.kind} channel ${t.channel} is not an integer from 0 to 2147483647`);
      }
      check(t.region, i, t.kind);
      // An empty transfer moves nothing: its pair at the peer is empty too (counts match), so both
      // ends drop it and the peers' other messages still pair in order.
      if (t.region.count === 0) continue;
      const index = ops.length;
      at(index, 0, t.region);
      none(index, 1);
      none(index, 2);
      ops.push({ kind: t.kind, step: i, peer: t.peer, channel: t.channel ?? 0, region: t.region, deps: NO_DEPS });
    }
    for (const l of s.local) {
      check(l.dst, i, `${l.kind} destination`);
      check(l.src, i, `${l.kind} source`);
      const operand = l.kind === "reduce" ? (l.with ?? l.dst) : undefined;
      if (l.kind === "reduce" && l.with) check(l.with, i, "reduce operand");
      if (l.src.count !== l.dst.count || (operand && operand.count !== l.dst.count)) {
        throw new ScheduleError(
          `${where(i)}: ${l.kind} into ${regionText(l.dst)} from ${regionText(l.src)} has different counts`,
        );
      }
      if (l.dst.count === 0) continue;
      const index = ops.length;
      at(index, 0, l.dst);
      at(index, 1, l.src);
      if (l.kind === "reduce" && l.with) at(index, 2, l.with);
      else none(index, 2);
      // Fields added to the one object: spreading them in made two more objects per operation.
      const op: (typeof ops)[number] = {
        kind: l.kind,
        step: i,
        peer: -1,
        channel: 0,
        region: l.dst,
        src: l.src,
        deps: NO_DEPS,
      };
      if (l.kind === "reduce" && l.with) op.with = l.with;
      if (l.kind === "scale") {
        op.mul = l.mul;
        op.div = l.div;
      }
      ops.push(op);
    }
  });

  const mems = bounds.map((b) => new Intervals(b));
  const deps = new Deps();
  /** Op j's k-th region: memory, first and end element (its region's count; -1 memory when it has none). */
  const mem = (j: number, k: number) => places[6 * j + 2 * k] as number;
  const from = (j: number, k: number) => places[6 * j + 2 * k + 1] as number;
  for (let j = 0; j < ops.length; ) {
    const op = ops[j] as (typeof ops)[number];
    const count = op.region.count;
    if (op.kind === "send" || op.kind === "recv") {
      // The step's transfers are posted together: their dependencies come from before the step,
      // so all are worked out before any is recorded.
      let end = j;
      for (; end < ops.length; end++) {
        const t = ops[end] as (typeof ops)[number];
        if (t.step !== op.step || !(t.kind === "send" || t.kind === "recv")) break;
        deps.reset();
        mems[mem(end, 0)]!.depsOf(from(end, 0), from(end, 0) + t.region.count, t.kind === "recv", deps);
        t.deps = deps.list;
      }
      for (let k = j; k < end; k++) {
        const t = ops[k] as (typeof ops)[number];
        mems[mem(k, 0)]!.record(from(k, 0), from(k, 0) + t.region.count, k, t.kind === "recv");
      }
      j = end;
      continue;
    }
    // reduce's first operand: `with` (place 2), or the destination itself.
    const withAt = mem(j, 2) >= 0 ? 2 : op.kind === "reduce" ? 0 : -1;
    deps.reset();
    mems[mem(j, 1)]!.depsOf(from(j, 1), from(j, 1) + count, false, deps);
    if (withAt >= 0) mems[mem(j, withAt)]!.depsOf(from(j, withAt), from(j, withAt) + count, false, deps);
    mems[mem(j, 0)]!.depsOf(from(j, 0), from(j, 0) + count, true, deps);
    op.deps = deps.list;
    mems[mem(j, 1)]!.record(from(j, 1), from(j, 1) + count, j, false);
    if (withAt >= 0) mems[mem(j, withAt)]!.record(from(j, withAt), from(j, withAt) + count, j, false);
    mems[mem(j, 0)]!.record(from(j, 0), from(j, 0) + count, j, true);
    j++;
  }

  // Out of place the whole input is the caller's; in place, what the output does not cover.
  const a = call.inPlace ? layout.alias : undefined;
  const protectedInput: [number, number][] = !a
    ? [[0, layout.inputCount]]
    : a.kind === "output-in-input"
      ? [
          [0, a.offset],
          [a.offset + layout.outputCount, layout.inputCount],
        ]
      : [];
  return {
    alg,
    call,
    layout,
    steps,
    shared,
    ops,
    scratch,
    scheduled,
    protectedInput,
    places: Int32Array.from(places.subarray(0, 6 * ops.length)),
  };
}

/**
 * What every transfer of a plan's call carries, so that a peer in another call fails instead of
 * mixing data (backends compare it between a matched send and receive): one object per plan,
 * made once, which every engine's runner uses.
 */
export function callTag(plan: Plan): CallTag {
  let t = tags.get(plan);
  if (!t) {
    t = { collective: `${plan.alg.collective}/${plan.alg.name}`, op: plan.call.op.name, root: plan.call.root };
    tags.set(plan, t);
  }
  return t;
}
const tags = new WeakMap<Plan, CallTag>();
