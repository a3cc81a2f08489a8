/**
 * A call's schedule as every rank's program of messages and local work, the form other
 * simulators take (GOAL for LogGOPSim/ATLAHS, Chakra execution traces for ASTRA-sim): per rank,
 * its plan's operations in program order, each a send, a receive or a local computation, with
 * sizes in bytes, the dependencies the plan's dataflow gives (src/schedule/plan.ts) and a tag per
 * message that is unique between its pair of ranks, so no simulator's matching rule can pair a
 * send with another receive than the one cclab pairs it with.
 *
 * May import: core, specs, schedule. Used by the exporters (goal.ts, chakra.ts) and their readers.
 */
import { dtypeInfo } from "../core/dtype.js";
import { AlgorithmFileError } from "../core/errors.js";
import { callOf } from "../model/machine.js";
import type { Algorithm } from "../schedule/dsl.js";
import { compile, type OpKind } from "../schedule/plan.js";
import { type CollectiveCall, makeCall, rankCall, specOf } from "../specs/index.js";

/** One operation of a rank's program. `deps` index earlier operations of the same rank. */
export interface ProgramOp {
  readonly kind: "send" | "recv" | "calc";
  /** The plan operation it comes from (calc: reduce, copy or scale). */
  readonly source: OpKind;
  /** send, recv: the other rank and the message's tag (unique between the two ranks). */
  readonly peer: number;
  /** send, recv: the plan's channel (a second connection between the same pair); -1 for calc. */
  readonly channel?: number;
  readonly tag: number;
  /** Bytes moved (send, recv) or touched (calc). */
  readonly bytes: number;
  /** calc: nanoseconds of computation (gamma per byte for reductions, 0 for copies). */
  readonly ns: number;
  readonly deps: readonly number[];
}

export interface Program {
  readonly collective: string;
  readonly algorithm: string;
  readonly nranks: number;
  readonly ranks: readonly (readonly ProgramOp[])[];
}

export interface ProgramOptions {
  /** Microseconds per byte a reduction costs (the model's gamma); default 0. */
  readonly gamma?: number;
}

/**
 * The call an export writes for `bytes`, nccl-tests' bytes as bench and the model take them (the
 * spec's default dtype). All-to-all-v, which has no single size, sends every peer the same count:
 * bytes / n per rank, as all-to-all does.
 */
export function exportCall(
  alg: Algorithm,
  n: number,
  bytes: number,
  o: { readonly root?: number; readonly segment?: number } = {},
): { call: CollectiveCall; size: number } {
  const spec = specOf(alg.collective);
  if (!spec.splits) return callOf(alg, n, bytes, { dtype: spec.defaultDtype, root: o.root, segment: o.segment });
  const elementBytes = dtypeInfo(spec.defaultDtype).bytes;
  const per = Math.floor(Math.floor(bytes / elementBytes / n) / n);
  const splits = Array.from({ length: n }, () => Array.from({ length: n }, () => per));
  const call = makeCall({ collective: spec.name, size: n, splits, dtype: spec.defaultDtype, segment: o.segment }, alg);
  return { call, size: per * n * n * elementBytes };
}

/** Rank r's plan, every rank, as programs whose messages carry matched tags. */
export function programOf(alg: Algorithm, call: CollectiveCall, o: ProgramOptions = {}): Program {
  const n = call.size;
  const gamma = o.gamma ?? 0;
  const elementBytes = dtypeInfo(call.dtype).bytes;
  const plans = Array.from({ length: n }, (_, r) => compile(alg, rankCall(call, r)));
  // Messages match in program order per (sender, receiver, channel): the k-th send from a to b on
  // channel c meets the k-th receive at b from a on c. Number the matched pairs between a and b
  // in the sender's program order, and give both ends that number as their tag.
  const sendTags = new Map<string, number[]>(); // "a b c" -> tags of a's sends to b on c, in order
  const pairNext = new Map<string, number>(); // "a b" -> next tag between a and b
  for (let a = 0; a < n; a++) {
    for (const op of (plans[a] as (typeof plans)[number]).ops) {
      if (op.kind !== "send") continue;
      const pair = `${a} ${op.peer}`;
      const tag = pairNext.get(pair) ?? 0;
      pairNext.set(pair, tag + 1);
      const key = `${pair} ${op.channel}`;
      const list = sendTags.get(key);
      if (list) list.push(tag);
      else sendTags.set(key, [tag]);
    }
  }
  const sendSeen = new Map<string, number>();
  const recvSeen = new Map<string, number>();
  const ranks = plans.map((plan, b) =>
    plan.ops.map((op): ProgramOp => {
      const bytes = op.region.count * elementBytes;
      const deps = [...op.deps];
      if (op.kind === "send") {
        const key = `${b} ${op.peer} ${op.channel}`;
        const k = sendSeen.get(key) ?? 0;
        sendSeen.set(key, k + 1);
        const tag = sendTags.get(key)?.[k] as number;
        return { kind: "send", source: op.kind, peer: op.peer, channel: op.channel, tag, bytes, ns: 0, deps };
      }
      if (op.kind === "recv") {
        const key = `${op.peer} ${b} ${op.channel}`;
        const k = recvSeen.get(key) ?? 0;
        recvSeen.set(key, k + 1);
        const tag = sendTags.get(key)?.[k];
        if (tag === undefined) {
          throw new AlgorithmFileError(
            `${alg.collective}/${alg.name} on ${n} ranks: rank ${b}'s receive #${k + 1} from rank ${op.peer} (channel ${op.channel}) has no matching send; prove the schedule first (cclab verify)`,
          );
        }
        return { kind: "recv", source: op.kind, peer: op.peer, channel: op.channel, tag, bytes, ns: 0, deps };
      }
      const ns = op.kind === "reduce" ? Math.ceil(gamma * bytes * 1000) : 0;
      return { kind: "calc", source: op.kind, peer: -1, tag: -1, bytes, ns, deps };
    }),
  );
  for (const [key, tags] of sendTags) {
    const got = recvSeen.get(key) ?? 0;
    if (got !== tags.length) {
      const [a, b, c] = key.split(" ");
      throw new AlgorithmFileError(
        `${alg.collective}/${alg.name} on ${n} ranks: rank ${a} sends ${tags.length} messages to rank ${b} on channel ${c}, which receives ${got}; prove the schedule first (cclab verify)`,
      );
    }
  }
  return { collective: alg.collective, algorithm: alg.name, nranks: n, ranks };
}

