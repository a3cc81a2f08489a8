/**
 * A schedule on a network: every message of every rank's plan is a flow along its route,
 * starting when the plan's dataflow allows (the order the executors and the alpha-beta model
 * use: the one walker of flat plans, dataflow.ts, in the one interpreter's order,
 * src/schedule/interpret.ts), sharing each link max-min fairly with the flows crossing it at the
 * same time (flows.ts), charged its route's latency; local reductions cost gamma per byte, one at
 * a time per rank, as in the alpha-beta model.
 *
 * This is the exact engine: it walks every operation of every rank, the plans flattened once
 * (flat-plans.ts, each compiled in its turn and let go). Its reach is bounded by the memory its
 * walk needs (policy.ts's estimate against the heap); phases.ts takes over above it.
 */
import { type DType, dtypeInfo } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import { grow } from "../../core/growable.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { criticalOf } from "../../schedule/model.js";
import { compile } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { reductionsOf, type Timing, walkDataflow } from "./dataflow.js";
import { type FlatPlans, flattenPlans, SEND } from "./flat-plans.js";
import { FlowNet, SolveBudget, SolveWorkExceeded, type WorkMeter } from "./flows.js";
import { estimateOperations, exactHeapBudget, exactMemory, exactMemoryError, THRESHOLDS } from "./policy.js";
import type { Symmetry } from "./symmetry.js";
import type { Placement, Topology } from "./types.js";

export interface NetworkParams {
  readonly topology: Topology;
  /** Host of each rank (placeRanks). */
  readonly placement: Placement;
  /** Microseconds per byte reduced locally; default 0. */
  readonly gamma?: number;
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
 * The flow network as the walker sees it (a Timing whose transfers end when the traffic they
 * share links with lets them): a matched send and receive become one flow per path of the route
 * between their hosts; the transfer ends when its last flow does. Messages from one rank to one
 * peer go down one connection in order (MPI's and NCCL's per-peer order): a message starts
 * carrying bytes when the one before it on that connection has arrived, its latency overlapping
 * the wait.
 */
class FlowTransfers implements Timing {
  readonly net: FlowNet;
  private readonly routes: RouteCache;
  /** Per message on the wire or queued (ids reused): its send and receive, its flows still in flight, when it was matched, and the message queued behind it (-1 none). */
  private send = new Int32Array(1024);
  private recv = new Int32Array(1024);
  private parts = new Int32Array(1024);
  private at = new Float64Array(1024);
  private behind = new Int32Array(1024);
  private ids = 0;
  private readonly freeIds: number[] = [];
  /** Per connection (FlatPlans' pair of a send: its rank and, every rank walked, its peer): the message on the wire, the first and last queued behind it (-1 none). */
  private readonly busy: Int32Array;
  private readonly head: Int32Array;
  private readonly tail: Int32Array;
  messages = 0;
  /** Messages that arrived. */
  arrived = 0;
  /** Called after each message is started (progress). */
  onMessage?: () => void;

  constructor(
    private readonly flat: FlatPlans,
    readonly topology: Topology,
    private readonly placement: Placement,
    meter?: WorkMeter,
  ) {
    this.net = new FlowNet(topology.links.bandwidth, undefined, {}, meter);
    this.routes = new RouteCache(topology);
    this.busy = new Int32Array(flat.pairs).fill(-1);
    this.head = new Int32Array(flat.pairs).fill(-1);
    this.tail = new Int32Array(flat.pairs).fill(-1);
  }

  get now(): number {
    return this.net.now;
  }

  start(send: number, recv: number, start: number): number | undefined {
    const f = this.flat;
    if ((f.bytes[send] as number) === 0) return start;
    this.messages++;
    this.onMessage?.();
    // Ranks sharing a host exchange through its memory: no link, no latency.
    if (this.placement[f.rank[send] as number] === this.placement[f.rank[recv] as number]) {
      this.arrived++;
      return start;
    }
    const id = this.freeIds.pop() ?? this.ids++;
    if (id >= this.send.length) {
      this.send = grow(this.send, id + 1);
      this.recv = grow(this.recv, id + 1);
      this.parts = grow(this.parts, id + 1);
      this.at = grow(this.at, id + 1);
      this.behind = grow(this.behind, id + 1);
    }
    this.send[id] = send;
    this.recv[id] = recv;
    this.at[id] = start;
    this.behind[id] = -1;
    const c = f.pair[send] as number;
    if ((this.busy[c] as number) < 0) this.launch(c, id, start);
    else {
      const last = this.tail[c] as number;
      if (last < 0) this.head[c] = id;
      else this.behind[last] = id;
      this.tail[c] = id;
    }
    return undefined;
  }

