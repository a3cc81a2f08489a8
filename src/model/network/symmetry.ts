/**
 * A schedule's symmetry, probed: where a call's schedule is the same for every rank up to a
 * rotation of the ranks by a period p (ring: p = 1; Swing: p = 2, parity picks the direction;
 * hierarchical: p = the group size), or up to an exclusive-or with a multiple of p (recursive
 * doubling and halving at a power of two: p = 1), the phases engine walks only ranks 0..p-1
 * (peers taken modulo p, each message keyed by its rank offset). The symmetry is found by
 * compiling a few witness ranks and comparing them with the moved representatives
 * (detectSymmetry); the test suite checks it on every rank (symmetryHolds).
 */
import type { Algorithm } from "../../schedule/dsl.js";
import { compile, type Plan, type PlanOp } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { estimateWork, exactHeapBudget, exactMemory, THRESHOLDS } from "./policy.js";

/**
 * How rank r's schedule follows from rank (r mod p)'s: every peer moved by r - (r mod p)
 * ('rotate', modulo n) or exclusive-or'ed with it ('xor', p and n powers of two).
 */
export type Symmetry = { readonly kind: "rotate" | "xor"; readonly p: number };

/** Rank a's offset to rank b under a symmetry: what every rank pair related like (a, b) shares. */
export const offsetOf = (kind: Symmetry["kind"], a: number, b: number, n: number): number =>
  kind === "rotate" ? (b - a + n) % n : a ^ b;

/** The rank at an offset from rank a. */
export const atOffset = (kind: Symmetry["kind"], a: number, offset: number, n: number): number =>
  kind === "rotate" ? (a + offset) % n : a ^ offset;

/** A peer of rank (r mod p) moved to rank r. */
export const movedPeer = (kind: Symmetry["kind"], peer: number, r: number, p: number, n: number): number =>
  kind === "rotate" ? (peer + r - (r % p)) % n : peer ^ (r - (r % p));

/** The operations the model charges: transfers and reductions (copies and scalings cost nothing). */
const charged = (plan: Plan): PlanOp[] => plan.ops.filter((op) => op.kind !== "copy" && op.kind !== "scale");

/**
 * Whether rank r's plan is rank (r mod p)'s with every peer moved to r under the symmetry, as far
 * as the model can tell: the same transfers and reductions in the same order and sizes (local
 * copies, which cost nothing, may differ: Bruck's final rotation does).
 */
function follows(rep: Plan, plan: Plan, r: number, sym: Symmetry, n: number): boolean {
  const a = charged(rep);
  const b = charged(plan);
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as PlanOp;
    const y = b[i] as PlanOp;
    if (x.kind !== y.kind || x.region.count !== y.region.count || x.channel !== y.channel) return false;
    if ((x.kind === "send" || x.kind === "recv") && movedPeer(sym.kind, x.peer, r, sym.p, n) !== y.peer) return false;
  }
  return true;
}

/** Whether every rank's plan follows from rank (r mod p)'s under the symmetry (every rank checked). */
export function symmetryHolds(plans: readonly Plan[], sym: Symmetry): boolean {
  const n = plans.length;
  if (n % sym.p !== 0 || (sym.kind === "xor" && (n & (n - 1)) !== 0)) return false;
  for (let r = sym.p; r < n; r++) if (!follows(plans[r % sym.p] as Plan, plans[r] as Plan, r, sym, n)) return false;
  return true;
}

/** The largest period tried: past it the schedule is walked for every rank. */
export const MAX_PERIOD = THRESHOLDS.MAX_PERIOD.value;

/** The ranks a period is checked on: up to 4 of the next period's ranks, the last rank, and 7 spread over the group. */
function witnesses(n: number, p: number): number[] {
  const out = new Set<number>();
  for (let r = p; r < Math.min(n, p + 4); r++) out.add(r);
  out.add(n - 1);
  for (let i = 1; i < 8; i++) out.add(Math.floor((i * n) / 8) + (i % p));
  return [...out].filter((r) => r >= p && r < n).sort((a, b) => a - b);
}

/**
 * The symmetry of a call's schedule: the smallest p (a divisor of n, at most MAX_PERIOD) for
 * which ranks 0..p-1 compiled, moved by a rotation or an exclusive-or, give the plans of the
 * witness ranks; p = n (every rank walked) when none. A schedule symmetric on the witnesses and
 * not elsewhere would be modelled wrongly: the test suite checks every rank (symmetryHolds) for
 * the algorithms the scale targets name at n <= 1,024.
 */
