/**
 * The alpha-beta cost of a schedule: the interpreter (interpret.ts) walks every rank's plan with
 * this effect, which charges each message alpha + beta·bytes, each reduction gamma·bytes and each
 * local copy copy·bytes (beta, gamma and copy taken at the call's size when `bySize` gives them).
 * Latencies overlap, bandwidth does not: a rank's outgoing link and its incoming link each carry
 * one message's bytes at a time (LogGP's gap), so a tree rank sending to two children pays for
 * both, while a pipelined schedule's messages overlap their latencies. With contention 'none'
 * every message pays only its own bytes (an ideal fully connected network).
 *
 * By default the walk is dataflow (how cclab's executors run a plan); 'steps' gives the
 * bulk-synchronous time a stream-ordered engine would take.
 */
import { type DType, dtypeInfo } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { rankCall } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import type { Algorithm } from "./dsl.js";
import { type At, interpret, type Order } from "./interpret.js";
import { costAt, type SizePoint } from "./model-size.js";
import { compile, type Plan } from "./plan.js";

export interface ModelParams {
  /** Latency per message, microseconds. */
  readonly alpha: number;
  /** Microseconds per byte (1 / bandwidth). */
  readonly beta: number;
  /** Microseconds per byte reduced locally; default 0. */
  readonly gamma?: number;
  /** Microseconds per byte copied locally (a plan's copy operations); default 0. */
  readonly copy?: number;
  /** beta, gamma and copy measured at several buffer sizes (model-size.ts); where given they replace the scalars. */
  readonly bySize?: readonly SizePoint[];
  /** Whether a rank's link carries one message's bytes at a time ('shared', the default) or any number. */
  readonly contention?: "shared" | "none";
  /** 'dataflow' (default) or 'steps'. */
  readonly order?: Order;
}

export interface ModelResult {
  /** Modelled completion time of the slowest rank, microseconds. */
  readonly time: number;
  /** The rank that finishes last. */
  readonly criticalRank: number;
  /** Most communication steps any rank takes. */
  readonly steps: number;
  /** Messages (non-empty transfers). */
  readonly messages: number;
  /** Bytes sent by the busiest rank. */
  readonly maxBytesSent: number;
  /** Operations walked over all ranks (the work the model did). */
  readonly operations: number;
}

/** GB/s as beta in µs per byte: 1 / (GB/s × 1e3). */
export function betaFromGBps(gbps: number): number {
  return 1 / (gbps * 1e3);
}

/** The largest group the model walks: it compiles every rank's plan. */
export const MODEL_MAX_RANKS = 1024;

function checkParams(p: ModelParams, n: number): void {
  const site = (arg: string) => ({ op: "model", arg });
  for (const k of ["alpha", "beta", "gamma", "copy"] as const) {
    const v = p[k];
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) {
      throw new InvalidArgumentError(site(k), `must be a finite non-negative number, got ${v}`);
    }
  }
  for (const [i, q] of (p.bySize ?? []).entries()) {
    for (const k of ["bytes", "beta", "gamma", "copy"] as const) {
      const v = q[k];
      if (v !== undefined && (!Number.isFinite(v) || v < 0 || (k === "bytes" && v <= (p.bySize?.[i - 1]?.bytes ?? 0))))
        throw new InvalidArgumentError(
          site(`bySize[${i}].${k}`),
          `must be a finite non-negative number (bytes: increasing), got ${v}`,
        );
    }
  }
  if (!Number.isInteger(n) || n < 1 || n > MODEL_MAX_RANKS) {
    throw new InvalidArgumentError(site("size"), `must be an integer rank count in [1, ${MODEL_MAX_RANKS}], got ${n}`);
  }
}

/**
 * The local effect every model shares: a reduction costs gamma per byte and a copy `copy` per byte
 * (default 0), one at a time per rank (scalings cost nothing).
 */
export function reductions(
  gamma: number,
  elementBytes: number,
  n: number,
  copy = 0,
): (at: At, start: number) => number {
  const compute = new Float64Array(n);
  return ({ rank, op }, start) => {
    const perByte = op.kind === "reduce" ? gamma : op.kind === "copy" ? copy : 0;
    if (perByte === 0) return start;
    const end = Math.max(start, compute[rank] as number) + perByte * op.region.count * elementBytes;
    compute[rank] = end;
    return end;
  };
}

