/**
 * The alpha-beta cost of a schedule, computed from its steps without data: every rank's
 * schedule is generated symbolically and a critical-path simulation times it. A rank posts a
 * step when its previous step has ended; a transfer starts once both its sender and its
 * receiver have posted their steps and takes alpha + beta·bytes; a step ends when all its
 * transfers are done, plus gamma per byte it reduces. Ranks that post the same step together
 * therefore progress together, and a late rank delays exactly the ranks that wait for it.
 *
 * Concurrent transfers of one step share the rank's link ('shared', the default): a transfer
 * is charged the larger of its sender's bytes sent and its receiver's bytes received in
 * their steps (full duplex, processor sharing), so a tree rank sending to two children pays
 * for both. With 'none' each transfer pays only its own bytes (an ideal fully connected net).
 *
 * Schedules are consumed as generators, one step per rank at a time, so memory stays O(n)
 * however many steps there are (4096 ranks × 8190 ring steps is 33 million steps).
 */
import { type DType, dtypeInfo } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { type CallArgs, contextFor, materialize } from "../schedule/context.js";
import type { Algorithm, Step } from "../schedule/types.js";

export interface ModelParams {
  /** Latency per message, microseconds. */
  readonly alpha: number;
  /** Microseconds per byte (1 / bandwidth). */
  readonly beta: number;
  /** Microseconds per byte reduced locally; default 0. */
  readonly gamma?: number;
  /** How concurrent transfers of a step share a rank's link; default 'shared'. */
  readonly contention?: "shared" | "none";
}

export interface ModelResult {
  /** Modelled completion time of the slowest rank, microseconds. */
  readonly time: number;
  /** The rank that finishes last. */
  readonly criticalRank: number;
  /** Most communication steps any rank posts. */
  readonly steps: number;
  /** Messages (non-empty transfers matched send to receive). */
  readonly messages: number;
  /** Bytes sent by the busiest rank. */
  readonly maxBytesSent: number;
  /** Steps generated over all ranks (the work the model did). */
  readonly stepsSimulated: number;
}

/** GB/s as beta in µs per byte: 1 / (GB/s × 1e3). */
export function betaFromGBps(gbps: number): number {
  return 1 / (gbps * 1e3);
}

interface Waiting {
  /** The rank that posted it. */
  readonly rank: number;
  /** The other side: receiver of a waiting send, sender of a waiting receive. */
  readonly peer: number;
  readonly post: number;
  /** This side's load in its step: bytes sent (sender) or received (receiver). */
  readonly load: number;
}

/** Steps of one rank that look the same to the model (same peers, bytes and reductions), run-length coded. */
interface Run {
  repeat: number;
  readonly peers: Int32Array;
  /** 1 for a send, 0 for a receive. */
  readonly isSend: Uint8Array;
  readonly bytes: Float64Array;
  readonly sendLoad: number;
  readonly recvLoad: number;
  readonly reducedBytes: number;
}

function checkParams(p: ModelParams): void {
  const site = (arg: string) => ({ op: "model", arg });
  for (const k of ["alpha", "beta", "gamma"] as const) {
    const v = p[k];
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) {
      throw new InvalidArgumentError(site(k), `must be a finite non-negative number, got ${v}`);
    }
  }
}

/**
 * One rank's schedule reduced to what the model reads, run-length coded: a ring rank's 2(n-1)
 * steps become a handful of runs. Ranks are generated one after another, so only one
 * generator (and its O(n) state) is alive at a time.
 */
