/**
 * The static checker: runs every rank's plan symbolically (interpret.ts with symbolic.ts's
 * effect), without data, and proves for one call that
 *   - every send meets a receive of the same size, in posting order per peer and channel, and
 *     nothing deadlocks, in both orders a plan runs in: bulk-synchronous steps (stream-ordered
 *     engines) and dataflow (the sim and MPI executors), under rendezvous sends (a data plan
 *     is walked in steps order, whose completion proves dataflow's: flat.ts);
 *   - no step races (a receive into memory another transfer of its step touches), no local copy
 *     overlaps itself, and the caller's input is never written (out of place, and in place
 *     outside the output);
 *   - the result is the collective's (its spec's `expected`): each output element carries
 *     exactly the contributions the definition demands, each once; a barrier leaves no rank
 *     before it has heard, transitively along what each operation waits for, from every rank;
 *   - the steps and elements sent per rank equal the header's formulas where the algorithm
 *     says they are exact, and stay within them elsewhere.
 * Every failure names the algorithm, the call, the rank, the step and the region.
 */
import { maxOf } from "../core/extent.js";
import { rankCall, specOf } from "../specs/index.js";
import type { CollectiveCall, Layout } from "../specs/types.js";
import { type Algorithm, type Region, regionText, type Step } from "./dsl.js";
import { type FlatPlan, flatPlan, isTransferKind, SEND, walk } from "./flat.js";
import { interpret, type Order } from "./interpret.js";
import { compile, type Plan, type PlanOp, ScheduleError } from "./plan.js";
import { flattenAt, type RunMem, RunMemory, type RunVal } from "./runs.js";
import { type Cell, SymbolicMemory } from "./symbolic.js";

export interface CheckReport {
  readonly algorithm: string;
  readonly call: CollectiveCall;
  readonly errors: string[];
  /** Communication steps (steps with a transfer), the most any rank takes. */
  readonly steps: number;
  /** Elements sent, the most any rank sends. */
  readonly sent: number;
  readonly perRank: readonly { readonly steps: number; readonly sent: number }[];
}

export interface CheckOptions {
  /** Skip the cost-formula comparison (e.g. while drafting an algorithm). */
  readonly skipCost?: boolean;
}

const MAX_ERRORS = 8;

/** Every rank's plan for a call; a structural error (region, peer) is thrown as ScheduleError. */
export function compileAll(alg: Algorithm, call: CollectiveCall): Plan[] {
  return Array.from({ length: call.size }, (_, r) => compile(alg, rankCall(call, r)));
}

/** The largest input of any rank: contribution ids are rank · stride + index. */
export const strideOf = (plans: readonly { readonly layout: Layout }[]): number =>
  maxOf(
    plans.map((p) => p.layout.inputCount),
    1,
  );

