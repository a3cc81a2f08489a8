/**
 * The static proof's calls at large n (`cclab verify -n 1024`), run in worker threads: each call
 * is proved on its own (checkAlgorithm), so the calls of the matrix at one n, and the n's asked
 * for, go to as many workers as the machine has cores (and as half its memory holds at their
 * heap's cap), each with a bounded heap. A worker's heap
 * is capped at `heapMiB` (`--proof-memory`, default 4,096), so a proof that would take more ends
 * with an error naming the call and the bound, not with the process killed by the system. Its
 * young generation is larger than node's default: every rank's plan, compiled in its turn and
 * let go, then costs the collector less (compiling the ring's 1,024 plans in a worker took 10 to
 * 15% less CPU time with 192 MiB than with the default).
 *
 * A worker loads the algorithm itself: from the registry, or from the --algorithm-file, bound to
 * --topology's shape, as verify did; it recomputes the same calls (checkCases is deterministic)
 * and proves those it is handed by index. An algorithm a worker cannot find (one registered by
 * the calling program, not by a file) is proved in the calling thread, as are the small calls.
 */
import { availableParallelism, totalmem } from "node:os";
import { Worker } from "node:worker_threads";
import { InvalidArgumentError } from "../core/errors.js";
import { checkAlgorithm } from "../schedule/check.js";
import type { Algorithm } from "../schedule/dsl.js";
import { checkRotation, ROTATION_FROM, turnsIn } from "../schedule/rotation.js";
import { withShape } from "../schedule/shape.js";
import type { CollectiveCall, Shape } from "../specs/types.js";
import { selectAlgorithms } from "./load.js";
import { checkCases } from "./matrix.js";

/** Calls of at least this many ranks go to workers. */
export const WORKER_MIN_RANKS = 128;

/** The heap one proof may use, in MiB (`--proof-memory`): the bound the proofs at 1,024 ranks are held to. */
export const PROOF_HEAP_MIB = 4096;

/** A worker's young generation, in MiB (node's default is about a sixth of this). */
const YOUNG_MIB = 192;

/** What a worker needs to find the algorithm and the calls again. */
export interface ProofSource {
  readonly collective: string;
  readonly algorithm: string;
  readonly algorithmFile?: string;
  readonly shape?: Shape;
  readonly maxN: number;
  readonly sizes: readonly number[];
  readonly heapMiB: number;
}

/** The first failing call (in the matrix's order) and its errors, or undefined when all hold. */
export interface ProofFailure {
  readonly call: CollectiveCall;
  readonly errors: readonly string[];
}

/** The worker's side: find the algorithm, then prove each call index it is sent. */
export async function proofWorker(
  src: ProofSource,
  post: (m: WorkerMessage) => void,
  on: (f: (t: ProofTask) => void) => void,
): Promise<void> {
  const found = (await selectAlgorithms(src).catch(() => [])).find(
    (a) => a.collective === src.collective && a.name === src.algorithm,
  );
  if (!found) {
    post({ missing: true });
    return;
  }
  const alg = src.shape ? withShape(found, src.shape, { op: "verify", arg: "--topology" }) : found;
  const cases = checkCases(alg, src.maxN, src.sizes);
  on((t) => post({ ...t, errors: proveTask(alg, cases[t.index] as CollectiveCall, t) }));
  post({ ready: cases.length });
}

/**
 * A part of the proofs: a whole call (no part), or of a call proved by rotation (n >= 1,025)
 * part 0, rank 0's walk, and parts 1..of, each a share of the other ranks' turns.
 */
export interface ProofTask {
  readonly index: number;
  readonly part?: number;
  readonly of?: number;
}

function proveTask(alg: Algorithm, call: CollectiveCall, t: ProofTask): readonly string[] {
  if (t.part === undefined || t.of === undefined) return checkAlgorithm(alg, call).errors;
  if (t.part === 0) return checkRotation(alg, call, { turns: false }).errors;
  const share = Math.ceil((call.size - 1) / t.of);
  return turnsIn(alg, call, 1 + (t.part - 1) * share, 1 + t.part * share);
}

/** The tasks of `indices`: a call proved by rotation in 1 + `parts` parts, any other whole. */
export function tasksOf(cases: readonly CollectiveCall[], indices: readonly number[], parts: number): ProofTask[] {
  return indices.flatMap((index) =>
    (cases[index] as CollectiveCall).size >= ROTATION_FROM
      ? Array.from({ length: parts + 1 }, (_, part) => ({ index, part, of: parts }))
      : [{ index }],
  );
}

