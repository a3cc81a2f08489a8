/**
 * The network model's shortcut for large groups: phases of logical rounds, each computed once.
 *
 * 1. Rounds. The interpreter walks the plans with every transfer taking one unit of time, in
 *    the plan's dataflow order: a transfer's start is its round, the wave of messages that can
 *    be in flight together (a ring step, a recursive-doubling distance, a tree pipeline's tick).
 * 2. Phases. The messages of one round start together on the network and share its links
 *    max-min fairly (flows.ts); the round lasts until its last message arrives, plus the largest
 *    reduction a rank makes after it (gamma). The call takes the sum of its rounds: bulk
 *    synchronous, so a rank never runs ahead into the next round as the exact engine lets it.
 * 3. Same pattern, computed once. Rounds whose messages are the same (sources, destinations,
 *    sizes) have the same time: a ring's 2(n-1) steps are one phase solved once.
 * 4. Symmetry. Where a call's schedule is the same for every rank up to a rotation of the ranks
 *    by a period p (ring: p = 1; Swing: p = 2, parity picks the direction; hierarchical: p = the
 *    group size), or up to an exclusive-or with a multiple of p (recursive doubling and halving
 *    at a power of two: p = 1), only ranks 0..p-1 are walked (peers taken modulo p, each message
 *    keyed by its rank offset), and a round's messages are theirs moved to p, 2p, ... The
 *    symmetry is found by compiling a few witness ranks and comparing them with the moved
 *    representatives (detectSymmetry); the test suite checks it on every rank (symmetryHolds).
 *
 * This approximates the exact engine (simulate.ts); test/network-model.test.ts measures the
 * error at n <= 1,024 for every algorithm it is used for, and every result says it is approximate.
 */
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { interpret } from "../../schedule/interpret.js";
import { reductions } from "../../schedule/model.js";
import { compile, type Plan, type PlanOp } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { FlowNet } from "./flows.js";
import { checkNetworkParams, type NetworkParams, type NetworkResult, Routes } from "./simulate.js";

/** The most operations the phases engine compiles (all ranks, or ranks 0..p-1 under a symmetry). */
export const PHASES_MAX_OPERATIONS = 8_000_000;

interface Round {
  /** Per message: source rank (a representative under a symmetry), rank offset to the destination, bytes. */
  src: number[];
  offset: number[];
  bytes: number[];
  /** Bytes each rank reduces after this round's messages arrive, by (representative) rank. */
  reduced: Map<number, number>;
  /** Index of the message per (source, offset). */
  pair: Map<number, number>;
}

/**
 * How rank r's schedule follows from rank (r mod p)'s: every peer moved by r - (r mod p)
 * ('rotate', modulo n) or exclusive-or'ed with it ('xor', p and n powers of two).
 */
export type Symmetry = { readonly kind: "rotate" | "xor"; readonly p: number };

/** Rank a's offset to rank b under a symmetry: what every rank pair related like (a, b) shares. */
const offsetOf = (kind: Symmetry["kind"], a: number, b: number, n: number): number =>
  kind === "rotate" ? (b - a + n) % n : a ^ b;

/** The rank at an offset from rank a. */
const atOffset = (kind: Symmetry["kind"], a: number, offset: number, n: number): number =>
  kind === "rotate" ? (a + offset) % n : a ^ offset;

/** A peer of rank (r mod p) moved to rank r. */
const moved = (kind: Symmetry["kind"], peer: number, r: number, p: number, n: number): number =>
  kind === "rotate" ? (peer + r - (r % p)) % n : peer ^ (r - (r % p));