export function checkAlgorithm(alg: Algorithm, call: CollectiveCall, options: CheckOptions = {}): CheckReport {
  const n = call.size;
  const name = `${alg.collective}/${alg.name}`;
  const where = `${name} (n=${n}, count=${call.count}${call.root ? `, root=${call.root}` : ""}${call.inPlace ? ", in place" : ""})`;
  const errors: string[] = [];
  // Each check keeps its own first MAX_ERRORS: at a thousand ranks one broken step can cascade
  // into more lint findings than that, which must not hide the pairing error (a send and its receive of different sizes) that is their cause.
  const failIn = (): ((msg: string) => void) => {
    let count = 0;
    return (msg) => {
      if (count++ < MAX_ERRORS) errors.push(`${where}: ${msg}`);
    };
  };
  const fail = failIn();
  const failLint = failIn();
  const failPairing = failIn();
  const report = (rest: Partial<CheckReport> = {}): CheckReport => ({
    algorithm: name,
    call,
    errors,
    steps: 0,
    sent: 0,
    perRank: [],
    ...rest,
  });

  const spec = specOf(call.collective);
  // No data to check (the barrier): what matters is who has heard from whom, along what each
  // operation waits for, which the dataflow order tracks, on the plans as objects (a barrier's
  // plans are short). Data: each rank's plan is compiled, linted and kept as numbers (flat.ts),
  // so that thousands of ranks fit; a message compiles the rank it names again.
  const knowledge = !spec.data;
  const kept: Plan[] = [];
  const flats: FlatPlan[] = [];
  // Steps as the schedule writes them (the header's cost counts those), empty transfers included:
  // the plan drops those, so its operations alone would undercount a call of empty chunks.
  const written: number[] = [];
  const again = new Map<number, Plan>();
  const planOf = (r: number): Plan => {
    // A cache, for messages past the cap still name their step: compiling again gives the same plan.
    // Stryker disable next-line all
    const have = kept[r] ?? again.get(r);
    // Stryker disable next-line all
    if (have) return have;
    const p = compile(alg, rankCall(call, r));
    again.set(r, p);
    return p;
  };
  const stepLabel = (r: number, step: number) => `rank ${r}, step ${step} ('${labelOf(planOf(r).steps[step])}')`;
  const stepName = (r: number, index: number) => stepLabel(r, (planOf(r).ops[index] as PlanOp).step);
  try {
    for (let r = 0; r < n; r++) {
      const p = compile(alg, rankCall(call, r));
      lint(p, (op, m) => failLint(`rank ${r}, step ${op.step} ('${labelOf(p.steps[op.step])}'): ${m}`));
      flats.push(flatPlan(p));
      written.push(p.steps.filter((st) => st.transfers.length > 0).length);
      // Stryker disable next-line ConditionalExpression: memory only (data plans are kept as numbers)
      if (knowledge) kept.push(p);
    }
  } catch (e) {
    if (e instanceof ScheduleError) {
      errors.length = 0;
      errors.push(e.message);
      return report();
    }
    throw e;
  }
  const stride = strideOf(flats);
  checkChannels(flats, failIn());
  // Data plans are walked in the steps order only: a plan that completes in it completes in
  // dataflow order too, its messages paired alike (the argument is in flat.ts's header). The
  // barrier's knowledge moves in the dataflow walk, so it walks both.
  // Stryker disable next-line ConditionalExpression: a data plan walked as dataflow too finds the same, twice the work
  const orders: Order[] = knowledge ? ["steps", "dataflow"] : ["steps"];
  for (const order of orders) {
    // The data is the same in both orders (dataflow only reorders operations that touch
    // different memory, and messages pair in the same order), so cells move in one walk.
    // Stryker disable next-line ConditionalExpression: values in both orders give the same findings, twice the work
    const symbolic = (order === "steps") !== knowledge;
    let stuck: readonly { rank: number; index: number }[];
    if (knowledge) {
      const sym = symbolic
        ? new SymbolicMemory(kept, stride, { fail: (r, op, m) => fail(`${stepLabel(r, op.step)}: ${m}`), knowledge })
        : undefined;
      const out = interpret(kept, sym ? sym.effects(order) : {}, order);
      stuck = out.stuck;
      // Who has heard from whom is tracked in the dataflow walk only (symbolic above).
      if (out.complete && sym) checkHeard(call, sym.knows, (m) => fail(`dataflow: ${m}`));
    } else {
      const sym = symbolic
        ? new RunMemory(
            flats,
            stride,
            (r, i, m) => fail(`${stepName(r, i)}: ${m}`),
            (r, i) => planOf(r).ops[i] as PlanOp,
            (r, i, m) => failPairing(`${stepName(r, i)}: ${m}`),
          )
        : undefined;
      const out = walk(flats, order, sym ? sym.effects() : {});
      stuck = out.stuck;
      // Data moves in the steps walk only (symbolic above).
      if (out.complete && sym) checkRuns(call, flats, sym, stride, fail);
    }
    if (stuck.length > 0) {
      const lines = stuck.slice(0, 6).map(({ rank, index }) => {
        const p = planOf(rank);
        const s = p.steps[(p.ops[index] as PlanOp).step] as Step;
        const ts = s.transfers.map(
          (t) => `${t.kind}(${t.kind === "send" ? "to" : "from"} ${t.peer}, ${regionText(t.region)})`,
        );
        return `${stepName(rank, index)} waits in ${ts.join(", ") || (p.ops[index] as PlanOp).kind}`;
      });
      // Dataflow only relaxes the steps order (an operation waits for its dependencies, not its
      // whole step; messages pair alike), so what deadlocks as dataflow deadlocks in the steps
      // walk, which comes first: the second text is a guard.
      // Stryker disable next-line ConditionalExpression,StringLiteral
      const how = order === "steps" ? "under rendezvous semantics" : "under dataflow execution (rendezvous)";
      fail(`deadlock ${how}: ${lines.join("; ")}${stuck.length > 6 ? "; ..." : ""}`);
      return report();
    }
    if (errors.length > 0) return report();
  }

  const perRank = flats.map((p, r) => ({
    steps: written[r] as number,
    sent: p.count.reduce((sum, c, i) => (p.kind[i] === SEND ? sum + c : sum), 0),
  }));
  const steps = maxOf(
    perRank.map((p) => p.steps),
    0,
  );
  const sent = maxOf(
    perRank.map((p) => p.sent),
    0,
  );
  const trivial = (spec.counted && call.count === 0) || n === 1;
  if (!options.skipCost && !trivial && errors.length === 0) {
    const exact = alg.cost.exact?.(n, call.count, call.segment) ?? true;
    const compare = (what: string, text: string, want: number, got: number) => {
      if (Number.isNaN(want)) fail(`cost: header's ${text} gives no number (NaN) for n=${n}, count=${call.count}`);
      else if (exact ? want !== got : got > want) {
        fail(
          `cost: header says ${text} = ${want} ${what}${exact ? "" : " at most"}, the schedule ${what === "steps" ? "has" : "sends"} ${got}`,
        );
      }
    };
    compare("steps", alg.cost.steps.text, alg.cost.steps.value(n, call.count, call.segment), steps);
    // alltoallv's bytes depend on the split matrix: its formula may say NaN ("varies").
    const want = alg.cost.sent.value(n, call.count, call.segment);
    if (!(Number.isNaN(want) && !spec.counted)) {
      compare("elements sent per rank (max)", alg.cost.sent.text, want, sent);
    }
  }
  return report({ steps, sent, perRank });
}

