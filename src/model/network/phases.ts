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
import { compile, type Plan, type PlanOp } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { FlowNet } from "./flows.js";
import { checkNetworkParams, type NetworkParams, type NetworkResult, Routes } from "./simulate.js";

/** The most operations the phases engine compiles (all ranks, or ranks 0..p-1 under a symmetry). */
export const PHASES_MAX_OPERATIONS = 12_000_000;

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

/** Whether every rank's plan is rank (r mod p)'s rotated by r - (r mod p). */
export const rotationHolds = (plans: readonly Plan[], p: number): boolean =>
  symmetryHolds(plans, { kind: "rotate", p });

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
function representatives(alg: Algorithm, call: CollectiveCall): { sym: Symmetry; plans: Plan[] } {
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
  const sym = detectSymmetry(n, plan);
  witnessing = false;
  return { sym, plans: Array.from({ length: sym.p }, (_, r) => plan(r)) };
}

/** The rounds of a call: its messages grouped by the unit-time round they start in. */
function roundsOf(plans: readonly Plan[], n: number, sym: Symmetry, elementBytes: number): Round[] {
  const p = sym.p;
  const walked = p === n ? plans : plans.map((plan, r) => quotient(plan, r, n, sym));
  const rounds: Round[] = [];
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
        const at = rd.pair.get(key);
        if (at === undefined) {
          rd.pair.set(key, rd.src.length);
          rd.src.push(s.rank);
          rd.offset.push(offset);
          rd.bytes.push(bytes);
        } else rd.bytes[at] = (rd.bytes[at] as number) + bytes;
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
  return rounds.filter((r) => r !== undefined);
}

/** A round's pattern as a key: same key, same messages, same time. */
function keyOf(r: Round): string {
  const parts: string[] = [];
  for (let i = 0; i < r.src.length; i++) parts.push(`${r.src[i]}>${r.offset[i]}:${r.bytes[i]}`);
  parts.sort();
  return parts.join(",");
}

/** Times one call with the phases shortcut. */
export function networkTimePhases(alg: Algorithm, call: CollectiveCall, params: NetworkParams): NetworkResult {
  const n = call.size;
  checkNetworkParams(params, n);
  const s = dtypeInfo(call.dtype as DType).bytes;
  const gamma = params.gamma ?? 0;
  const { sym, plans } = representatives(alg, call);
  const p = sym.p;
  const rounds = roundsOf(plans, n, sym, s);
  const { topology, placement } = params;
  const routes = new Routes(topology);
  const linkBytes = new Float64Array(topology.links.count);
  const memo = new Map<string, { time: number; bytes: Float64Array; uses: number }>();
  let time = 0;
  let messages = 0;
  let solves = 0;
  const copies = n / p;
  for (const rd of rounds) {
    messages += rd.src.length * copies;
    const key = keyOf(rd);
    let phase = memo.get(key);
    if (!phase) {
      const net = new FlowNet(topology.links.bandwidth);
      let local = 0;
      for (let i = 0; i < rd.src.length; i++) {
        const bytes = rd.bytes[i] as number;
        for (let j = 0; j < copies; j++) {
          const src = (rd.src[i] as number) + j * p;
          const dst = p === n ? (rd.offset[i] as number) : atOffset(sym.kind, src, rd.offset[i] as number, n);
          const a = placement[src] as number;
          const b = placement[dst] as number;
          if (a === b) continue;
          const { paths, latency } = routes.get(a, b);
          paths.forEach((path, k) => {
            net.add(bytes / paths.length, path, latency[k] as number, 0);
          });
        }
      }
      let end = 0;
      while (net.inFlight > 0) end = net.take(() => {});
      solves += net.solves;
      for (const b of rd.reduced.values()) local = Math.max(local, gamma * b);
      phase = { time: end + local, bytes: net.use.bytes, uses: 0 };
      memo.set(key, phase);
    }
    time += phase.time;
    phase.uses++;
  }
  for (const ph of memo.values()) {
    for (let l = 0; l < linkBytes.length; l++)
      linkBytes[l] = (linkBytes[l] as number) + ph.uses * (ph.bytes[l] as number);
  }
  let operations = 0;
  for (const plan of plans) operations += plan.ops.length;
  const symText =
    p < n
      ? `, ranks 0..${p - 1} walked under the schedule's symmetry (${sym.kind === "rotate" ? "rotation" : "exclusive-or"}, period ${p})`
      : "";
  return {
    time,
    criticalRank: 0,
    messages,
    operations,
    engine: p < n ? "symmetric" : "phases",
    approximate: true,
    note: `approximate: ${rounds.length} rounds as bulk-synchronous phases, ${memo.size} distinct${symText}`,
    linkBytes,
    solves,
  };
}
