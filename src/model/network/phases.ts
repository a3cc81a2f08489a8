/**
 * The network model's shortcut for large groups (the 'phases' engine): phases of logical
 * rounds, each distinct round solved once. The stages, each in its own file:
 *
 * 1. Symmetry (symmetry.ts): where the schedule is the same for every rank up to a rotation or
 *    an exclusive-or by a period p, only ranks 0..p-1 need walking.
 * 2. Flat plans (flat-plans.ts): the walked ranks' plans copied once into typed arrays.
 * 3. Rounds (rounds.ts): a unit-time walk of them in dataflow order (dataflow.ts); a transfer's
 *    start is its round.
 * 4. Round solves (round-solve.ts): the messages of each distinct round start together on the
 *    network and share its links max-min fairly (flow-sets.ts, maxmin.ts), which gives each a
 *    duration; a ring's 2(n-1) steps are one pattern solved once.
 * 5. The timed walk: the plans run again in dataflow order with those durations, every rank
 *    walked (timeEveryRank), or under a symmetry every copy at once (per-copy-walk.ts), or every
 *    rank with its representative's plan moved to it where reductions cost gamma.
 * 6. A long pipeline with no symmetry is walked at a few segments and extrapolated (extrapolate.ts).
 *
 * Then the call takes at least its busiest link's bytes at its rate. This approximates the exact
 * engine (simulate.ts); test/network-model.test.ts measures the error at n <= 1,024 for every
 * algorithm it is used for, and every result says it is approximate.
 */
import { availableParallelism } from "node:os";
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import type { CollectiveCall } from "../../specs/types.js";
import { extrapolatePipeline } from "./extrapolate.js";
import { timePerCopy } from "./per-copy-walk.js";
import { checkPhasesMemory, checkRoundsMemory } from "./phases-memory.js";
import { THRESHOLDS } from "./policy.js";
import { type RoundsTiming, type SolvedRound, type SolvedRounds, solveRounds, timeEveryRank } from "./round-solve.js";
import { type RoundsWalk, walkCall } from "./rounds.js";
import { checkNetworkParams, type NetworkParams, type NetworkResult } from "./simulate.js";
import { type Probe, probeSymmetry, type Symmetry } from "./symmetry.js";

/** Up to this many operations in all (rank 0's plan times n), a call with a symmetry may be walked rank by rank all the same, each rank's plan its representative's moved. */
const MOVED_OPERATIONS = THRESHOLDS.MOVED_OPERATIONS.value;

/** Up to this many operations (every rank's plan) the phases engine walks every rank, symmetry or not. */
const EVERY_RANK_OPERATIONS = THRESHOLDS.EVERY_RANK_OPERATIONS.value;

/** Above this many operations a pipelined call is extrapolated from a walk of fewer segments. */
const FOLD_OPERATIONS = THRESHOLDS.FOLD_OPERATIONS.value;

/** What the note adds on a hashed (ECMP) network, where the rounds' copies fall out of step. */
const HASHED_CAVEAT = `; on an ECMP-hashed network the shortcut is least accurate for the log-step algorithms (recursive doubling, Swing, Bruck; their measured error: docs/network-validation.md), and 'auto' gives calls of up to ${THRESHOLDS.AUTO_EXACT_HASHED_MAX_OPERATIONS.value.toLocaleString("en")} operations the exact engine`;

/**
 * How the phases engine walks a call: every rank's plan walked ('every-rank'); under a symmetry,
 * only ranks 0..p-1 walked and every copy timed at once ('per-copy'), or every rank walked with
 * its representative's plan moved to it ('moved'); and whether a long pipeline is extrapolated
 * from a walk of a few segments. chooseWalk() picks it; tests ask for a form by name to hold the
 * forms to each other.
 */
export interface PhasesWalk {
  readonly form: "every-rank" | "per-copy" | "moved";
  readonly extrapolate: boolean;
}

/**
 * The walk for a call: every rank up to EVERY_RANK_OPERATIONS (or where it has no symmetry);
 * above, per copy where reductions are free, else moved; a pipeline extrapolated above
 * FOLD_OPERATIONS (of the walk chosen).
 */
export function chooseWalk(probe: Probe, n: number, gamma: number): PhasesWalk {
  const everyRank = probe.everyRank <= EVERY_RANK_OPERATIONS || probe.sym.p === n;
  const work = probe.everyRank <= EVERY_RANK_OPERATIONS ? probe.everyRank : probe.estimate;
  return { form: everyRank ? "every-rank" : gamma === 0 ? "per-copy" : "moved", extrapolate: work > FOLD_OPERATIONS };
}

/** The moved walk where it fits, else the refusal: what the per-copy walk cannot time. */
function movedOrRefuse(alg: Algorithm, call: CollectiveCall, probe: Probe, why: string): void {
  const n = call.size;
  const ops = probe.plan(0).ops.length * n;
  if (ops <= MOVED_OPERATIONS) return;
  throw new InvalidArgumentError(
    { op: "model", arg: "--engine" },
    `phases: ${alg.collective}/${alg.name} at n = ${n} is walked under its symmetry (${named(probe.sym)}), and ${why}; walking every rank with moved plans takes about ${ops.toLocaleString("en")} operations, past the ${MOVED_OPERATIONS.toLocaleString("en")} it walks. Fewer ranks, --gamma 0, or --engine exact (where its memory allows) fit`,
  );
}

const named = (y: Symmetry) => `${y.kind === "rotate" ? "rotation" : "exclusive-or"}, period ${y.p}`;