/**
 * Between two ranks, the channels of the sends must come in the order of the channels of the
 * receives, so that an engine which keeps channels apart (the executor's scheduling allows one
 * per channel) and one that does not (a single NCCL stream, MPI: every backend today) pair the
 * same messages.
 */
function checkChannels(plans: readonly FlatPlan[], fail: (m: string) => void): void {
  // Only pairs that send on a channel other than 0 can differ (with all on 0 the orders agree):
  // a shortcut, the comparison below finds nothing either.
  // Stryker disable next-line all
  if (!plans.some((p) => p.queueChannel.some((c) => c !== 0))) return;
  const n = plans.length;
  // Per (sender, receiver): the sender's channels in posting order, and the receiver's.
  const orders = new Map<number, [number[], number[]]>();
  plans.forEach((p, r) => {
    p.kind.forEach((k, i) => {
      if (!isTransferKind(k)) return;
      const key = k === SEND ? r * n + (p.peer[i] as number) : (p.peer[i] as number) * n + r;
      let o = orders.get(key);
      if (o === undefined) {
        o = [[], []];
        orders.set(key, o);
      }
      o[k === SEND ? 0 : 1].push(p.queueChannel[p.queueOf[i] as number] as number);
    });
  });
  for (const [key, [sends, recvs]] of orders) {
    const i = sends.findIndex((c, j) => recvs[j] !== c);
    if (i < 0) continue;
    const src = Math.floor(key / n);
    const dst = key % n;
    fail(
      `rank ${src}'s message ${i} to rank ${dst} is on channel ${sends[i]}, but rank ${dst}'s receive ${i} from rank ${src} is on channel ${recvs[i] ?? "(none)"}: an engine that keeps one order per pair would pair them wrongly`,
    );
    return;
  }
}