/**
 * A call's errors from its tasks' (undefined until all are in): the first share of the turns
 * that failed, in rank order, else the walk's; what checkAlgorithm gives for the whole call.
 */
export function joinParts(parts: readonly (readonly string[] | undefined)[]): readonly string[] | undefined {
  if (parts.some((p) => p === undefined)) return undefined;
  return parts.slice(1).find((p) => (p as readonly string[]).length > 0) ?? (parts[0] as readonly string[]);
}

/** What a worker says: the algorithm is not there; ready, with its count of calls; a call proved; it could not start. */
type WorkerMessage =
  | { readonly missing: true }
  | { readonly ready: number }
  | (ProofTask & { readonly errors: readonly string[] })
  | { readonly why: string };

const BOOT = `
const { workerData, parentPort } = require("node:worker_threads");
// A worker proves one call after another: allocation sites that compiling rank 0's plan (whose
// steps all live on) taught to allocate in the old generation kept doing so for the steps of
// every other rank, which die at once (one share of a call at 16,384 ranks went from 0.43 to
// 1.5 us a step, a third of it in the kernel). Measured no slower at 1,024 ranks without it.
require("node:v8").setFlagsFromString("--no-allocation-site-pretenuring");
(async () => {
  try {
    if (workerData.tsx) (await import(workerData.tsx)).register();
    const mod = await import(workerData.url);
    let take;
    parentPort.on("message", (t) => take(t));
    await mod.proofWorker(workerData.src, (m) => parentPort.postMessage(m), (f) => { take = f; });
  } catch (e) {
    parentPort.postMessage({ why: String((e && e.message) || e) });
  }
})();
`;

/**
 * Where the proofs of `indices` stand, in their order: the first failing index once every index
 * before it is proved, "done" once all are proved and hold, else undefined (wait).
 */
export function settled(
  indices: readonly number[],
  results: ReadonlyMap<number, readonly string[]>,
): number | "done" | undefined {
  for (const i of indices) {
    const errors = results.get(i);
    if (errors === undefined) return undefined;
    if (errors.length > 0) return i;
  }
  return "done";
}

/** How many proof workers fit at once: half the memory the process may use, at each one's heap cap. */
export function workersThatFit(heapMiB: number): number {
  const limit = Math.min(totalmem(), process.constrainedMemory?.() || Number.POSITIVE_INFINITY);
  return Math.max(1, Math.floor(limit / 2 / ((heapMiB + youngOf(heapMiB)) * 2 ** 20)));
}

const youngOf = (heapMiB: number): number => Math.min(YOUNG_MIB, Math.floor(heapMiB / 4));

/**
 * Proves cases[i] for each i of `indices` in `threads` workers: the first failure in index
 * order, or none; `missing` when a worker cannot find the algorithm or works out another list of
 * calls (the caller proves them itself then).
 */