/** One rank's plan seen from the quotient by the symmetry: peers modulo p, messages keyed by the sender's offset. */
function quotient(plan: Plan, rank: number, n: number, sym: Symmetry): Plan {
  const ops = plan.ops.map((op): PlanOp => {
    if (op.kind !== "send" && op.kind !== "recv") return op;
    // A send to peer q and the receive that peer posts from us share the sender's offset.
    const offset = op.kind === "send" ? offsetOf(sym.kind, rank, op.peer, n) : offsetOf(sym.kind, op.peer, rank, n);
    return { ...op, peer: op.peer % sym.p, channel: op.channel * n + offset };
  });
  return { ...plan, ops };
}

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
    if ((x.kind === "send" || x.kind === "recv") && moved(sym.kind, x.peer, r, sym.p, n) !== y.peer) return false;
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
export const MAX_PERIOD = 256;

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

/** The period and the representatives' plans (ranks 0..p-1; every rank when p = n), bounded. */
function representatives(
  alg: Algorithm,
  call: CollectiveCall,
  all = true,
  symmetric = true,
): { sym: Symmetry; plans: Plan[]; estimate: number; everyRank: number; plan: (r: number) => Plan } {
  const n = call.size;
  const made = new Map<number, Plan>();
  let ops = 0;
  let witnessing = true;
  const plan = (r: number): Plan => {
    const have = made.get(r);
    if (have) return have;
    const made1 = compile(alg, rankCall(call, r));
    // While a period is looked for, witnesses past the largest period are compared and dropped.
    if (witnessing && r >= MAX_PERIOD) return made1;
    ops += made1.ops.length;
    if (ops > PHASES_MAX_OPERATIONS) {
      throw new InvalidArgumentError(
        { op: "model", arg: "-n" },
        `${alg.collective}/${alg.name} at n = ${n}, ${call.count} elements in segments of ${call.segment}: more than ${PHASES_MAX_OPERATIONS.toLocaleString("en")} operations to walk (${ops.toLocaleString("en")} in ${made.size + 1} ranks), past what the model holds in memory, and no rotation symmetry of period <= ${MAX_PERIOD} to walk fewer ranks; a larger --segment makes fewer`,
      );
    }
    made.set(r, made1);
    return made1;
  };
  const sym: Symmetry = symmetric ? detectSymmetry(n, plan) : { kind: "rotate", p: n };
  witnessing = false;
  // With no symmetry every rank is walked: rank 0's size says how much that is.
  const everyRank = plan(0).ops.length * n;
  const estimate = plan(0).ops.length * sym.p;
  if (estimate > PHASES_MAX_OPERATIONS || !all) return { sym, plans: [], estimate, everyRank, plan };
  return { sym, plans: Array.from({ length: sym.p }, (_, r) => plan(r)), estimate, everyRank, plan };
}

/** A call walked into rounds: its messages grouped by the unit-time round they start in. */
export interface Walk {
  readonly sym: Symmetry;
  /** The plans walked: the representatives seen from the quotient (every rank's plan when p = n). */
  readonly walked: readonly Plan[];
  /** Rounds by start time (a time with no message has none). */
  readonly rounds: readonly (Round | undefined)[];
  /** Each round's pattern key (its messages in canonical order, and its largest reduction). */
  readonly keys: readonly (string | undefined)[];
  /** Per round, each message's place in the canonical order. */
  readonly places: readonly (Int32Array | undefined)[];
  /** Per walked rank and operation: the round of a send (-1 none) and its message in the round. */
  readonly roundOf: readonly Int32Array[];
  readonly messageOf: readonly Int32Array[];
  readonly operations: number;
}