/**
 * Where two programs differ, in words, or undefined where they are the same schedule: the same
 * ranks, and on each the same operations in the same order (kind, peer, tag, bytes, calc time)
 * with the same dependencies. `what` names the second program (a file) in the message. A format
 * that does not carry a computation's bytes (GOAL's calc has only a time) passes calcBytes false.
 */
export function programDiff(a: Program, b: Program, what: string, calcBytes = true): string | undefined {
  if (a.nranks !== b.nranks) return `${what} has ${b.nranks} ranks, the schedule ${a.nranks}`;
  for (let r = 0; r < a.nranks; r++) {
    const x = a.ranks[r] as readonly ProgramOp[];
    const y = b.ranks[r] as readonly ProgramOp[];
    if (x.length !== y.length) return `rank ${r}: ${what} has ${y.length} operations, the schedule ${x.length}`;
    for (let i = 0; i < x.length; i++) {
      const p = x[i] as ProgramOp;
      const q = y[i] as ProgramOp;
      const same =
        p.kind === q.kind &&
        (p.bytes === q.bytes || (p.kind === "calc" && !calcBytes)) &&
        p.ns === q.ns &&
        (p.kind === "calc" || (p.peer === q.peer && p.tag === q.tag));
      if (!same) return `rank ${r}, operation ${i + 1}: ${what} has ${opText(q)}, the schedule ${opText(p)}`;
      const dp = [...new Set(p.deps)].sort((u, v) => u - v).join(",");
      const dq = [...new Set(q.deps)].sort((u, v) => u - v).join(",");
      if (dp !== dq) return `rank ${r}, operation ${i + 1}: ${what} waits for [${dq}], the schedule for [${dp}]`;
    }
  }
  return undefined;
}

export function opText(o: ProgramOp): string {
  if (o.kind === "send") return `send ${o.bytes} B to ${o.peer} tag ${o.tag}`;
  if (o.kind === "recv") return `recv ${o.bytes} B from ${o.peer} tag ${o.tag}`;
  return `calc ${o.ns} ns (${o.bytes} B)`;
}

/** Every message between the ranks, checked: each send meets exactly one receive with its size. */
export function checkMatching(p: Program, what: string): void {
  const sends = new Map<string, number>();
  for (let r = 0; r < p.nranks; r++) {
    for (const o of p.ranks[r] as readonly ProgramOp[]) {
      if (o.kind !== "send") continue;
      const key = `${r} ${o.peer} ${o.tag}`;
      if (sends.has(key)) throw new AlgorithmFileError(`${what}: rank ${r} sends tag ${o.tag} to rank ${o.peer} twice`);
      sends.set(key, o.bytes);
    }
  }
  for (let r = 0; r < p.nranks; r++) {
    for (const o of p.ranks[r] as readonly ProgramOp[]) {
      if (o.kind !== "recv") continue;
      const key = `${o.peer} ${r} ${o.tag}`;
      const bytes = sends.get(key);
      if (bytes === undefined)
        throw new AlgorithmFileError(
          `${what}: rank ${r} receives tag ${o.tag} from rank ${o.peer}, which never sends it`,
        );
      if (bytes !== o.bytes)
        throw new AlgorithmFileError(
          `${what}: rank ${r} receives ${o.bytes} B with tag ${o.tag} from rank ${o.peer}, which sends ${bytes} B`,
        );
      sends.delete(key);
    }
  }
  const left = sends.keys().next();
  if (!left.done) {
    const [a, b, t] = left.value.split(" ");
    throw new AlgorithmFileError(`${what}: rank ${a}'s send with tag ${t} to rank ${b} is never received`);
  }
}
