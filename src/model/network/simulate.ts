/**
 * A schedule on a network: every message of every rank's plan is a flow along its route,
 * starting when the plan's dataflow allows (the order the executors and the alpha-beta model
 * use: the one interpreter, src/schedule/interpret.ts), sharing each link max-min fairly with the
 * flows crossing it at the same time (flows.ts), charged its route's latency; local reductions
 * cost gamma per byte, one at a time per rank, as in the alpha-beta model.
 *
 * This is the exact engine: it walks every operation of every rank. Its reach is bounded by the
 * memory its walk needs (policy.ts's estimate against the heap); phases.ts takes over above it.
 */
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import { grow } from "../../core/growable.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { type At, interpret, type Network, type Order } from "../../schedule/interpret.js";
import { criticalOf, reductions } from "../../schedule/model.js";
import { compile, type Plan } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { FlowNet, SolveBudget, SolveWorkExceeded, type WorkMeter } from "./flows.js";
import { estimateOperations, exactHeapBudget, exactMemory, exactMemoryError, THRESHOLDS } from "./policy.js";
import type { Placement, Topology } from "./types.js";

export interface NetworkParams {
  readonly topology: Topology;
  /** Host of each rank (placeRanks). */
  readonly placement: Placement;
  /** Microseconds per byte reduced locally; default 0. */
  readonly gamma?: number;
  /** 'dataflow' (default) or 'steps'. */
  readonly order?: Order;
  /** Told how far a long run is: distinct rounds solved of those there are (the phases engine), or messages started (the exact engine). */
  readonly onProgress?: (done: number, total: number, what: "rounds" | "messages") => void;
  /** Threads solving the phases engine's distinct rounds at once (default: the machine's cores; 1: this thread only). */
  readonly threads?: number;
  /** The link crossings the call's rate solves may scan before it is refused (default SOLVE_WORK; flows.ts). */
  readonly solveWork?: number;
  /** The call's meter of that work, made once by networkTime so that every solve of the call is charged to it. */
  readonly budget?: SolveBudget;
}

/** One link's share of the run, for the report and the heat map. */
export interface LinkLoad {
  readonly link: number;
  readonly from: string;
  readonly to: string;
  readonly kind: string;
  readonly bytes: number;
  /** Bytes carried / (bandwidth × the collective's time): the link's mean utilization. */
  readonly utilization: number;
}

export interface NetworkResult {
  /** Modelled completion time of the slowest rank, microseconds. */
  readonly time: number;
  readonly criticalRank: number;
  /** Messages (non-empty transfers between ranks on different hosts or not). */
  readonly messages: number;
  /** Operations walked over all ranks. */
  readonly operations: number;
  /** The engine that computed it, by the name --engine takes: 'exact' walks every operation, 'phases' is the shortcut (phases.ts). */
  readonly engine: "exact" | "phases" | "simgrid";
  /** The phases engine's: the schedule symmetry it walked under, when it walked fewer ranks' plans or moved them. */
  readonly symmetry?: { readonly kind: "rotate" | "xor"; readonly p: number };
  /** Whether the engine approximates the exact one (and says by how much in `note`). */
  readonly approximate: boolean;
  readonly note?: string;
  /** Bytes carried per link (indexed by link id). */
  readonly linkBytes: Float64Array;
  /** Times the flow rates were solved, and the link crossings those solves scanned (what --solve-budget bounds). */
  readonly solves: number;
  readonly work: number;
}

/** Routes per host pair, computed once: a ring step reuses the same pairs 2(n-1) times. */
export class RouteCache {
  private readonly cache = new Map<number, { paths: readonly (readonly number[])[]; latency: number[] }>();
  constructor(readonly topology: Topology) {}
  get(a: number, b: number): { paths: readonly (readonly number[])[]; latency: number[] } {
    const t = this.topology;
    const key = a * t.hosts + b;
    let r = this.cache.get(key);
    if (!r) {
      const paths = t.paths(a, b);
      const latency = paths.map((p) => {
        let s = t.hopLatency * p.length;
        for (const l of p) s += t.links.latency[l] as number;
        return s;
      });
      r = { paths, latency };
      this.cache.set(key, r);
    }
    return r;
  }
}