/** Times one call with the phases shortcut, walked as chooseWalk() says. */
export function networkTimePhases(
  alg: Algorithm,
  call: CollectiveCall,
  params: NetworkParams,
  /** A form or extrapolation asked for by name, over chooseWalk()'s (tests hold the forms to each other). */
  walk?: Partial<PhasesWalk>,
): NetworkResult {
  const n = call.size;
  checkNetworkParams(params, n);
  const s = dtypeInfo(call.dtype as DType).bytes;
  const gamma = params.gamma ?? 0;
  const probe = probeSymmetry(alg, call);
  const choice = { ...chooseWalk(probe, n, gamma), ...walk };
  const { topology } = params;
  const linkBytes = new Float64Array(topology.links.count);
  const addBytes = (patterns: Map<string, SolvedRound>, times = 1, only?: string) => {
    for (const [key, ph] of patterns) {
      const uses = only === undefined ? ph.uses * times : key === only ? times : 0;
      if (uses === 0) continue;
      for (let k = 0; k < ph.links.length; k++) {
        const l = ph.links[k] as number;
        linkBytes[l] = (linkBytes[l] as number) + uses * (ph.bytes[k] as number);
      }
    }
  };
  let sym: Symmetry;
  let operations: number;
  let time: number;
  let critical: number;
  let solved!: SolvedRounds;
  let rounds: number;
  let messages: number;
  let folded = "";
  let movedUnder: Symmetry | undefined;
  let perCopy = false;
  const f = choice.extrapolate ? extrapolatePipeline(alg, call, s, probe.everyRank, probe.estimate, params) : undefined;
  if (f) {
    solved = f.t.solved;
    sym = f.sym;
    movedUnder = f.movedUnder;
    operations = f.operations;
    critical = f.t.critical;
    // Each further c segments: one more steady round, its pace later.
    const more = call.count / call.segment - f.m;
    time = f.t.time + more * f.perSegment;
    rounds = solved.rounds + more / f.c;
    messages = solved.messages + (more / f.c) * f.perRound;
    addBytes(solved.patterns);
    addBytes(solved.patterns, more / f.c, f.steady);
    folded = `, the pipeline folded: walked at ${f.m} segments, its steady round (every stage busy) ${f.repeats} times in a row, ${f.c} segment${f.c === 1 ? "" : "s"} a round; each further round taken to add the last one's pace, to ${Number((call.count / call.segment).toFixed(2))} segments`;
  } else {
    // Every rank walked where that is cheap: each message then keeps its own duration (a
    // straggler delays only what waits for it). Under a symmetry, with reductions free, the
    // per-copy walk gives the same times from the representatives alone, 10 – 60 times faster;
    // the moved walk serves where they cost gamma, or where the per-copy walk gives way.
    // Refused before the walk where its memory estimate does not fit the heap (phases-memory.ts).
    checkPhasesMemory(
      alg,
      call,
      probe.plan(0),
      choice.form === "every-rank" ? probe.everyRank : probe.estimate,
      probe.sends,
    );
    let w: RoundsWalk | undefined;
    let timing: RoundsTiming | undefined;
    if (choice.form === "per-copy" && probe.sym.p < n) {
      w = walkCall(alg, call, s, probe, "quotient");
      checkRoundsMemory(alg, call, w, params.threads ?? availableParallelism());
      solved = solveRounds(w, n, params);
      timing = timePerCopy(w, n, solved);
      if (timing) perCopy = true;
      else
        movedOrRefuse(
          alg,
          call,
          probe,
          "the per-copy walk gives way (two posting queues on one connection, or past its memory)",
        );
    } else if (choice.form === "moved" && probe.sym.p < n && gamma > 0) {
      movedOrRefuse(alg, call, probe, "reductions cost gamma, which the per-copy walk does not time");
    }
    if (!timing) {
      w = walkCall(alg, call, s, probe, choice.form === "every-rank" || probe.sym.p === n ? "every-rank" : "moved");
      checkRoundsMemory(alg, call, w, params.threads ?? availableParallelism());
      solved = solveRounds(w, n, params);
      timing = timeEveryRank(w, n, solved, gamma);
    }
    const walked = w as RoundsWalk;
    sym = walked.sym;
    movedUnder = walked.movedUnder;
    operations = walked.operations;
    messages = solved.messages;
    time = timing.time;
    critical = timing.critical;
    rounds = solved.rounds;
    addBytes(solved.patterns);
  }
  // Messages priced round by round may overlap on a link in the dataflow order: no link carries
  // more than its bandwidth allows, so the call takes at least its busiest link's bytes at its rate.
  let floor = 0;
  for (let l = 0; l < linkBytes.length; l++) {
    const need = (linkBytes[l] as number) / (topology.links.bandwidth[l] as number);
    if (need > floor) floor = need;
  }
  if (floor > time) time = floor;
  const p = sym.p;
  const symText = movedUnder
    ? `, every rank walked, ranks ${movedUnder.p}.. with the plans of ranks 0..${movedUnder.p - 1} moved under the schedule's symmetry (${named(movedUnder)})`
    : p < n && perCopy
      ? `, ranks 0..${p - 1} walked under the schedule's symmetry (${named(sym)}), each of their operations timed for its ${n / p} copies at once, each copy with its own messages' durations`
      : "";
  return {
    time,
    // Under a symmetry the walked rank stands for every rank of its class.
    criticalRank: critical,
    messages,
    operations,
    engine: "phases",
    ...(movedUnder ? { symmetry: movedUnder } : p < n ? { symmetry: sym } : {}),
    approximate: true,
    note: `approximate: ${Number(rounds.toFixed(2))} logical rounds, each round's messages sharing the links as if started together (${solved.patterns.size} distinct), then timed in dataflow order${symText}${folded}${params.topology.hashed ? HASHED_CAVEAT : ""}`,
    linkBytes,
    solves: solved.solves,
    work: params.budget ? params.budget.spent : solved.work,
  };
}