/** The rounds of a call: a unit-time walk in the plans' dataflow order. */
function roundsOf(plans: readonly Plan[], n: number, sym: Symmetry, elementBytes: number): Walk {
  const p = sym.p;
  const walked = p === n ? plans : plans.map((plan, r) => quotient(plan, r, n, sym));
  const rounds: Round[] = [];
  const roundOf = walked.map((plan) => new Int32Array(plan.ops.length).fill(-1));
  const messageOf = walked.map((plan) => new Int32Array(plan.ops.length));
  const round = (t: number): Round => {
    let r = rounds[t];
    if (!r) {
      r = { src: [], offset: [], bytes: [], reduced: new Map(), pair: new Map() };
      rounds[t] = r;
    }
    return r;
  };
  const out = interpret(walked, {
    transfer: (s, r, start) => {
      const bytes = s.op.region.count * elementBytes;
      if (bytes > 0) {
        const rd = round(start);
        const offset = p === n ? r.rank : offsetOf(sym.kind, s.rank, plans[s.rank]!.ops[s.index]!.peer, n);
        // Messages a rank sends one peer in one round go down one connection, one after another
        // (NCCL's and MPI's per-peer order): one flow of their total.
        const key = s.rank * n + offset;
        let at = rd.pair.get(key);
        if (at === undefined) {
          at = rd.src.length;
          rd.pair.set(key, at);
          rd.src.push(s.rank);
          rd.offset.push(offset);
          rd.bytes.push(bytes);
        } else rd.bytes[at] = (rd.bytes[at] as number) + bytes;
        roundOf[s.rank]![s.index] = start;
        messageOf[s.rank]![s.index] = at;
      }
      return start + 1;
    },
    local: ({ rank, op }, start) => {
      if (op.kind === "reduce" && start > 0) {
        // A reduction at time t follows the messages of round t - 1.
        const rd = round(start - 1);
        rd.reduced.set(rank, (rd.reduced.get(rank) ?? 0) + op.region.count * elementBytes);
      }
      return start;
    },
  });
  if (!out.complete) {
    throw new InvalidArgumentError(
      { op: "model", arg: "algorithm" },
      `cannot complete at n = ${n}${p < n ? ` under its symmetry (${sym.kind}, period ${p})` : ""}: ranks ${out.stuck
        .map((x) => x.rank)
        .slice(0, 8)
        .join(", ")} wait for transfers no peer posts (run cclab verify)`,
    );
  }
  const keys: (string | undefined)[] = [];
  const places: (Int32Array | undefined)[] = [];
  rounds.forEach((rd, t) => {
    // Canonical order: by source, then offset (a pair appears once in a round).
    const order = rd.src
      .map((_, i) => i)
      .sort(
        (x, y) => (rd.src[x] as number) - (rd.src[y] as number) || (rd.offset[x] as number) - (rd.offset[y] as number),
      );
    const place = new Int32Array(order.length);
    order.forEach((i, k) => {
      place[i] = k;
    });
    let reduced = 0;
    for (const b of rd.reduced.values()) reduced = Math.max(reduced, b);
    keys[t] = `${order.map((i) => `${rd.src[i]}>${rd.offset[i]}:${rd.bytes[i]}`).join(",")}/${reduced}`;
    places[t] = place;
  });
  let operations = 0;
  for (const plan of plans) operations += plan.ops.length;
  return { sym, walked, rounds, keys, places, roundOf, messageOf, operations };
}

function budgetError(alg: Algorithm, call: CollectiveCall, estimate: number): InvalidArgumentError {
  return new InvalidArgumentError(
    { op: "model", arg: "-n" },
    `${alg.collective}/${alg.name} at n = ${call.size}, ${call.count} elements in segments of ${call.segment}: about ${estimate.toLocaleString("en")} operations to walk (every rank: no rotation or exclusive-or symmetry of period <= ${MAX_PERIOD}, and no pipeline to fold), past the ${PHASES_MAX_OPERATIONS.toLocaleString("en")} the model holds within 4 GiB; a larger --segment makes fewer`,
  );
}

