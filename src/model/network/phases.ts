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
 *    group size), only ranks 0..p-1 are walked (peers taken modulo p, each message keyed by its
 *    rank offset), and a round's messages are theirs rotated by p, 2p, ... The period is found by
 *    compiling a few witness ranks and comparing them with the rotated representatives
 *    (detectPeriod); the test suite checks it on every rank (rotationHolds).
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

/** One rank's plan seen from the quotient by rotation p: peers modulo p, messages keyed by their rank offset. */
function quotient(plan: Plan, rank: number, n: number, p: number): Plan {
  const ops = plan.ops.map((op): PlanOp => {
    if (op.kind !== "send" && op.kind !== "recv") return op;
    // The offset of the sender to the receiver: a send to peer q and the receive that peer posts from us share it.
    const offset = op.kind === "send" ? (op.peer - rank + n) % n : (rank - op.peer + n) % n;
    return { ...op, peer: op.peer % p, channel: op.channel * n + offset };
  });
  return { ...plan, ops };
}

/** Whether rank r's plan is rank (r mod p)'s with every peer moved by r - (r mod p). */
function rotated(rep: Plan, plan: Plan, r: number, p: number, n: number): boolean {
  const a = rep.ops;
  const b = plan.ops;
  if (a.length !== b.length) return false;
  const shift = r - (r % p);
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as PlanOp;
    const y = b[i] as PlanOp;
    if (x.kind !== y.kind || x.region.count !== y.region.count || x.channel !== y.channel) return false;
    if ((x.kind === "send" || x.kind === "recv") && (x.peer + shift) % n !== y.peer) return false;
  }
  return true;
}

/** Whether every rank's plan is rank (r mod p)'s rotated by r - (r mod p) (every rank checked). */
export function rotationHolds(plans: readonly Plan[], p: number): boolean {
  const n = plans.length;
  if (n % p !== 0) return false;
  for (let r = p; r < n; r++) if (!rotated(plans[r % p] as Plan, plans[r] as Plan, r, p, n)) return false;
  return true;
}

/** The largest period tried: past it the schedule is walked for every rank. */
export const MAX_PERIOD = 256;

/** The ranks a period is checked on: the next period's ranks, the last ones and 16 spread over the group. */
function witnesses(n: number, p: number): number[] {
  const out = new Set<number>();
  for (let r = p; r < Math.min(n, 2 * p); r++) out.add(r);
  for (let r = Math.max(p, n - p); r < n; r++) out.add(r);
  for (let i = 1; i < 16; i++) out.add(Math.floor((i * n) / 16));
  return [...out].filter((r) => r >= p && r < n).sort((a, b) => a - b);
}

/**
 * The rotation period of a call's schedule: the smallest p (a divisor of n, at most MAX_PERIOD)
 * for which ranks 0..p-1 compiled, rotated, give the plans of the witness ranks; n when none.
 * A schedule symmetric on the witnesses and not elsewhere would be modelled wrongly: the test
 * suite checks every rank (rotationHolds) for the algorithms the scale targets name at n <= 1,024.
 */
function detectPeriod(n: number, plan: (r: number) => Plan): number {
  for (let p = 1; p <= Math.min(MAX_PERIOD, n / 2); p++) {
    if (n % p !== 0) continue;
    if (witnesses(n, p).every((r) => rotated(plan(r % p), plan(r), r, p, n))) return p;
  }
  return n;
}

/** The period and the representatives' plans (ranks 0..p-1; every rank when p = n), bounded. */
function representatives(alg: Algorithm, call: CollectiveCall): { p: number; plans: Plan[] } {
  const n = call.size;
  const made = new Map<number, Plan>();
  let ops = 0;
  const plan = (r: number): Plan => {
    let have = made.get(r);
    if (!have) {
      have = compile(alg, rankCall(call, r));
      ops += have.ops.length;
      if (ops > PHASES_MAX_OPERATIONS) {
        throw new InvalidArgumentError(
          { op: "model", arg: "-n" },
          `${alg.collective}/${alg.name} at n = ${n}, ${call.count} elements in segments of ${call.segment}: more than ${PHASES_MAX_OPERATIONS.toLocaleString("en")} operations to walk (${ops.toLocaleString("en")} in ${made.size + 1} ranks), past what the model holds in memory, and no rotation symmetry of period <= ${MAX_PERIOD} to walk fewer ranks; a larger --segment makes fewer`,
        );
      }
      made.set(r, have);
    }
    return have;
  };
  const p = detectPeriod(n, plan);
  return { p, plans: Array.from({ length: p }, (_, r) => plan(r)) };
}

/** The rounds of a call: its messages grouped by the unit-time round they start in. */
function roundsOf(plans: readonly Plan[], n: number, p: number, elementBytes: number): Round[] {
  const walked = p === n ? plans : plans.map((plan, r) => quotient(plan, r, n, p));
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
        const offset = p === n ? r.rank : (plans[s.rank]!.ops[s.index]!.peer - s.rank + n) % n;
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
      `cannot complete at n = ${n}${p < n ? ` under its rotation symmetry (period ${p})` : ""}: ranks ${out.stuck
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
  const { p, plans } = representatives(alg, call);
  const rounds = roundsOf(plans, n, p, s);
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
          const dst = p === n ? (rd.offset[i] as number) : (src + (rd.offset[i] as number)) % n;
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
  const sym = p < n ? `, ranks 0..${p - 1} walked under the schedule's rotation symmetry (period ${p})` : "";
  return {
    time,
    criticalRank: 0,
    messages,
    operations,
    engine: p < n ? "symmetric" : "phases",
    approximate: true,
    note: `approximate: ${rounds.length} rounds as bulk-synchronous phases, ${memo.size} distinct${sym}`,
    linkBytes,
    solves,
  };
}
