/**
 * The static proof past 1,024 ranks, by a rotation symmetry the proof checks, never assumes.
 *
 * check.ts walks every rank's plan: about n² operations for a ring, 1.3 billion at 16,384 ranks.
 * Many calls are the same on every rank up to a turn: rank r's steps are rank 0's with every peer
 * p made p + r and every region of the input and output moved on by r chunks (mod n). Then the
 * whole machine is rank 0's alone, turned, and the proof needs rank 0's plan plus one pass over
 * every rank's steps to check the turn:
 *
 *   1. The turn. The collective's spec gives it (`rotation`: how far rank r's input and output
 *      turn, and rank q's contribution to input element e becomes rank q+r's to element e + the
 *      input's turn); the call must have one (all-reduce: count a multiple of n). Every rank's
 *      steps, the prologue's included (plan.ts's planSteps), are generated and compared with rank
 *      0's turned: the same transfers and local operations in the same order, peers plus r,
 *      regions moved on and not wrapping round their buffer (scratch does not turn), the same
 *      channels, layout, scratch and prologue; and every step has a label (one of spaces alone
 *      is rank 0's lint's to find: looking inside every rank's labels cost a tenth of the time).
 *      A rank that differs is named, with its step.
 *   2. Then by induction over the steps, every rank's memory before step s is rank 0's turned,
 *      contributions relabelled. Rank 0 alone is walked: its k-th receive from p on a channel
 *      pairs with rank p's k-th send to 0 there, which is rank 0's k-th send to n - p, turned
 *      by p; what it carries is rank 0's data in that send's region, relabelled by p.
 *   3. Deadlock. All ranks take step s together in the steps order when every message pairs
 *      with one of the same step; the first step where one does not leaves every rank waiting
 *      in it (each rank's step holds that message, turned, waiting on a later step). So the
 *      walk completes iff every pairing is within its step, and the one-walk argument
 *      (flat.ts) carries completion over to the dataflow order.
 *   4. Races, copies onto themselves, writes to the caller's input and labels are rank 0's lint:
 *      a turn moves every region of a memory alike, so overlaps are the same on every rank (the
 *      caller's protected input is all of it or none, which turns onto itself). The result is
 *      rank 0's output against the spec, and the spec's result for rank r is checked to be rank
 *      0's turned, block for block. Cost: every rank sends and steps as rank 0.
 *
 * Limit: a value holding a contribution twice may not be sent (it is rejected where it is;
 * the full proof up to 1,024 ranks allows one that never reaches the output).
 */
import { rankCall, specOf } from "../specs/index.js";
import type { Block, CollectiveCall, CollectiveSpec } from "../specs/types.js";
import { type Algorithm, regionText } from "./dsl.js";
import { flatPlan } from "./flat.js";
import { labelOf, lint } from "./lint.js";
import { compile, type Plan, type PlanOp, ScheduleError } from "./plan.js";
import { type CheckOptions, type CheckReport, cellText, checkCost, checkRuns, reportOf } from "./results.js";
import { flattenAt, Pieces, type RunMem, RunMemory, type RunVal } from "./runs.js";
import { checkTurns, scaledCopy, type Turn } from "./turns.js";

const MAX_ERRORS = 8;

export interface RotationOptions extends CheckOptions {
  /** False: leave the turns (step 1) to the caller, who checks them in parts (turnsIn). */
  readonly turns?: boolean;
}

const whereOf = (alg: Algorithm, call: CollectiveCall): string =>
  `${alg.collective}/${alg.name} (n=${call.size}, count=${call.count}${call.inPlace ? ", in place" : ""})`;