function compactRuns(alg: Algorithm, call: CallArgs, rank: number, elemBytes: number): { runs: Run[]; steps: number } {
  const ctx = contextFor(alg, call, rank);
  // Small groups: materialise, so a bad region is reported with its rank and step; large groups
  // stream (the checker proves the same schedules at small n).
  const steps: Iterable<Step> =
    call.size <= 64 ? materialize(alg, ctx, `${alg.collective}/${alg.name}`) : alg.schedule(ctx);
  const runs: Run[] = [];
  let count = 0;
  for (const step of steps) {
    count++;
    let live = 0;
    for (const x of step.transfers) {
      if (x.region.count === 0) continue;
      if (!Number.isInteger(x.peer) || x.peer < 0 || x.peer >= call.size) {
        throw new InvalidArgumentError(
          { rank, op: "model", arg: "schedule" },
          `${alg.collective}/${alg.name} step '${step.label}': peer ${x.peer} is not a rank of ${call.size}`,
        );
      }
      live++;
    }
    let reduced = 0;
    for (const l of step.local) if (l.kind === "reduce") reduced += l.dst.count * elemBytes;
    // Compare with the previous run in place: no per-step allocation (33 million ring steps at n = 4096).
    const last = runs[runs.length - 1];
    if (last && last.peers.length === live && last.reducedBytes === reduced) {
      let same = true;
      let i = 0;
      for (const x of step.transfers) {
        if (x.region.count === 0) continue;
        if (
          last.peers[i] !== x.peer ||
          last.isSend[i] !== (x.kind === "send" ? 1 : 0) ||
          last.bytes[i] !== x.region.count * elemBytes
        ) {
          same = false;
          break;
        }
        i++;
      }
      if (same) {
        last.repeat++;
        continue;
      }
    }
    const peers = new Int32Array(live);
    const isSend = new Uint8Array(live);
    const bytes = new Float64Array(live);
    let sendLoad = 0;
    let recvLoad = 0;
    let i = 0;
    for (const x of step.transfers) {
      if (x.region.count === 0) continue;
      peers[i] = x.peer;
      isSend[i] = x.kind === "send" ? 1 : 0;
      bytes[i] = x.region.count * elemBytes;
      if (x.kind === "send") sendLoad += bytes[i] as number;
      else recvLoad += bytes[i] as number;
      i++;
    }
    runs.push({ repeat: 1, peers, isSend, bytes, sendLoad, recvLoad, reducedBytes: reduced });
  }
  return { runs, steps: count };
}

/** Removes and returns the first waiting entry from `peer`, if any (FIFO per pair). */
function take(list: Waiting[] | undefined, peer: number): Waiting | undefined {
  if (!list) return undefined;
  for (let i = 0; i < list.length; i++) {
    const w = list[i] as Waiting;
    if (w.rank === peer) {
      list.splice(i, 1);
      return w;
    }
  }
  return undefined;
}