/**
 * The rank that finishes last (`finish`: each rank's finish), once every rank's plan has
 * completed; an error naming the ranks left waiting (`stuck`) otherwise. Both engines' walks
 * give these: interpret()'s and the network model's (src/model/network/dataflow.ts).
 */
export function criticalOf(alg: Algorithm, n: number, finish: ArrayLike<number>, stuck: readonly number[]): number {
  if (stuck.length > 0) {
    throw new InvalidArgumentError(
      { op: "model", arg: "algorithm" },
      `${alg.collective}/${alg.name} cannot complete at n = ${n}: ranks ${stuck.slice(0, 8).join(", ")}${stuck.length > 8 ? ", ..." : ""} wait for transfers no peer posts (run cclab verify)`,
    );
  }
  let critical = 0;
  for (let r = 1; r < finish.length; r++) if ((finish[r] as number) > (finish[critical] as number)) critical = r;
  return critical;
}

/** The scalar parameters for a call whose buffer is `bytes` long: beta, gamma and copy taken from bySize where it gives them. */
export function paramsAt(p: ModelParams, bytes: number): ModelParams & { gamma: number; copy: number } {
  const { bySize, ...rest } = p;
  return {
    ...rest,
    beta: costAt(bySize, "beta", bytes, p.beta),
    gamma: costAt(bySize, "gamma", bytes, p.gamma ?? 0),
    copy: costAt(bySize, "copy", bytes, p.copy ?? 0),
  };
}

/** Times one call of `alg` under the alpha-beta model. */
export function modelTime(alg: Algorithm, call: CollectiveCall, params: ModelParams): ModelResult {
  const n = call.size;
  checkParams(params, n);
  const s = dtypeInfo(call.dtype as DType).bytes;
  const { alpha, beta, gamma, copy } = paramsAt(params, call.count * s);
  const shared = (params.contention ?? "shared") === "shared";
  const plans: Plan[] = Array.from({ length: n }, (_, r) => compile(alg, rankCall(call, r)));
  const egress = new Float64Array(n);
  const ingress = new Float64Array(n);
  let messages = 0;
  const out = interpret(
    plans,
    {
      transfer: (snd, rcv, start) => {
        const bytes = snd.op.region.count * s;
        if (bytes === 0) return start;
        messages++;
        if (!shared) return start + alpha + beta * bytes;
        const end = Math.max(start + alpha, egress[snd.rank] as number, ingress[rcv.rank] as number) + beta * bytes;
        egress[snd.rank] = end;
        ingress[rcv.rank] = end;
        return end;
      },
      local: reductions(gamma, s, n, copy),
    },
    params.order ?? "dataflow",
  );
  const criticalRank = criticalOf(
    alg,
    n,
    out.finish,
    out.stuck.map((x) => x.rank),
  );
  let steps = 0;
  let maxSent = 0;
  let operations = 0;
  for (const p of plans) {
    operations += p.ops.length;
    const comm = new Set<number>();
    let sent = 0;
    for (const op of p.ops) {
      if (op.kind === "send" || op.kind === "recv") comm.add(op.step);
      if (op.kind === "send") sent += op.region.count * s;
    }
    steps = Math.max(steps, comm.size);
    maxSent = Math.max(maxSent, sent);
  }
  return { time: out.time, criticalRank, steps, messages, maxBytesSent: maxSent, operations };
}

/**
 * The estimate from the algorithm's header formulas: steps × alpha + beta × the busiest rank's
 * bytes. It assumes every step costs one alpha and bytes flow at full rate, with no waiting.
 */
export function formulaTime(alg: Algorithm, call: CollectiveCall, params: ModelParams): number {
  const steps = alg.cost.steps.value(call.size, call.count, call.segment);
  const s = dtypeInfo(call.dtype).bytes;
  const bytes = alg.cost.sent.value(call.size, call.count, call.segment) * s;
  return steps * params.alpha + paramsAt(params, call.count * s).beta * bytes;
}
