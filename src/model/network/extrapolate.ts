/**
 * A long pipeline extrapolated from a walk of a few of its segments: the phases engine's answer
 * for a pipeline too long to walk whole (the double binary tree's 512 segments at 64 MiB).
 */
import { availableParallelism } from "node:os";
import type { Algorithm } from "../../schedule/dsl.js";
import type { CollectiveCall } from "../../specs/types.js";
import { checkRoundsMemory, walkBudget } from "./phases-memory.js";
import { THRESHOLDS } from "./policy.js";
import { type SolvedRound, type SolvedRounds, solveRounds, timeEveryRank } from "./round-solve.js";
import { type Round, type RoundsWalk, walkCall } from "./rounds.js";
import type { NetworkParams } from "./simulate.js";
import { probeSymmetry, type Symmetry } from "./symmetry.js";

const EVERY_RANK_OPERATIONS = THRESHOLDS.EVERY_RANK_OPERATIONS.value;
const MOVED_OPERATIONS = THRESHOLDS.MOVED_OPERATIONS.value;

/** A walk of every rank timed: its end, critical rank and operations' starts, and its rounds solved. */
type Timed = { time: number; critical: number; start: Float64Array; solved: SolvedRounds };

/**
 * A pipeline extrapolated: the call walked at a smaller count of whole segments, M. A pipeline's rounds
 * are its fill, its steady round (every stage busy) repeated, and its drain; each further c
 * segments (c: the segments that enter the pipeline a round; the double binary tree's two trees
 * take one each, c = 2) add one more steady round, and in the timed walk each steady round
 * starts a fixed time (its pace) after the one before, or, where a connection's backlog builds
 * up, no sooner than that connection carries a round's bytes. So the full call takes the walk's
 * time plus that pace for each further steady round. The walk is folded only where its rounds show
 * that shape: one round pattern at least twice in a row, other rounds before and after it and
 * nowhere else; c is read from the walk (a steady round's sends against all the sends of the
 * call: every segment makes as many) and must come out a whole number.
 *
 * A tree pipeline is full once its first segment has gone up ⌈log2 n⌉ levels and down again, so
 * M starts at 4·⌈log2 n⌉ + 2 segments (two steady rounds for the double binary tree), doubled
 * while the shape does not show. Walking at M and M + 2 and taking the line through the two
 * times, as this did before, gives the same times (to 0.001%, double binary tree at n = 64 to
 * 1,024 on tori and the fat-tree) for twice the walking.
 */
export function extrapolatePipeline(
  alg: Algorithm,
  call: CollectiveCall,
  elementBytes: number,
  everyRank: number,
  estimate: number,
  params: NetworkParams,
):
  | {
      t: Timed;
      perSegment: number;
      perRound: number;
      c: number;
      sym: Symmetry;
      movedUnder: Symmetry | undefined;
      operations: number;
      steady: string;
      m: number;
      repeats: number;
    }
  | undefined {
  const n = call.size;
  const segments = call.count / call.segment;
  for (let m = Math.max(16, 4 * Math.ceil(Math.log2(n)) + 2); m + 2 < segments; m *= 2) {
    // Every rank walked where the smaller call makes that cheap (everyRank: the whole call's operations).
    const symmetric = (everyRank * m) / segments > EVERY_RANK_OPERATIONS;
    // Its walk must fit the heap (flattenPlans also counts what it compiles, and its rounds'
    // message copies are counted before they are solved); where it does not, the call is not
    // folded, and the full walk's own estimate refuses it, saying what fits.
    if (((symmetric ? estimate : everyRank) * m) / segments > walkBudget(0)) return undefined;
    let w: RoundsWalk;
    try {
      const cut = { ...call, count: m * call.segment };
      const probe = probeSymmetry(alg, cut, symmetric);
      // Under a symmetry, every rank walked with moved plans where that fits: the pace is read
      // from each operation's start, which only a walk of every rank gives.
      const moved = probe.sym.p < n;
      if (moved && probe.plan(0).ops.length * n > MOVED_OPERATIONS) return undefined;
      w = walkCall(alg, cut, elementBytes, probe, moved ? "moved" : "every-rank");
      checkRoundsMemory(alg, cut, w, params.threads ?? availableParallelism());
    } catch {
      return undefined;
    }
    // The rounds with messages, and the longest run of one pattern among them: [end - repeats, end).
    const ts: number[] = [];
    w.keys.forEach((k, t) => {
      if (k !== undefined) ts.push(t);
    });
    let repeats = 0;
    let end = 0;
    for (let i = 0, run = 0; i < ts.length; i++) {
      run = i > 0 && w.keys[ts[i] as number] === w.keys[ts[i - 1] as number] ? run + 1 : 1;
      if (run > repeats) {
        repeats = run;
        end = i + 1;
      }
    }
    const steady = w.keys[ts[end - 1] as number] as string;
    if (repeats < 2 || end === repeats || end === ts.length) continue;
    if (ts.some((t, i) => (i < end - repeats || i >= end) && w.keys[t] === steady)) continue;
    // Segments a round: the last steady round's sends against the call's (each counted once).
    const a = ts[end - 2] as number;
    const b = ts[end - 1] as number;
    let sends = 0;
    let inRound = 0;
    for (let g = 0; g < w.flat.ops; g++) {
      const r = w.roundOf[g] as number;
      if (r < 0) continue;
      sends++;
      if (r === b) inRound++;
    }
    const c = Math.round((inRound * m) / sends);
    if (c < 1 || Math.abs((inRound * m) / sends - c) > 0.05 * c) continue;
    const solved = solveRounds(w, n, params);
    const t = { ...timeEveryRank(w, n, solved, params.gamma ?? 0), solved };
    // The pace: how much later the last steady round starts (its latest message) than the one before.
    let sa = 0;
    let sb = 0;
    for (let g = 0; g < w.flat.ops; g++) {
      const r = w.roundOf[g] as number;
      if (r === a) sa = Math.max(sa, t.start[g] as number);
      else if (r === b) sb = Math.max(sb, t.start[g] as number);
    }
    // In the long run a round comes no faster than its busiest connection carries its bytes
    // (each connection's messages go one after another): where a backlog builds up later than
    // the walk shows (torus:10x10, n = 100: the pace grows from 14.2 to 15.7 µs after seven
    // steady rounds), that is the pace.
    const phase = t.solved.patterns.get(steady) as SolvedRound;
    let busiest = 0;
    for (let k = 0; k < phase.duration.length; k++) {
      const d = phase.duration[k] as number;
      busiest = Math.max(busiest, d - Math.min(d, phase.latency[k] as number));
    }
    const pace = Math.max(sb - sa, busiest);
    // A steady round's messages, every rank's (a walked rank's stand for n / p).
    const perRound = (w.rounds[b] as Round).src.length * (n / w.sym.p);
    return {
      t,
      perSegment: pace / c,
      c,
      perRound,
      sym: w.sym,
      movedUnder: w.movedUnder,
      operations: w.operations,
      steady,
      m,
      repeats,
    };
  }
  return undefined;
}