function detectSymmetry(n: number, plan: (r: number) => Plan): Symmetry {
  const pow2 = (n & (n - 1)) === 0;
  for (let p = 1; p <= Math.min(MAX_PERIOD, n / 2); p++) {
    if (n % p !== 0) continue;
    for (const kind of ["rotate", "xor"] as const) {
      if (kind === "xor" && !(pow2 && (p & (p - 1)) === 0)) continue;
      const sym = { kind, p };
      if (witnesses(n, p).every((r) => follows(plan(r % p), plan(r), r, sym, n))) return sym;
    }
  }
  return { kind: "rotate", p: n };
}

/** Past this many segments the symmetry is looked for on the call cut to PROBE_SEGMENTS first. */
const PROBE_SEGMENTS = 32;

/**
 * detectSymmetry for a call of many segments: looked for first on the same call cut to
 * PROBE_SEGMENTS segments (its witnesses' plans a fraction of the size), and a period found
 * there checked again on the full call's witnesses. A symmetry that only the full count has
 * would be missed: every rank is then walked, slower, not wrong.
 */
function findSymmetry(alg: Algorithm, call: CollectiveCall, plan: (r: number) => Plan): Symmetry {
  const n = call.size;
  if (call.count / call.segment <= 2 * PROBE_SEGMENTS) return detectSymmetry(n, plan);
  let small: Symmetry;
  try {
    const cut = { ...call, count: PROBE_SEGMENTS * call.segment };
    const made = new Map<number, Plan>();
    small = detectSymmetry(n, (r) => {
      let have = made.get(r);
      if (!have) made.set(r, (have = compile(alg, rankCall(cut, r))));
      return have;
    });
  } catch {
    return detectSymmetry(n, plan);
  }
  if (small.p === n) return small;
  const found = witnesses(n, small.p).every((r) => follows(plan(r % small.p), plan(r), r, small, n));
  return found ? small : detectSymmetry(n, plan);
}

/** A call's symmetry probed: its period (p = n: every rank), and the size of a walk of ranks 0..p-1 and of every rank, estimated from a few ranks' plans; `plan` compiles a rank's plan (kept while probing). */
export type Probe = ReturnType<typeof probeSymmetry>;

/**
 * The period (p = n: every rank), the size of a walk of ranks 0..p-1 (rank 0's plan times p) and
 * of every rank, and every rank's sends (estimateWork: rank 0, the root, and the largest of ranks
 * 1, n/2 and n-1 for the others). The plans compiled while probing are kept while they fit the
 * heap (at the exact engine's bytes an operation): past that they are compiled again when asked.
 */
export function probeSymmetry(
  alg: Algorithm,
  call: CollectiveCall,
  symmetric = true,
): { sym: Symmetry; estimate: number; everyRank: number; sends: number; plan: (r: number) => Plan } {
  const n = call.size;
  const made = new Map<number, Plan>();
  let held = 0;
  let witnessing = true;
  const plan = (r: number): Plan => {
    const have = made.get(r);
    if (have) return have;
    const made1 = compile(alg, rankCall(call, r));
    // While a period is looked for, witnesses past the largest period are compared and dropped.
    if (witnessing && r >= MAX_PERIOD) return made1;
    // Plans are kept only while they fit the heap: the probe itself never runs it out.
    if (exactMemory(held + made1.ops.length) > exactHeapBudget()) return made1;
    held += made1.ops.length;
    made.set(r, made1);
    return made1;
  };
  const sym: Symmetry = symmetric ? findSymmetry(alg, call, plan) : { kind: "rotate", p: n };
  witnessing = false;
  // With no symmetry every rank is walked: a few ranks' plans say how much that is.
  const work = estimateWork(call, plan);
  const estimate = plan(0).ops.length * sym.p;
  return { sym, estimate, everyRank: work.operations, sends: work.sends, plan };
}

/** Rank r's plan from its representative's (rank r mod p), every peer moved under the symmetry. */
export function movedPlan(rep: Plan, r: number, sym: Symmetry, n: number): Plan {
  if (r < sym.p) return rep;
  return {
    ...rep,
    ops: rep.ops.map((op) =>
      op.kind === "send" || op.kind === "recv" ? { ...op, peer: movedPeer(sym.kind, op.peer, r, sym.p, n) } : op,
    ),
  };
}