function walk(
  alg: Algorithm,
  call: CollectiveCall,
  elementBytes: number,
  symmetric = true,
  probe?: ReturnType<typeof representatives>,
): Walk {
  let sym: Symmetry;
  let plans: Plan[];
  if (probe && (symmetric || probe.sym.p === call.size)) {
    // The probe found the symmetry (or none): its compiled ranks serve.
    sym = probe.sym;
    if (sym.p > PHASES_MAX_OPERATIONS / Math.max(1, probe.plan(0).ops.length))
      throw budgetError(alg, call, probe.estimate);
    plans = Array.from({ length: sym.p }, (_, r) => probe.plan(r));
  } else {
    const r = representatives(alg, call, true, symmetric);
    if (r.plans.length === 0) throw budgetError(alg, call, r.estimate);
    sym = r.sym;
    plans = r.plans;
  }
  return roundsOf(plans, call.size, sym, elementBytes);
}

/** One distinct round solved: each message's duration (canonical order), and the bytes it put on each link. */
interface Phase {
  readonly duration: Float64Array;
  /** Each message's route latency (of the copy that ends last): the part of its duration before its bytes move. */
  readonly latency: Float64Array;
  readonly bytes: Float64Array;
  uses: number;
}

/**
 * Times a walk: each distinct round's messages start together and share the links (solved once
 * per pattern), which gives every message a duration (its latency and its bytes at the rates
 * that sharing leaves it; under a symmetry, the slowest of the ranks it stands for); then the
 * plans run again in dataflow order with those durations, reductions costing gamma.
 */
function timeWalk(
  w: Walk,
  n: number,
  params: NetworkParams,
  elementBytes: number,
): { time: number; messages: number; solves: number; phases: Map<string, Phase>; rounds: number; critical: number } {
  const { topology, placement } = params;
  const gamma = params.gamma ?? 0;
  const { sym } = w;
  const p = sym.p;
  const routes = new Routes(topology);
  const memo = new Map<string, Phase>();
  const phaseOf: (Phase | undefined)[] = [];
  let messages = 0;
  let solves = 0;
  let rounds = 0;
  const copies = n / p;
  const total = w.rounds.length;
  let told = 0;
  w.rounds.forEach((rd, t) => {
    if (!rd) return;
    rounds++;
    if (params.onProgress && (t - told >= total / 100 || t === total - 1)) {
      told = t;
      params.onProgress(t + 1, total);
    }
    const key = w.keys[t] as string;
    const place = w.places[t] as Int32Array;
    messages += rd.src.length * copies;
    let phase = memo.get(key);
    if (!phase) {
      const net = new FlowNet(topology.links.bandwidth);
      const m = rd.src.length;
      const ends = new Float64Array(m * copies);
      const lats = new Float64Array(m * copies);
      for (let i = 0; i < m; i++) {
        const bytes = rd.bytes[i] as number;
        for (let j = 0; j < copies; j++) {
          const src = (rd.src[i] as number) + j * p;
          const dst = p === n ? (rd.offset[i] as number) : atOffset(sym.kind, src, rd.offset[i] as number, n);
          const a = placement[src] as number;
          const b = placement[dst] as number;
          if (a === b) continue;
          const { paths, latency } = routes.get(a, b);
          const tag = (place[i] as number) * copies + j;
          paths.forEach((path, k) => {
            lats[tag] = Math.max(lats[tag] as number, latency[k] as number);
            net.add(bytes / paths.length, path, latency[k] as number, tag);
          });
        }
      }
      while (net.inFlight > 0) {
        net.take((tag) => {
          ends[tag] = Math.max(ends[tag] as number, net.now);
        });
      }
      solves += net.solves;
      const duration = new Float64Array(m);
      const latency = new Float64Array(m);
      for (let k = 0; k < m; k++) {
        for (let j = 0; j < copies; j++) {
          if ((ends[k * copies + j] as number) < (duration[k] as number)) continue;
          duration[k] = ends[k * copies + j] as number;
          latency[k] = lats[k * copies + j] as number;
        }
      }
      phase = { duration, latency, bytes: net.use.bytes, uses: 0 };
      memo.set(key, phase);
    }
    phase.uses++;
    phaseOf[t] = phase;
  });
  // One connection per (sender, receiver), in order, as in the exact engine. A round's transfers
  // to one peer were solved as one flow: each takes its own bytes' part of that flow's time (its
  // mean rate), once its latency is over and the transfers before it on the connection (this
  // round's or an earlier one's) are through. Charging each the whole flow's time made a
  // pipeline like PAT's, with many chunks to one peer in a round, wait for the last chunk.
  const pairFree = new Map<number, number>();
  const out = interpret(w.walked, {
    transfer: (snd, _rcv, start) => {
      const t = w.roundOf[snd.rank]![snd.index] as number;
      if (t < 0) return start;
      const msg = w.messageOf[snd.rank]![snd.index] as number;
      const rd = w.rounds[t] as Round;
      const place = (w.places[t] as Int32Array)[msg] as number;
      const phase = phaseOf[t] as Phase;
      const d = phase.duration[place] as number;
      const l = Math.min(d, phase.latency[place] as number);
      const share = (snd.op.region.count * elementBytes) / (rd.bytes[msg] as number);
      const pair = snd.rank * n + (rd.offset[msg] as number);
      const end = Math.max(start + l, pairFree.get(pair) ?? 0) + (d - l) * share;
      pairFree.set(pair, end);
      return end;
    },
    local: reductions(gamma, elementBytes, w.walked.length),
  });
  let critical = 0;
  out.finish.forEach((t, r) => {
    if (t > (out.finish[critical] as number)) critical = r;
  });
  return { time: out.time, messages, solves, phases: memo, rounds, critical };
}