/** Rank 0's plan and the call's turn, or why the call cannot be proved by rotation. */
function prepare(alg: Algorithm, call: CollectiveCall): { plan: Plan; turn: Turn } | string | ScheduleError {
  const n = call.size;
  const spec = specOf(call.collective);
  const rot = spec.data ? spec.rotation?.(n, call.count) : undefined;
  if (!rot) {
    return `past ${ROTATION_FROM - 1} ranks the proof turns rank 0's plan onto every rank, and ${call.collective} at count ${call.count} has no such turn${spec.rotation ? " (count must be a multiple of n)" : ""}`;
  }
  let plan: Plan;
  try {
    plan = compile(alg, rankCall(call, 0));
  } catch (e) {
    // Worded as the full proof words it: the message names the algorithm, rank and step.
    if (e instanceof ScheduleError) return e;
    throw e;
  }
  const L = plan.layout;
  if (n > 1 && L.alias && plan.call.inPlace && rot.input !== rot.output)
    return `in place the input and output are one memory, but they turn by ${rot.input} and ${rot.output}`;
  // No spec with a turn protects part of its input (reduce-scatter in place is refused above):
  // a guard for one that will.
  // Stryker disable next-line all
  const p = plan.protectedInput.filter(([lo, hi]) => hi > lo);
  // Stryker disable next-line all
  if (!(p.length === 0 || (p.length === 1 && p[0]?.[0] === 0 && p[0]?.[1] === L.inputCount)))
    return "the caller's protected input is part of the input, which does not turn onto itself";
  const turn: Turn = {
    n,
    by: { input: rot.input, output: rot.output, scratch: 0 },
    size: { input: L.inputCount, output: L.outputCount, scratch: plan.scratch },
    scaled: scaledCopy(plan),
  };
  return { plan, turn };
}

/**
 * Step 1 for ranks [from, to) alone (1 <= from): the errors, as checkRotation words them. The
 * proof's workers split a call's ranks this way (src/verify/proofs.ts).
 */
export function turnsIn(alg: Algorithm, call: CollectiveCall, from: number, to: number): string[] {
  const ready = prepare(alg, call);
  if (ready instanceof ScheduleError) return [ready.message];
  if (typeof ready === "string") return [`${whereOf(alg, call)}: ${ready}`];
  const why = checkTurns(alg, call, ready.plan, ready.turn, Math.max(1, from), Math.min(to, call.size));
  return why ? [`${whereOf(alg, call)}: not proved by rotation: ${why}`] : [];
}

/**
 * Proves `call` by rotation, or says why it cannot (`undefined` report, with `why`): the call has
 * no turn, or a rank's steps are not rank 0's turned (both reasons name what differs).
 */