/** What a plan gets wrong on its own: labels, copies onto themselves, races in a step, writes to the caller's input. */
function lint(plan: Plan, fail: (op: PlanOp, m: string) => void): void {
  // Where op i's k-th region (0 region, 1 src) lives, from the plan's places (through the aliasing).
  const { places, ops } = plan;
  const mem = (i: number, k: number) => places[6 * i + 2 * k] as number;
  const from = (i: number, k: number) => places[6 * i + 2 * k + 1] as number;
  const overlap = (i: number, k: number, a: Region, j: number, l: number, b: Region) => {
    const x = from(i, k);
    const y = from(j, l);
    // Plans hold no operation on zero elements (compile drops them), so both regions are non-empty.
    return mem(i, k) === mem(j, l) && x < y + b.count && y < x + a.count;
  };
  // Each step looked at once, at its first operation: its label and its transfers' races.
  const looked = new Uint8Array(plan.steps.length);
  ops.forEach((op, i) => {
    if (looked[op.step] === 0) {
      looked[op.step] = 1;
      // Labels are what traces, timeouts and deadlock messages show: every step needs one (a
      // schedule in plain JavaScript may leave it out altogether).
      if (labelOf(plan.steps[op.step]).trim() === "") fail(op, "the step has no label");
      // A receive must not share memory with any other transfer of its step (undefined on real
      // engines). A step's transfers come first in the plan, then its local operations.
      let end = i;
      while (end < ops.length && (ops[end] as PlanOp).step === op.step && isTransfer(ops[end] as PlanOp)) end++;
      // Most steps hold a few transfers (a ring's one send and one receive, PAT's messages):
      // those are compared pair by pair first, and swept only where two race (the sweep's sort
      // and lists cost a second a call at 1,024 ranks).
      // A step the shortcut sends to the sweep without need is swept, and the sweep finds nothing:
      // mutants that only do that are marked (those that miss a race fail the race tests).
      let racing = false;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: a shortcut; the sweep finds the same
      if (end - i <= 16) {
        // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: stops early, only faster
        for (let a = i; a < end && !racing; a++) {
          const x = ops[a] as PlanOp;
          // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral,ArithmeticOperator: stops early, only faster
          for (let b = a + 1; b < end && !racing; b++) {
            const y = ops[b] as PlanOp;
            racing = (x.kind === "recv" || y.kind === "recv") && overlap(a, 0, x.region, b, 0, y.region);
          }
        }
      } else racing = true;
      const pairs = racing ? races(plan, i, end) : [];
      for (const [a, b] of pairs as [number, number][]) {
        const x = ops[a] as PlanOp;
        const y = ops[b] as PlanOp;
        fail(
          y,
          `race: ${x.kind} ${regionText(x.region)} and ${y.kind} ${regionText(y.region)} in one step share memory`,
        );
      }
    }
    if (op.kind === "copy" && op.src) {
      if (mem(i, 0) === mem(i, 1) && from(i, 0) === from(i, 1)) {
        // Harmless on the host, but a wasted kernel or memcpy on a GPU: usually an in-place case missed.
        fail(op, `copy ${regionText(op.region)} <- ${regionText(op.src)} copies memory onto itself`);
      } else if (overlap(i, 0, op.region, i, 1, op.src)) {
        fail(op, `copy ${regionText(op.region)} <- ${regionText(op.src)} overlaps itself`);
      }
    }
    if (op.kind !== "send" && mem(i, 0) === 0) {
      // The caller's input is memory 0 (in place it is shared with the output only as protectedInput allows).
      const x = from(i, 0);
      for (const [lo, hi] of plan.protectedInput) {
        if (x < hi && lo < x + op.region.count) {
          fail(op, `writes ${regionText(op.region)}, which is the caller's input (it must stay unchanged)`);
          break;
        }
      }
    }
  });
}