/** Up to this many operations (every rank's plan) the phases engine walks every rank, symmetry or not. */
export const EVERY_RANK_OPERATIONS = 300_000;

/** Above this many operations a pipelined call with no symmetry is folded (below, walking it is quick). */
export const FOLD_OPERATIONS = 400_000;

/**
 * A pipeline folded: the call walked at two smaller counts of whole segments, M1 and M2. Where
 * the second's rounds are the first's with one round pattern (the pipeline's steady state, every
 * stage busy) repeated more times and nothing else changed, each further segment adds the same
 * rounds again: the time grows by the same amount per segment, so the full call's time is the
 * line through the two. Undefined when the walks do not show that shape.
 */
function fold(
  alg: Algorithm,
  call: CollectiveCall,
  elementBytes: number,
  everyRank: number,
  estimate: number,
): { w1: Walk; w2: Walk; steady: string; m: [number, number] } | undefined {
  const n = call.size;
  const segments = call.count / call.segment;
  for (let m1 = Math.max(16, 4 * Math.ceil(Math.log2(n)) + 8); m1 + 4 < segments; m1 *= 2) {
    const m2 = m1 + 4;
    // Every rank walked where the smaller call makes that cheap (everyRank: the whole call's operations).
    const symmetric = (everyRank * m2) / segments > EVERY_RANK_OPERATIONS;
    // Two walks are held at once: each within what every-rank walks may hold, or no fold.
    if (((symmetric ? estimate : everyRank) * m2) / segments > EVERY_RANK_OPERATIONS) return undefined;
    const at = (m: number) => walk(alg, { ...call, count: m * call.segment }, elementBytes, symmetric);
    let w1: Walk;
    let w2: Walk;
    try {
      w1 = at(m1);
      w2 = at(m2);
    } catch {
      return undefined;
    }
    const a = w1.keys.filter((k) => k !== undefined);
    const b = w2.keys.filter((k) => k !== undefined);
    const grow = b.length - a.length;
    if (grow <= 0) continue;
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    const steady = b[i];
    const inserted = b.slice(i, i + grow).every((k) => k === steady);
    const rest = b.slice(i + grow).every((k, j) => k === a[i + j]);
    // The steady round must already be running where the new ones go in.
    if (!inserted || !rest || i === 0 || a[i - 1] !== steady) continue;
    return { w1, w2, steady: steady as string, m: [m1, m2] };
  }
  return undefined;
}