/** Times one call of `alg` under the alpha-beta model. */
export function modelTime(alg: Algorithm, call: CallArgs, params: ModelParams): ModelResult {
  checkParams(params);
  const n = call.size;
  const dtype: DType = call.dtype ?? (alg.collective === "barrier" ? "uint8" : "float32");
  const s = dtypeInfo(dtype).bytes;
  const { alpha, beta } = params;
  const gamma = params.gamma ?? 0;
  const shared = (params.contention ?? "shared") === "shared";

  const runs: Run[][] = [];
  let generated = 0;
  for (let r = 0; r < n; r++) {
    const c = compactRuns(alg, call, r, s);
    runs.push(c.runs);
    generated += c.steps;
  }

  const runIndex = new Int32Array(n);
  const left = new Int32Array(n);
  for (let r = 0; r < n; r++) left[r] = runs[r]?.[0]?.repeat ?? 0;
  const post = new Float64Array(n);
  const stepEnd = new Float64Array(n);
  const localCost = new Float64Array(n);
  const pending = new Int32Array(n);
  const commSteps = new Int32Array(n);
  const sent = new Float64Array(n);
  const finished = new Uint8Array(n);
  // Unmatched posts, FIFO per (sender, receiver) as every backend matches: sends waiting for
  // their receiver, listed under the receiver; receives waiting for their sender, under the sender.
  const sendsTo: (Waiting[] | undefined)[] = new Array(n);
  const recvsFrom: (Waiting[] | undefined)[] = new Array(n);
  const ready: number[] = [];
  let messages = 0;

  const transferDone = (r: number, finish: number) => {
    if (finish > (stepEnd[r] as number)) stepEnd[r] = finish;
    pending[r] = (pending[r] as number) - 1;
    if (pending[r] === 0) ready.push(r);
  };

  const postNext = (r: number, t: number) => {
    const rs = runs[r] as Run[];
    let ri = runIndex[r] as number;
    if (left[r] === 0) {
      ri++;
      runIndex[r] = ri;
      left[r] = rs[ri]?.repeat ?? 0;
    }
    post[r] = t;
    const run = rs[ri];
    if (!run) {
      finished[r] = 1;
      return;
    }
    left[r] = (left[r] as number) - 1;
    stepEnd[r] = t;
    localCost[r] = gamma * run.reducedBytes;
    const live = run.peers.length;
    if (live > 0) commSteps[r] = (commSteps[r] as number) + 1;
    sent[r] = (sent[r] as number) + run.sendLoad;
    // One guard count, so transfers that complete while we post do not finish the step early.
    pending[r] = live + 1;
    for (let i = 0; i < live; i++) {
      const peer = run.peers[i] as number;
      const send = run.isSend[i] === 1;
      const mine = send ? run.sendLoad : run.recvLoad;
      const other = send ? take(recvsFrom[r], peer) : take(sendsTo[r], peer);
      if (other) {
        const load = shared ? Math.max(mine, other.load) : (run.bytes[i] as number);
        const finish = Math.max(t, other.post) + alpha + beta * load;
        messages++;
        transferDone(r, finish);
        transferDone(other.rank, finish);
      } else {
        // Waits under the peer, where the peer's matching post will look.
        const lists = send ? sendsTo : recvsFrom;
        const w: Waiting = { rank: r, peer, post: t, load: mine };
        const list = lists[peer];
        if (list) list.push(w);
        else lists[peer] = [w];
      }
    }
    transferDone(r, t);
  };

  for (let r = n - 1; r >= 0; r--) ready.push(r);
  // Each entry is a rank whose step just ended (or that is starting): it posts its next step
  // once its local reductions are done.
  while (ready.length > 0) {
    const r = ready.pop() as number;
    const at = (stepEnd[r] as number) + (localCost[r] as number);
    localCost[r] = 0;
    stepEnd[r] = at;
    postNext(r, at);
  }

  const stuck: number[] = [];
  for (let r = 0; r < n; r++) if (!finished[r]) stuck.push(r);
  if (stuck.length > 0) {
    throw new InvalidArgumentError(
      { op: "model", arg: "algorithm" },
      `${alg.collective}/${alg.name} cannot complete at n = ${n}: ranks ${stuck.slice(0, 8).join(", ")}${stuck.length > 8 ? ", ..." : ""} wait for transfers no peer posts (run cclab verify)`,
    );
  }
  let time = 0;
  let criticalRank = 0;
  let steps = 0;
  let maxSent = 0;
  for (let r = 0; r < n; r++) {
    if ((post[r] as number) > time) {
      time = post[r] as number;
      criticalRank = r;
    }
    steps = Math.max(steps, commSteps[r] as number);
    maxSent = Math.max(maxSent, sent[r] as number);
  }
  return { time, criticalRank, steps, messages, maxBytesSent: maxSent, stepsSimulated: generated };
}

/**
 * The estimate from the algorithm's header formulas: steps × alpha + beta × the busiest rank's
 * bytes. It assumes every step costs one alpha and bytes flow at full rate, with no waiting.
 */
export function formulaTime(alg: Algorithm, call: CallArgs, params: ModelParams): number {
  const dtype: DType = call.dtype ?? (alg.collective === "barrier" ? "uint8" : "float32");
  const segment = contextFor(alg, call, 0).segment;
  const steps = alg.cost.steps(call.size, call.count, segment);
  const bytes = alg.cost.sentElements(call.size, call.count, segment) * dtypeInfo(dtype).bytes;
  return steps * params.alpha + params.beta * bytes;
}