const isTransfer = (op: PlanOp): boolean => op.kind === "send" || op.kind === "recv";

/** A step's label ('' where a schedule in plain JavaScript left it out). */
const labelOf = (s: Step | undefined): string => (s?.label as string | undefined) ?? "";

/**
 * Among a step's transfers ops[first .. end): pairs that share memory, one of the two a receive,
 * as [earlier, later] by position, ordered by the later. One sweep over the regions sorted by
 * memory and start (a step of an all-to-all holds thousands of transfers): a receive that starts
 * before the furthest end of any region before it overlaps that region, a send that starts before
 * the furthest end of a receive before it overlaps that receive. Every transfer in a race is
 * found with one partner, so every racing step is reported.
 */
function races(plan: Plan, first: number, end: number): [number, number][] {
  const { places, ops } = plan;
  const mem = (i: number) => places[6 * i] as number;
  const from = (i: number) => places[6 * i + 1] as number;
  const order = Array.from({ length: end - first }, (_, k) => first + k);
  order.sort((a, b) => mem(a) - mem(b) || from(a) - from(b) || a - b);
  const found: [number, number][] = [];
  let m = -2;
  let endAll = 0;
  let endRecv = 0;
  let all = -1;
  let recv = -1;
  for (const c of order) {
    if (mem(c) !== m) {
      m = mem(c);
      all = recv = -1;
    }
    const s = from(c);
    const e = s + (ops[c] as PlanOp).region.count;
    const isRecv = (ops[c] as PlanOp).kind === "recv";
    const h = isRecv ? (all >= 0 && s < endAll ? all : -1) : recv >= 0 && s < endRecv ? recv : -1;
    if (h >= 0) found.push(h < c ? [h, c] : [c, h]);
    if (all < 0 || e > endAll) {
      all = c;
      endAll = e;
    }
    if (isRecv && (recv < 0 || e > endRecv)) {
      recv = c;
      endRecv = e;
    }
  }
  return found.sort((x, y) => x[1] - y[1] || x[0] - y[0]);
}

/** A barrier's result: no rank leaves before it has heard, transitively, from every rank. */
function checkHeard(call: CollectiveCall, knows: readonly Uint8Array[], fail: (m: string) => void): void {
  knows.forEach((k, r) => {
    const missing = [...k].map((x, i) => (x ? -1 : i)).filter((i) => i >= 0);
    if (missing.length > 0)
      fail(`rank ${r}: leaves the ${call.collective} without having heard from rank(s) ${missing.join(", ")}`);
  });
}

/**
 * The data's result: each output element holds exactly the contributions the spec requires, each
 * once. Over runs (runs.ts): each output run is compared with the spec once, at its first element.
 */
