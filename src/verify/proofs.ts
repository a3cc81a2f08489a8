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
  post: (m: unknown) => void,
  on: (f: (i: number) => void) => void,
): Promise<void> {
  let alg: Algorithm | undefined;
  try {
    const found = (await selectAlgorithms({ ...src, algorithmFile: src.algorithmFile })).find(
      (a) => a.collective === src.collective && a.name === src.algorithm,
    );
    alg = found && src.shape ? withShape(found, src.shape, { op: "verify", arg: "--topology" }) : found;
  } catch {
    alg = undefined;
  }
  if (!alg) {
    post({ loaded: false });
    return;
  }
  const cases = checkCases(alg, src.maxN, src.sizes);
  const a = alg;
  on((i) => post({ index: i, errors: checkAlgorithm(a, cases[i] as CollectiveCall).errors }));
  post({ loaded: true });
}

const BOOT = `
const { workerData, parentPort } = require("node:worker_threads");
(async () => {
  try {
    if (workerData.tsx) (await import(workerData.tsx)).register();
    const mod = await import(workerData.url);
    let take;
    parentPort.on("message", (i) => take(i));
    await mod.proofWorker(workerData.src, (m) => parentPort.postMessage(m), (f) => { take = f; });
  } catch (e) {
    parentPort.postMessage({ loaded: false, why: String(e && e.message || e) });
  }
})();
`;

/**
 * Proves cases[i] for each i of `indices` in workers; returns the first failure in index order,
 * or undefined. Resolves `undefined` for `loaded: false` too: see `proved`.
 */
async function inWorkers(
  src: ProofSource,
  cases: readonly CollectiveCall[],
  indices: readonly number[],
  threads: number,
): Promise<{ loaded: boolean; failure?: ProofFailure }> {
  const url = import.meta.url;
  const tsx = /\.(c|m)?ts$/.test(new URL(url).pathname) ? import.meta.resolve("tsx/esm/api") : undefined;
  const results = new Map<number, readonly string[]>();
  let next = 0;
  const workers: Worker[] = [];
  try {
    return await new Promise((resolve, reject) => {
      let settled = false;
      const finish = (v: { loaded: boolean; failure?: ProofFailure } | Error) => {
        if (settled) return;
        settled = true;
        if (v instanceof Error) reject(v);
        else resolve(v);
      };
      /** Done when every index is proved, or when every index before a failing one is. */
      const check = () => {
        for (const i of indices) {
          const errors = results.get(i);
          if (errors === undefined) return;
          if (errors.length > 0) return finish({ loaded: true, failure: { call: cases[i] as CollectiveCall, errors } });
        }
        finish({ loaded: true });
      };
      const give = (w: Worker) => {
        if (next < indices.length) w.postMessage(indices[next++]);
      };
      for (let k = 0; k < threads; k++) {
        const w = new Worker(BOOT, {
          eval: true,
          execArgv: [],
          workerData: { url, tsx, src },
          resourceLimits: {
            maxOldGenerationSizeMb: src.heapMiB,
            maxYoungGenerationSizeMb: Math.min(YOUNG_MIB, Math.floor(src.heapMiB / 4)),
          },
        });
        workers.push(w);
        // The index a worker is proving, for the message if it dies.
        let proving = -1;
        const send = () => {
          proving = next < indices.length ? (indices[next] as number) : -1;
          give(w);
        };
        w.on("message", (m: { loaded?: boolean; index?: number; errors?: string[] }) => {
          if (m.loaded === false) return finish({ loaded: false });
          if (m.loaded === true) return send();
          results.set(m.index as number, m.errors as string[]);
          check();
          send();
        });
        // A worker that ends without a word (its code called process.exit) must not leave verify waiting.
        w.on("exit", (code) => {
          finish(
            new Error(
              `verify: the worker proving ${src.collective}/${src.algorithm} exited (code ${code}) before it finished`,
            ),
          );
        });
        w.on("error", (e: Error & { code?: string }) => {
          const c = cases[proving];
          const what = c ? `the call at n=${c.size}, count=${c.count}${c.inPlace ? ", in place" : ""}` : "a call";
          finish(
            e.code === "ERR_WORKER_OUT_OF_MEMORY"
              ? new InvalidArgumentError(
                  { op: "verify", arg: "--proof-memory" },
                  `proving ${src.collective}/${src.algorithm}, ${what} needs more than ${src.heapMiB} MiB of heap; nothing about it was proved (give it more, --proof-memory MiB, or ask for a smaller -n)`,
                )
              : new Error(
                  `verify: the worker proving ${src.collective}/${src.algorithm}, ${what} failed: ${e.message}`,
                ),
          );
        });
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * Proves the calls checkCases gives for `src` (n = 1..maxN and each of sizes), in that order: the
 * small ones here, then those of WORKER_MIN_RANKS ranks or more in workers, which work the same
 * list out for themselves. Returns how many calls there are and the first failure in the list's
 * order. Throws when a worker runs out of its heap.
 */
export async function proveCases(
  alg: Algorithm,
  src: ProofSource,
  /** Workers to use (default: the machine's cores); 0: none, every call proved here. */
  threads: number = availableParallelism(),
): Promise<{ readonly cases: number; readonly failure?: ProofFailure }> {
  const cases = checkCases(alg, src.maxN, src.sizes);
  const failure = await proveEach(alg, src, cases, threads);
  return failure ? { cases: cases.length, failure } : { cases: cases.length };
}

async function proveEach(
  alg: Algorithm,
  src: ProofSource,
  cases: readonly CollectiveCall[],
  threads: number,
): Promise<ProofFailure | undefined> {
  const big: number[] = [];
  for (let i = 0; i < cases.length; i++) {
    const call = cases[i] as CollectiveCall;
    if (call.size >= WORKER_MIN_RANKS && threads > 0) {
      big.push(i);
      continue;
    }
    const errors = checkAlgorithm(alg, call).errors;
    if (errors.length > 0) return { call, errors };
  }
  if (big.length === 0) return undefined;
  // Workers at their heap's cap must fit in half the machine's memory together.
  const fit = Math.max(1, Math.floor(totalmem() / 2 / (src.heapMiB * 2 ** 20)));
  const out = await inWorkers(src, cases, big, Math.min(threads, big.length, fit));
  if (out.loaded) return out.failure;
  // The worker could not find the algorithm (the caller registered it): proved here.
  for (const i of big) {
    const call = cases[i] as CollectiveCall;
    const errors = checkAlgorithm(alg, call).errors;
    if (errors.length > 0) return { call, errors };
  }
  return undefined;
}
