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
import { type Algorithm, regionText, type Step } from "./dsl.js";
import { type FlatPlan, flatPlan, isTransferKind, SEND, walk } from "./flat.js";
import { interpret, type Order } from "./interpret.js";
import { labelOf, lint } from "./lint.js";
import { compile, type Plan, type PlanOp, ScheduleError } from "./plan.js";
import { type CheckOptions, type CheckReport, checkCost, checkRuns, reportOf } from "./results.js";
import { checkRotation, ROTATION_FROM } from "./rotation.js";
import { RunMemory } from "./runs.js";
import { SymbolicMemory } from "./symbolic.js";

// What a proof reports, and its options: in results.ts, which both proofs (this one and
// rotation.ts) build their reports with.
export type { CheckOptions, CheckReport } from "./results.js";

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
  // Past 1,024 ranks every rank's plan does not fit: rank 0's, turned onto every rank (rotation.ts).
  if (n >= ROTATION_FROM) return checkRotation(alg, call, options);
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
  const report = reportOf(name, call, errors);

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
  if (!options.skipCost && !trivial && errors.length === 0) checkCost(alg, call, steps, sent, fail);
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

/** A barrier's result: no rank leaves before it has heard, transitively, from every rank. */
function checkHeard(call: CollectiveCall, knows: readonly Uint8Array[], fail: (m: string) => void): void {
  knows.forEach((k, r) => {
    const missing = [...k].map((x, i) => (x ? -1 : i)).filter((i) => i >= 0);
    if (missing.length > 0)
      fail(`rank ${r}: leaves the ${call.collective} without having heard from rank(s) ${missing.join(", ")}`);
  });
}