export function checkNetworkParams(p: NetworkParams, n: number, op = "model"): void {
  if (p.placement.length < n) {
    throw new InvalidArgumentError({ op, arg: "--placement" }, `places ${p.placement.length} ranks, the call has ${n}`);
  }
  const k = p.threads;
  if (k !== undefined && !(Number.isSafeInteger(k) && k >= 1)) {
    throw new InvalidArgumentError({ op, arg: "--threads" }, `must be a whole number of at least 1, got ${k}`);
  }
  const g = p.gamma;
  if (g !== undefined && (!Number.isFinite(g) || g < 0)) {
    throw new InvalidArgumentError({ op, arg: "--gamma" }, `must be a finite non-negative number, got ${g}`);
  }
}

/**
 * The flow network as the interpreter sees it: a matched send and receive become one flow per
 * path of the route between their hosts; the transfer ends when its last flow does. Messages
 * from one rank to one peer go down one connection in order (MPI's and NCCL's per-peer order):
 * a message starts carrying bytes when the one before it on that pair has arrived, its latency
 * overlapping the wait.
 */
class FlowTransfers implements Network {
  readonly net: FlowNet;
  private readonly routes: RouteCache;
  private readonly sends: At[] = [];
  private readonly recvs: At[] = [];
  private parts = new Int32Array(1024);
  private readonly freeIds: number[] = [];
  /** Per (sender, receiver) pair: the message on the wire, and those queued behind it (ids, with when they were matched). */
  private readonly pairs = new Map<number, { busy: number; queue: { id: number; at: number }[] }>();
  private pairOf = new Int32Array(1024);
  messages = 0;
  /** Messages that arrived. */
  arrived = 0;
  /** Called after each message is started (progress). */
  onMessage?: () => void;

  constructor(
    readonly topology: Topology,
    private readonly placement: Placement,
    private readonly elementBytes: number,
    private readonly n: number,
    meter?: WorkMeter,
  ) {
    this.net = new FlowNet(topology.links.bandwidth, undefined, {}, meter);
    this.routes = new RouteCache(topology);
  }

  get now(): number {
    return this.net.now;
  }

  start(send: At, recv: At, start: number): number | undefined {
    const bytes = send.op.region.count * this.elementBytes;
    if (bytes === 0) return start;
    this.messages++;
    this.onMessage?.();
    const a = this.placement[send.rank] as number;
    const b = this.placement[recv.rank] as number;
    // Ranks sharing a host exchange through its memory: no link, no latency.
    if (a === b) {
      this.arrived++;
      return start;
    }
    const id = this.freeIds.pop() ?? this.sends.length;
    this.sends[id] = send;
    this.recvs[id] = recv;
    this.parts = grow(this.parts, id + 1);
    this.pairOf = grow(this.pairOf, id + 1);
    const key = send.rank * this.n + recv.rank;
    this.pairOf[id] = key;
    let pair = this.pairs.get(key);
    if (!pair) {
      pair = { busy: -1, queue: [] };
      this.pairs.set(key, pair);
    }
    if (pair.busy >= 0) pair.queue.push({ id, at: start });
    else this.launch(pair, id, start, start);
    return undefined;
  }

  /** Puts message `id` (matched at `at`) on the wire at `now`: its bytes flow once its latency, counted from `at`, is over. */
  private launch(pair: { busy: number }, id: number, at: number, now: number): void {
    pair.busy = id;
    const send = this.sends[id] as At;
    const a = this.placement[send.rank] as number;
    const b = this.placement[(this.recvs[id] as At).rank] as number;
    const { paths, latency } = this.routes.get(a, b);
    this.parts[id] = paths.length;
    const share = (send.op.region.count * this.elementBytes) / paths.length;
    paths.forEach((path, i) => {
      this.net.add(share, path, Math.max(now, at + (latency[i] as number)), id);
    });
  }

  next(): number {
    return this.net.next();
  }