function checkRuns(
  call: CollectiveCall,
  plans: readonly FlatPlan[],
  sym: RunMemory,
  stride: number,
  fail: (m: string) => void,
): void {
  const n = call.size;
  const spec = specOf(call.collective);
  for (let rank = 0; rank < n; rank++) {
    const plan = plans[rank] as FlatPlan;
    const { mem, from } = sym.where(rank, { buf: "output", offset: 0, count: plan.layout.outputCount });
    for (const blk of spec.result(plan.call, call)) {
      for (let k = 0; k < blk.count; ) {
        const j = blk.at + k;
        const { val, off, len } = runAt(mem, from + j, blk.count - k);
        // Element j + t holds val at off + t, and the spec asks for index + t: one comparison holds
        // for the run. A join's id is -1, so id >= 0 keeps a join seen at offset 1 from passing for
        // contribution 0. A reduction must hold every rank once at the index asked for: the ranks
        // are one interval [0, n) (a join that holds one twice or mixes indices has no ranks).
        const ok =
          val !== null &&
          ("rank" in blk
            ? val.id >= 0 && val.id + off === blk.rank * stride + blk.index + k
            : val.idx + off === blk.reduce + k && val.ranks[0] === 0 && val.ranks[1] === n);
        if (ok) {
          k += len;
          continue;
        }
        const index = "reduce" in blk ? blk.reduce + k : blk.index + k;
        const ids =
          "reduce" in blk
            ? Array.from({ length: n }, (_, r) => r * stride + blk.reduce + k)
            : [blk.rank * stride + blk.index + k];
        if (val === null) {
          fail(`rank ${rank}: output[${j}] was never written; it should hold ${cellText(ids, stride, index)}`);
          return;
        }
        const got = [...(flattenAt(val, off, stride) ?? [])].sort((x, y) => x - y);
        fail(
          `rank ${rank}: output[${j}] holds ${cellText(got, stride, index)} but ${call.collective} needs ${cellText(ids, stride, index)}${diff(got, ids, stride)}`,
        );
        return;
      }
    }
  }
}

/** The run holding element `at` of `mem`: its value, the offset at `at`, and how far it goes (at most `most`). */
function runAt(mem: RunMem, at: number, most: number): { val: RunVal | null; off: number; len: number } {
  if (at >= mem.length) return { val: null, off: 0, len: most };
  const i = mem.find(at);
  const st = mem.start[i] as number;
  return {
    val: mem.val[i] as RunVal | null,
    off: (mem.off[i] as number) + at - st,
    len: Math.min(mem.end(i) - at, most),
  };
}

/**
 * [0+1+2]-style text of a cell: the contributing ranks, with the element index where it is not
 * `index`; a run of more than RUN ranks in a row at one index is written lo..hi ([0..1023]).
 */
export function cellText(cell: Cell, stride: number, index?: number): string {
  if (cell === null) return ".";
  const sorted = [...cell].sort((a, b) => a - b);
  const name = (id: number) => {
    const r = Math.floor(id / stride);
    const i = id % stride;
    return index === undefined || i === index ? `${r}` : `${r}:${i}`;
  };
  const parts: string[] = [];
  for (let a = 0; a < sorted.length; ) {
    // A run: ids one stride apart (consecutive ranks, one element index).
    let b = a;
    while (b + 1 < sorted.length && (sorted[b + 1] as number) === (sorted[b] as number) + stride) b++;
    if (b - a + 1 > RUN) {
      parts.push(`${name(sorted[a] as number)}..${name(sorted[b] as number)}`);
      a = b + 1;
    } else parts.push(name(sorted[a++] as number));
  }
  return `[${parts.join("+")}]`;
}

/** Runs of ranks longer than this are shortened in messages. */
const RUN = 8;
/** Notes of a difference past this many are counted, not listed. */
const NOTES = 6;

function diff(got: number[], want: number[], stride: number): string {
  const count = (xs: number[]) => {
    const m = new Map<number, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const g = count(got);
  const w = count(want);
  const notes: string[] = [];
  const name = (id: number) => `rank ${Math.floor(id / stride)}'s element ${id % stride}`;
  for (const [id, k] of g) {
    const e = w.get(id) ?? 0;
    if (k > e) notes.push(e === 0 ? `${name(id)} does not belong` : `${name(id)} counted ${k} times`);
  }
  for (const [id] of w) if (!g.has(id)) notes.push(`${name(id)} is missing`);
  const more = notes.length > NOTES ? `; and ${notes.length - NOTES} more` : "";
  return notes.length ? ` (${notes.slice(0, NOTES).join("; ")}${more})` : "";
}