  /** Puts message `id` on connection c's wire at `now`: its bytes flow once its latency, counted from when it was matched, is over. */
  private launch(c: number, id: number, now: number): void {
    this.busy[c] = id;
    const f = this.flat;
    const send = this.send[id] as number;
    const a = this.placement[f.rank[send] as number] as number;
    const b = this.placement[f.rank[this.recv[id] as number] as number] as number;
    const { paths, latency } = this.routes.get(a, b);
    this.parts[id] = paths.length;
    const share = (f.bytes[send] as number) / paths.length;
    const at = this.at[id] as number;
    paths.forEach((path, i) => {
      this.net.add(share, path, Math.max(now, at + (latency[i] as number)), id);
    });
  }

  next(): number {
    return this.net.next();
  }

  take(done: (send: number, recv: number) => void): number {
    return this.net.take((id) => {
      const left = (this.parts[id] as number) - 1;
      this.parts[id] = left;
      if (left > 0) return;
      this.freeIds.push(id);
      const c = this.flat.pair[this.send[id] as number] as number;
      const next = this.head[c] as number;
      if (next >= 0) {
        this.head[c] = this.behind[next] as number;
        if (this.head[c] === -1) this.tail[c] = -1;
        this.launch(c, next, this.net.now);
      } else this.busy[c] = -1;
      this.arrived++;
      done(this.send[id] as number, this.recv[id] as number);
    });
  }
}

/**
 * Every rank's plan flattened (FlatPlans, the identity symmetry: every rank walked), each
 * compiled in its turn and let go, refusing, before it runs out of memory, a call whose walk
 * would not fit `budget` bytes of heap (policy.ts's estimate: checked first on the estimate from
 * a few ranks' plans, estimateOperations, then on what is compiled).
 */
export function flattenEveryRank(
  alg: Algorithm,
  call: CollectiveCall,
  elementBytes: number,
  budget = exactHeapBudget(),
): FlatPlans {
  const n = call.size;
  const estimate = estimateOperations(alg, call);
  if (exactMemory(estimate) > budget) throw exactMemoryError(alg, call, estimate, budget);
  // The estimate may fall short (it samples a few ranks): what is compiled is checked too.
  const maxOps = Math.floor(budget / THRESHOLDS.EXACT_BYTES_PER_OPERATION.value);
  const limit = (ops: number): never => {
    throw exactMemoryError(alg, call, Math.max(estimate, ops), budget);
  };
  const every: Symmetry = { kind: "rotate", p: n };
  return flattenPlans((r) => compile(alg, rankCall(call, r)), n, every, elementBytes, maxOps, limit);
}

/** Times one call of `alg` on the network, walking every operation (the exact engine). */
export function networkTimeExact(alg: Algorithm, call: CollectiveCall, params: NetworkParams): NetworkResult {
  const n = call.size;
  checkNetworkParams(params, n);
  const s = dtypeInfo(call.dtype as DType).bytes;
  const flat = flattenEveryRank(alg, call, s);
  const network = new FlowTransfers(
    flat,
    params.topology,
    params.placement,
    params.budget ?? new SolveBudget(params.solveWork ?? THRESHOLDS.SOLVE_WORK.value),
  );
  // Messages the plans hold, told as started (progress) and as arrived (a refusal).
  let total = 0;
  for (let g = 0; g < flat.ops; g++) if (flat.kind[g] === SEND && (flat.bytes[g] as number) > 0) total++;
  const report = params.onProgress;
  if (report) {
    // Some 200 times over the run.
    const every = Math.max(1, Math.ceil(total / 200));
    report(0, total, "messages");
    network.onMessage = () => {
      if (network.messages % every === 0 || network.messages === total) report(network.messages, total, "messages");
    };
  }
  let out: ReturnType<typeof walkDataflow>;
  try {
    out = walkDataflow(flat, network, reductionsOf(flat, params.gamma ?? 0));
  } catch (e) {
    if (!(e instanceof SolveWorkExceeded)) throw e;
    throw new SolveWorkExceeded(e.limit, { count: network.arrived, of: total, what: "messages arrived" });
  }
  const criticalRank = criticalOf(alg, n, out.finish, out.stuck);
  return {
    time: out.time,
    criticalRank,
    messages: network.messages,
    operations: flat.ops,
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