/** Times one call with the phases shortcut. */
export function networkTimePhases(
  alg: Algorithm,
  call: CollectiveCall,
  params: NetworkParams & {
    /** Fold a long pipeline: above FOLD_OPERATIONS (default, true), never (false), or wherever it can ('always'). */
    readonly fold?: boolean | "always";
    /** Walk every rank (true), or under the schedule's symmetry where it has one (false); default: every rank up to EVERY_RANK_OPERATIONS. */
    readonly everyRank?: boolean;
  },
): NetworkResult {
  const n = call.size;
  checkNetworkParams(params, n);
  const s = dtypeInfo(call.dtype as DType).bytes;
  const probe = representatives(alg, call, false);
  const { topology } = params;
  const linkBytes = new Float64Array(topology.links.count);
  const addBytes = (phases: Map<string, Phase>, times = 1, only?: string) => {
    for (const [key, ph] of phases) {
      const uses = only === undefined ? ph.uses * times : key === only ? times : 0;
      if (uses === 0) continue;
      for (let l = 0; l < linkBytes.length; l++)
        linkBytes[l] = (linkBytes[l] as number) + uses * (ph.bytes[l] as number);
    }
  };
  let w: Walk;
  let time: number;
  let t: ReturnType<typeof timeWalk>;
  let rounds: number;
  let folded = "";
  const everyRank = params.everyRank ?? probe.everyRank <= EVERY_RANK_OPERATIONS;
  const work = everyRank ? probe.everyRank : probe.estimate;
  const f =
    params.fold === "always" || (work > FOLD_OPERATIONS && params.fold !== false)
      ? fold(alg, call, s, probe.everyRank, probe.estimate)
      : undefined;
  if (f) {
    const t1 = timeWalk(f.w1, n, params, s);
    t = timeWalk(f.w2, n, params, s);
    w = f.w2;
    const [m1, m2] = f.m;
    const more = call.count / call.segment - m2;
    const perSegment = (t.time - t1.time) / (m2 - m1);
    time = t.time + more * perSegment;
    const steadyPerSegment = (t.rounds - t1.rounds) / (m2 - m1);
    rounds = t.rounds + more * steadyPerSegment;
    addBytes(t.phases);
    addBytes(t.phases, more * steadyPerSegment, f.steady);
    folded = `, the pipeline folded: walked at ${m1} and ${m2} segments (its steady round repeating), the time extended along the line through them to ${Number((call.count / call.segment).toFixed(2))} segments`;
  } else {
    // Every rank walked where that is cheap: each message then keeps its own duration (a
    // straggler delays only what waits for it); a symmetry stands for its slowest copy.
    w = walk(alg, call, s, !everyRank, probe);
    t = timeWalk(w, n, params, s);
    time = t.time;
    rounds = t.rounds;
    addBytes(t.phases);
  }
  // Messages priced round by round may overlap on a link in the dataflow order: no link carries
  // more than its bandwidth allows, so the call takes at least its busiest link's bytes at its rate.
  let floor = 0;
  for (let l = 0; l < linkBytes.length; l++) {
    const need = (linkBytes[l] as number) / (topology.links.bandwidth[l] as number);
    if (need > floor) floor = need;
  }
  if (floor > time) time = floor;
  const { sym } = w;
  const p = sym.p;
  const symText =
    p < n
      ? `, ranks 0..${p - 1} walked under the schedule's symmetry (${sym.kind === "rotate" ? "rotation" : "exclusive-or"}, period ${p})`
      : "";
  return {
    time,
    // Under a symmetry the walked rank stands for every rank of its class.
    criticalRank: t.critical,
    messages: t.messages,
    operations: w.operations,
    engine: p < n ? "symmetric" : "phases",
    approximate: true,
    note: `approximate: ${Number(rounds.toFixed(2))} logical rounds, each round's messages sharing the links as if started together (${t.phases.size} distinct), then timed in dataflow order${symText}${folded}`,
    linkBytes,
    solves: t.solves,
  };
}