export function checkRotation(alg: Algorithm, call: CollectiveCall, options: RotationOptions = {}): CheckReport {
  const n = call.size;
  const name = `${alg.collective}/${alg.name}`;
  const errors: string[] = [];
  const fail = (m: string) => {
    if (errors.length < MAX_ERRORS) errors.push(`${whereOf(alg, call)}: ${m}`);
  };
  const report = reportOf(name, call, errors);
  const spec = specOf(call.collective);
  const ready = prepare(alg, call);
  if (ready instanceof ScheduleError) {
    errors.push(ready.message);
    return report();
  }
  if (typeof ready === "string") {
    fail(ready);
    return report();
  }
  const { plan, turn } = ready;
  const L = plan.layout;

  // 1. Every rank's steps are rank 0's turned (here, or by the caller in parts: turnsIn).
  if (options.turns !== false) {
    const why = checkTurns(alg, call, plan, turn, 1, n);
    if (why) {
      fail(`not proved by rotation: ${why}`);
      return report();
    }
  }
  // The spec's result for rank r is rank 0's turned.
  const r = unturnedResult(spec, call, turn);
  if (r >= 0) {
    fail(`the spec's result for rank ${r} is not rank 0's turned, so rotation cannot prove it`);
    return report();
  }

  // 4. Rank 0's lint stands for every rank's.
  lint(plan, (op, m) => fail(`rank 0, step ${op.step} ('${labelOf(plan.steps[op.step])}'): ${m}`));
  const step = (i: number) => (plan.ops[i] as PlanOp).step;
  const stepName = (i: number) => `rank 0, step ${step(i)} ('${labelOf(plan.steps[step(i)])}')`;

  // 2, 3. Pairing: rank 0's k-th receive from p on channel c meets its k-th send to n - p there.
  const sends = new Map<string, number[]>();
  const recvs = new Map<string, number[]>();
  const order = new Map<string, number[]>();
  const push = (m: Map<string, number[]>, key: string, v: number) => {
    const l = m.get(key);
    if (l) l.push(v);
    else m.set(key, [v]);
  };
  plan.ops.forEach((op, i) => {
    if (op.kind === "send") {
      push(sends, `${op.peer}/${op.channel}`, i);
      push(order, `s${op.peer}`, op.channel);
    } else if (op.kind === "recv") {
      push(recvs, `${op.peer}/${op.channel}`, i);
      push(order, `r${op.peer}`, op.channel);
    }
  });
  for (const [key, list] of sends) {
    const [q, c] = key.split("/").map(Number) as [number, number];
    const back = recvs.get(`${(n - q) % n}/${c}`) ?? [];
    if (back.length < list.length) {
      const i = list[back.length] as number;
      fail(
        `deadlock under rendezvous semantics: ${stepName(i)} sends to rank ${q} on channel ${c}, but rank ${q} receives only ${back.length} message(s) from rank 0 there (rank 0's from rank ${(n - q) % n}, turned)`,
      );
      return report();
    }
    const a = order.get(`s${q}`) ?? [];
    const b = order.get(`r${(n - q) % n}`) ?? [];
    const k = a.findIndex((ch, j) => b[j] !== ch);
    if (k >= 0) {
      fail(
        `rank 0's message ${k} to rank ${q} is on channel ${a[k]}, but rank ${q}'s receive ${k} from rank 0 is on channel ${b[k] ?? "(none)"}: an engine that keeps one order per pair would pair them wrongly`,
      );
      return report();
    }
  }
  const partner = new Int32Array(plan.ops.length).fill(-1);
  for (const [key, list] of recvs) {
    const [p, c] = key.split("/").map(Number) as [number, number];
    const there = sends.get(`${(n - p) % n}/${c}`) ?? [];
    for (let k = 0; k < list.length; k++) {
      const i = list[k] as number;
      const j = there[k];
      if (j === undefined || step(j) !== step(i)) {
        fail(
          `deadlock under rendezvous semantics: ${stepName(i)} waits to receive from rank ${p}, whose matching send ${j === undefined ? "never comes" : `is in its step ${step(j)}`}; every rank takes the same steps turned, so every rank waits in step ${j === undefined ? step(i) : Math.min(step(i), step(j))}`,
        );
        return report();
      }
      partner[i] = j;
    }
  }

  // The walk: rank 0's memory, each message relabelled from the sender's turn.
  const flat = flatPlan(plan);
  const stride = Math.max(L.inputCount, 1);
  const opOf = (_r: number, i: number) => plan.ops[i] as PlanOp;
  const sym = new RunMemory([flat], stride, (_r, i, m) => fail(`${stepName(i)}: ${m}`), opOf);
  const mem = sym.mem[0] as RunMem[];
  const local = sym.effects().local;
  const src = new Pieces();
  const out = new Pieces();
  const place = (i: number) => [flat.places[6 * i] as number, flat.places[6 * i + 1] as number] as const;
  // Stops at the first error: walking on only finds what follows from it.
  // Stryker disable next-line ConditionalExpression: walking on after an error only adds its consequences
  for (let i = 0; i < plan.ops.length && errors.length === 0; i++) {
    const op = plan.ops[i] as PlanOp;
    if (op.kind === "send") continue;
    if (op.kind !== "recv") {
      local?.(0, i);
      continue;
    }
    const j = partner[i] as number;
    const sent = plan.ops[j] as PlanOp;
    if (sent.region.count !== op.region.count) {
      fail(
        `${stepName(j)}: sends ${regionText(sent.region)} (${sent.region.count} elements) to rank ${sent.peer}, which receives ${regionText(op.region)} (${op.region.count} elements) in step ${op.step} (rank 0's receive from rank ${op.peer}, turned)`,
      );
      break;
    }
    const [sm, sf] = place(j);
    src.clear();
    (mem[sm] as RunMem).read(sf, op.region.count, src);
    const bad = relabel(src, op.peer, turn, stride, out);
    if (bad !== undefined) {
      fail(
        `${stepName(i)}: receives from rank ${op.peer} an element that holds ${cellText(bad, stride)}, a contribution twice or elements of different indices`,
      );
      break;
    }
    const [rm, rf] = place(i);
    (mem[rm] as RunMem).write(rf, op.region.count, out);
  }
  if (errors.length === 0) checkRuns(call, [flat], sym, stride, fail);
  if (errors.length > 0) return report();

  let sent = 0;
  for (const op of plan.ops) if (op.kind === "send") sent += op.region.count;
  const steps = plan.steps.filter((s) => s.transfers.length > 0).length;
  const perRank = Array.from({ length: n }, () => ({ steps, sent }));
  if (!options.skipCost && call.count > 0 && n > 1) checkCost(alg, call, steps, sent, fail);
  return report({ steps, sent, perRank });
}

/** The first n the proof takes by rotation (below it check.ts walks every rank). */
export const ROTATION_FROM = 1025;