  take(done: (send: At, recv: At) => void): number {
    return this.net.take((id) => {
      const left = (this.parts[id] as number) - 1;
      this.parts[id] = left;
      if (left > 0) return;
      this.freeIds.push(id);
      const pair = this.pairs.get(this.pairOf[id] as number);
      if (pair) {
        const next = pair.queue.shift();
        if (next) this.launch(pair, next.id, next.at, this.net.now);
        else pair.busy = -1;
      }
      this.arrived++;
      done(this.sends[id] as At, this.recvs[id] as At);
    });
  }
}

/**
 * Compiles every rank's plan, refusing, before it runs out of memory, a call whose walk would not
 * fit `budget` bytes of heap (policy.ts's estimate: checked first on the estimate from a few ranks'
 * plans, estimateOperations, then on what is compiled).
 */
export function compileAll(alg: Algorithm, call: CollectiveCall, budget = exactHeapBudget()): Plan[] {
  const estimate = estimateOperations(alg, call);
  if (exactMemory(estimate) > budget) throw exactMemoryError(alg, call, estimate, budget);
  const plans: Plan[] = [];
  let ops = 0;
  for (let r = 0; r < call.size; r++) {
    const p = compile(alg, rankCall(call, r));
    ops += p.ops.length;
    // The estimate may fall short (it samples a few ranks): what is compiled is checked too.
    if (exactMemory(ops) > budget) throw exactMemoryError(alg, call, Math.max(estimate, ops), budget);
    plans.push(p);
  }
  return plans;
}

/** Times one call of `alg` on the network, walking every operation (the exact engine). */
export function networkTimeExact(alg: Algorithm, call: CollectiveCall, params: NetworkParams): NetworkResult {
  const n = call.size;
  checkNetworkParams(params, n);
  const s = dtypeInfo(call.dtype as DType).bytes;
  const gamma = params.gamma ?? 0;
  const plans = compileAll(alg, call);
  const network = new FlowTransfers(
    params.topology,
    params.placement,
    s,
    n,
    params.budget ?? new SolveBudget(params.solveWork ?? THRESHOLDS.SOLVE_WORK.value),
  );
  const report = params.onProgress;
  if (report) {
    // Messages started of those the plans hold, some 200 times over the run.
    let total = 0;
    for (const p of plans) for (const op of p.ops) if (op.kind === "send" && op.region.count > 0) total++;
    const every = Math.max(1, Math.ceil(total / 200));
    report(0, total, "messages");
    network.onMessage = () => {
      if (network.messages % every === 0 || network.messages === total) report(network.messages, total, "messages");
    };
  }
  let out: ReturnType<typeof interpret>;
  try {
    out = interpret(plans, { network, local: reductions(gamma, s, n) }, params.order ?? "dataflow");
  } catch (e) {
    if (!(e instanceof SolveWorkExceeded)) throw e;
    let total = 0;
    for (const p of plans) for (const op of p.ops) if (op.kind === "send" && op.region.count > 0) total++;
    throw new SolveWorkExceeded(e.limit, { count: network.arrived, of: total, what: "messages arrived" });
  }
  const criticalRank = criticalOf(alg, n, out);
  let operations = 0;
  for (const p of plans) operations += p.ops.length;
  return {
    time: out.time,
    criticalRank,
    messages: network.messages,
    operations,
    engine: "exact",
    approximate: false,
    linkBytes: network.net.linkBytes,
    solves: network.net.solves,
    work: network.net.work,
  };
}

/** The links that carried most, by mean utilization over the call's time. */
export function hottestLinks(t: Topology, linkBytes: Float64Array, time: number, top = 10): LinkLoad[] {
  const ids: number[] = [];
  for (let l = 0; l < linkBytes.length; l++) if ((linkBytes[l] as number) > 0) ids.push(l);
  const util = (l: number) => (time > 0 ? (linkBytes[l] as number) / ((t.links.bandwidth[l] as number) * time) : 0);
  ids.sort((a, b) => util(b) - util(a) || a - b);
  return ids.slice(0, top).map((l) => ({
    link: l,
    from: t.nodeName(t.links.from[l] as number),
    to: t.nodeName(t.links.to[l] as number),
    kind: t.links.kind[l] as string,
    bytes: linkBytes[l] as number,
    utilization: util(l),
  }));
}