async function inWorkers(
  src: ProofSource,
  cases: readonly CollectiveCall[],
  indices: readonly number[],
  threads: number,
): Promise<{ missing: boolean; failure?: ProofFailure }> {
  const url = import.meta.url;
  const tsx = /\.(c|m)?ts$/.test(new URL(url).pathname) ? import.meta.resolve("tsx/esm/api") : undefined;
  const results = new Map<number, readonly string[]>();
  const tasks = tasksOf(cases, indices, threads);
  const parts = new Map<number, (readonly string[] | undefined)[]>();
  let next = 0;
  const workers: Worker[] = [];
  const name = `${src.collective}/${src.algorithm}`;
  const callText = (i: number) => {
    const c = cases[i];
    return c ? `the call at n=${c.size}, count=${c.count}${c.inPlace ? ", in place" : ""}` : "no call yet";
  };
  try {
    return await new Promise((resolve, reject) => {
      let over = false;
      const finish = (v: { missing: boolean; failure?: ProofFailure } | Error) => {
        if (over) return;
        over = true;
        if (v instanceof Error) reject(v);
        else resolve(v);
      };
      for (let k = 0; k < threads; k++) {
        const w = new Worker(BOOT, {
          eval: true,
          execArgv: [],
          workerData: { url, tsx, src },
          resourceLimits: { maxOldGenerationSizeMb: src.heapMiB, maxYoungGenerationSizeMb: youngOf(src.heapMiB) },
        });
        workers.push(w);
        // The index this worker is proving, for the message if it dies.
        let proving = -1;
        const give = () => {
          const t = tasks[next++];
          proving = t ? t.index : -1;
          if (t) w.postMessage(t);
        };
        w.on("message", (m: WorkerMessage) => {
          if ("missing" in m) return finish({ missing: true });
          if ("why" in m) return finish(new Error(`verify: a proof worker for ${name} could not start: ${m.why}`));
          if ("ready" in m) return m.ready === cases.length ? give() : finish({ missing: true });
          if (m.part === undefined) results.set(m.index, m.errors);
          else {
            const got = parts.get(m.index) ?? new Array<readonly string[] | undefined>((m.of ?? 0) + 1).fill(undefined);
            got[m.part] = m.errors;
            parts.set(m.index, got);
            const joined = joinParts(got);
            if (joined) results.set(m.index, joined);
          }
          const s = settled(indices, results);
          if (s === "done") return finish({ missing: false });
          if (s !== undefined)
            return finish({
              missing: false,
              failure: { call: cases[s] as CollectiveCall, errors: results.get(s) ?? [] },
            });
          give();
        });
        // A worker that ends without a word (its code called process.exit) must not leave verify waiting.
        w.on("exit", (code) => {
          finish(
            new Error(
              `verify: the worker proving ${name}, ${callText(proving)}, exited (code ${code}) before it finished`,
            ),
          );
        });
        w.on("error", (e: Error & { code?: string }) => {
          finish(
            e.code === "ERR_WORKER_OUT_OF_MEMORY"
              ? new InvalidArgumentError(
                  { op: "verify", arg: "--proof-memory" },
                  `proving ${name}, ${callText(proving)} needs more than ${src.heapMiB} MiB of heap; nothing about it was proved (give it more, --proof-memory MiB, or ask for a smaller -n)`,
                )
              : new Error(`verify: the worker proving ${name}, ${callText(proving)}, failed: ${e.message}`),
          );
        });
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * Proves cases[i] of checkCases(src) for each of `indices` in worker threads, a call past 1,024
 * ranks in shares (the perf script times one call so: test/perf/verify-scale.ts --split).
 */
export async function proveInWorkers(
  src: ProofSource,
  cases: readonly CollectiveCall[],
  indices: readonly number[],
  threads: number = availableParallelism(),
): Promise<{ missing: boolean; failure?: ProofFailure }> {
  const workers = Math.min(threads, tasksOf(cases, indices, threads).length, workersThatFit(src.heapMiB));
  return inWorkers(src, cases, indices, workers);
}

/**
 * Proves the calls checkCases gives for `src` (n = 1..maxN and each of sizes), in that order: the
 * small ones here, then those of WORKER_MIN_RANKS ranks or more in workers, which work the same
 * list out for themselves. `alg` must be the algorithm the workers find from `src` (verify's own:
 * run.ts checks it is the registry's). Returns how many calls there are, the first failure in the
 * list's order, and how many workers proved calls (0: all were proved here). Throws when a worker
 * runs out of its heap or cannot start.
 */
export async function proveCases(
  alg: Algorithm,
  src: ProofSource,
  /** Workers to use at most (default: the machine's cores); 0: none, every call proved here. */
  threads: number = availableParallelism(),
): Promise<{ readonly cases: number; readonly failure?: ProofFailure; readonly workers: number }> {
  const cases = checkCases(alg, src.maxN, src.sizes);
  const big: number[] = [];
  let failure: ProofFailure | undefined;
  for (let i = 0; i < cases.length && !failure; i++) {
    const call = cases[i] as CollectiveCall;
    if (call.size >= WORKER_MIN_RANKS && threads > 0) big.push(i);
    else {
      const errors = checkAlgorithm(alg, call).errors;
      if (errors.length > 0) failure = { call, errors };
    }
  }
  // Calls are in order of n, so every big one comes after every small one.
  if (failure || big.length === 0) return { cases: cases.length, ...(failure ? { failure } : {}), workers: 0 };
  const workers = Math.min(threads, tasksOf(cases, big, threads).length, workersThatFit(src.heapMiB));
  const out = await proveInWorkers(src, cases, big, threads);
  if (!out.missing) return { cases: cases.length, ...(out.failure ? { failure: out.failure } : {}), workers };
  // The workers could not find it (a program registered it itself): proved here.
  for (const i of big) {
    const call = cases[i] as CollectiveCall;
    const errors = checkAlgorithm(alg, call).errors;
    if (errors.length > 0) return { cases: cases.length, failure: { call, errors }, workers: 0 };
  }
  return { cases: cases.length, workers: 0 };
}