/** The first rank whose result (the spec's) is not rank 0's turned, or -1 where every rank's is. */
export function unturnedResult(spec: CollectiveSpec, call: CollectiveCall, turn: Turn): number {
  const want0 = spec.result(rankCall(call, 0), call);
  for (let r = 1; r < call.size; r++) {
    const got = normal(spec.result(rankCall(call, r), call));
    const want = normal(turnBlocks(want0, r, turn));
    if (JSON.stringify(got) !== JSON.stringify(want)) return r;
  }
  return -1;
}

/** A block list, turned by r: positions by the output's turn, indices by the input's, ranks by r (split where either wraps). */
function turnBlocks(blocks: readonly Block[], r: number, t: Turn): Block[] {
  const out: Block[] = [];
  const O = t.size.output;
  const I = Math.max(t.size.input, 1);
  const dOut = O === 0 ? 0 : (t.by.output * r) % O;
  const dIn = (t.by.input * r) % I;
  for (const b of blocks) {
    let done = 0;
    while (done < b.count) {
      const at = (b.at + done + dOut) % Math.max(O, 1);
      const idx = (("reduce" in b ? b.reduce : b.index) + done + dIn) % I;
      const len = Math.min(b.count - done, Math.max(O, 1) - at, I - idx);
      out.push(
        "reduce" in b ? { at, count: len, reduce: idx } : { at, count: len, rank: (b.rank + r) % t.n, index: idx },
      );
      done += len;
    }
  }
  return out;
}

/** Blocks sorted by position, each merged with the next where it continues it. */
function normal(blocks: readonly Block[]): Block[] {
  const sorted = [...blocks].filter((b) => b.count > 0).sort((a, b) => a.at - b.at);
  const out: Block[] = [];
  for (const b of sorted) {
    const last = out[out.length - 1];
    if (last && last.at + last.count === b.at) {
      if ("reduce" in last && "reduce" in b && last.reduce + last.count === b.reduce) {
        out[out.length - 1] = { at: last.at, count: last.count + b.count, reduce: last.reduce };
        continue;
      }
      if ("rank" in last && "rank" in b && last.rank === b.rank && last.index + last.count === b.index) {
        out[out.length - 1] = { at: last.at, count: last.count + b.count, rank: last.rank, index: last.index };
        continue;
      }
    }
    out.push(b);
  }
  return out;
}

/**
 * Pieces read on rank 0, relabelled as rank p holds them (rank q's contribution to element e is
 * rank q+p's to element e + p·turn), into `out`; a piece that would wrap round the input is split.
 * A value that holds a contribution twice or mixes indices is not relabelled: its cell (rank 0's,
 * at the first such element) is returned instead.
 */
export function relabel(src: Pieces, p: number, t: Turn, stride: number, out: Pieces): number[] | undefined {
  out.clear();
  const I = Math.max(t.size.input, 1);
  const dIn = (t.by.input * p) % I;
  for (let k = 0; k < src.size; k++) {
    const v = src.val[k] as RunVal | null;
    let len = src.len[k] as number;
    let off = src.off[k] as number;
    if (v === null) {
      out.push(len, null, 0);
      continue;
    }
    if (v.idx < 0) return [...(flattenAt(v, off, stride) ?? [])];
    const ranks = turnRanks(v.ranks, p, t.n);
    while (len > 0) {
      const idx = (v.idx + off + dIn) % I;
      const part = Math.min(len, I - idx);
      const leafRank = v.id >= 0 ? (ranks[0] as number) : -1;
      out.push(
        part,
        { id: leafRank >= 0 ? leafRank * stride + idx : -1, a: null, ao: 0, b: null, bo: 0, idx, ranks },
        0,
      );
      len -= part;
      off += part;
    }
  }
  return undefined;
}

/** Sorted disjoint rank intervals [lo, hi), turned by p mod n, merged where they meet. */
export function turnRanks(ranks: readonly number[], p: number, n: number): number[] {
  const parts: [number, number][] = [];
  for (let i = 0; i < ranks.length; i += 2) {
    const lo = ((ranks[i] as number) + p) % n;
    const len = (ranks[i + 1] as number) - (ranks[i] as number);
    if (lo + len <= n) parts.push([lo, lo + len]);
    else parts.push([lo, n], [0, lo + len - n]);
  }
  parts.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of parts) {
    if (out.length > 0 && out[out.length - 1] === lo) out[out.length - 1] = hi;
    else out.push(lo, hi);
  }
  return out;
}
