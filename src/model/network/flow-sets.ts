/**
 * Independent sets of flows, each solved to its end on a FlowNet of its own: the phases engine's
 * distinct rounds (phases.ts). Where there are several and they are large, worker threads take
 * them in turn beside the calling thread, one set at a time; each set is solved by the same code
 * alone, so the answers are those of solving them one by one. The calling thread waits with
 * Atomics.wait, so the model's API stays synchronous (as user-schedule.ts waits for its
 * rehearsal). A worker that cannot load leaves its share to the others; one whose set throws
 * hands the error back, and the other threads stop taking sets; a supervisor thread owns the
 * workers and reports one that dies (out of memory, say), which the waiting thread cannot see;
 * and a worker that stops beating for STALL_SECONDS is reported, not waited for.
 *
 * A set is flat arrays (shared memory where threads solve it): per flow its bytes, the time it
 * starts carrying bytes (its route's latency), a tag its end is kept under, and its path.
 */

import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { invariant } from "../../core/assert.js";
import { FlowNet, SolveBudget, SolveWorkExceeded, type WorkMeter } from "./flows.js";
import { THRESHOLDS } from "./policy.js";

export interface FlowSet {
  /** Per flow: bytes, start (µs), tag (0..tags-1), and its links links[pathStart[i] .. pathStart[i+1]-1]. */
  readonly bytes: Float64Array;
  readonly from: Float64Array;
  readonly tag: Int32Array;
  readonly pathStart: Int32Array;
  readonly links: Int32Array;
  readonly tags: number;
}

export interface SolvedSet {
  /** Per tag, when its last flow ended (0: no flow). */
  readonly ends: Float64Array;
  /** The links the set's flows cross (ascending: usedLinks), and the bytes each carried (linkBytes[k] on links[k]). */
  readonly links: Int32Array;
  readonly linkBytes: Float64Array;
  /** Times rates were solved, and the link crossings they scanned. */
  readonly solves: number;
  readonly work: number;
  /** The thread that solved it: 0 the calling one, k >= 1 worker k. */
  readonly thread: number;
}

/** Below this many flows in all, threads cost more to start than they save. */
export const PARALLEL_MIN_FLOWS = THRESHOLDS.PARALLEL_MIN_FLOWS.value;

/** Worker threads that neither finish a set nor beat for this long have stopped: the call fails, saying so. */
const STALL_SECONDS = 120;

/** FlowNet events taken between two heartbeats of a worker. */
const BEAT_EVERY = 1024;

/** The links a set's flows cross, ascending, each once. */
export function usedLinks(set: FlowSet): Int32Array {
  const seen = new Set<number>();
  for (const l of set.links) seen.add(l);
  return Int32Array.from(seen).sort();
}

/**
 * Solves one set (into `ends` and `linkBytes` when given); `beat` is called every BEAT_EVERY
 * events, and `meter` each solve's work. The set is solved on its own links only, renumbered in their order (so every
 * comparison of link ids goes as on the whole network's): a FlowNet's per-link state is then the
 * size of the links the round uses, not of the network, which for thousands of small rounds on a
 * network of thousands of links (a 32 B ring on torus:64x64) is what the time and memory went to.
 */
export function solveSet(
  bandwidth: Float64Array,
  set: FlowSet,
  out?: { ends: Float64Array; linkBytes: Float64Array },
  beat?: () => void,
  links = usedLinks(set),
  meter?: WorkMeter,
): SolvedSet {
  const local = new Map<number, number>();
  const bw = new Float64Array(links.length);
  for (let k = 0; k < links.length; k++) {
    const l = links[k] as number;
    invariant(l >= 0 && l < bandwidth.length, () => `flow set: a flow crosses link ${l} of ${bandwidth.length}`);
    local.set(l, k);
    bw[k] = bandwidth[l] as number;
  }
  const path = new Int32Array(set.links.length);
  for (let i = 0; i < path.length; i++) path[i] = local.get(set.links[i] as number) as number;
  const net = new FlowNet(bw, undefined, {}, meter);
  const ends = out?.ends ?? new Float64Array(set.tags);
  const flows = set.bytes.length;
  for (let i = 0; i < flows; i++) {
    net.add(
      set.bytes[i] as number,
      path.subarray(set.pathStart[i] as number, set.pathStart[i + 1] as number),
      set.from[i] as number,
      set.tag[i] as number,
    );
  }
  const done = (tag: number) => {
    if (net.now > (ends[tag] as number)) ends[tag] = net.now;
  };
  try {
    for (let k = 1; net.inFlight > 0; k++) {
      net.take(done);
      if (beat && k % BEAT_EVERY === 0) beat();
    }
  } catch (e) {
    if (e instanceof SolveWorkExceeded)
      throw new SolveWorkExceeded(e.limit, {
        count: flows - net.inFlight,
        of: flows,
        what: "flows of its one round finished, a flow per message path",
      });
    throw e;
  }
  const linkBytes = out?.linkBytes ?? net.linkBytes;
  if (out) linkBytes.set(net.linkBytes);
  return { ends, links, linkBytes, solves: net.solves, work: net.work, thread: 0 };
}

// The shared control words. FAILED: 0, 1 (an error being written), 2 (written: the caller throws it).
const NEXT = 0;
const DONE = 1;
const FAILED = 2;
const BEAT = 3;
const NOT_LOADED = 4;
const ERR_LEN = 5;
const CONTROL = 6;
const ERR_BYTES = 4096;

interface Shared {
  readonly control: SharedArrayBuffer;
  readonly error: SharedArrayBuffer;
  readonly bandwidth: Float64Array;
  readonly sets: readonly FlowSet[];
  readonly ends: readonly Float64Array[];
  /** Per set, the links it uses (usedLinks) and the bytes each carried. */
  readonly links: readonly Int32Array[];
  readonly linkBytes: readonly Float64Array[];
  readonly solves: Int32Array;
  readonly setWork: Float64Array;
  /** Per set, the thread that solved it. */
  readonly thread: Int32Array;
  /** The work the call's solves did (every thread's, and any before these sets), and the most they may do. */
  readonly work: BigInt64Array;
  readonly workLimit: number;
}

/** A meter shared by the threads: each charges the one counter. */
function sharedMeter(s: Shared): WorkMeter {
  const limit = BigInt(Math.floor(s.workLimit));
  return {
    charge(work: number) {
      const w = BigInt(work);
      if (Atomics.add(s.work, 0, w) + w > limit) throw new SolveWorkExceeded(s.workLimit);
    },
  };
}

function sharedCopy<T extends Float64Array | Int32Array>(a: T): T {
  const b = new (a.constructor as new (buf: SharedArrayBuffer) => T)(
    new SharedArrayBuffer(Math.max(a.byteLength, 8)),
  ).subarray(0, a.length) as T;
  b.set(a);
  return b;
}

/** Takes sets in turn until none is left (every thread, the calling one too: thread 0). */
function takeSets(s: Shared, thread: number, onDone?: () => void): void {
  const control = new Int32Array(s.control);
  const beat = () => Atomics.add(control, BEAT, 1);
  const meter = sharedMeter(s);
  for (;;) {
    if (Atomics.load(control, FAILED) !== 0) return;
    const j = Atomics.add(control, NEXT, 1);
    if (j >= s.sets.length) return;
    const r = solveSet(
      s.bandwidth,
      s.sets[j] as FlowSet,
      { ends: s.ends[j] as Float64Array, linkBytes: s.linkBytes[j] as Float64Array },
      beat,
      s.links[j] as Int32Array,
      meter,
    );
    Atomics.store(s.solves, j, r.solves);
    // Read by the calling thread after DONE, which the Atomics.add below orders after this.
    s.setWork[j] = r.work;
    Atomics.store(s.thread, j, thread);
    Atomics.add(control, DONE, 1);
    Atomics.notify(control, DONE);
    onDone?.();
  }
}

/** The first error of any thread, written once for the calling thread to throw (FAIL in SUPERVISOR is the same). */
function fail(s: Shared, text: string): void {
  const control = new Int32Array(s.control);
  if (Atomics.compareExchange(control, FAILED, 0, 1) !== 0) return;
  const bytes = Buffer.from(text, "utf8").subarray(0, ERR_BYTES);
  new Uint8Array(s.error).set(bytes);
  Atomics.store(control, ERR_LEN, bytes.length);
  Atomics.store(control, FAILED, 2);
  Atomics.notify(control, DONE);
}

/** A worker's part: its sets, an error handed back (the calling thread throws it). Called by BOOT. */
export function workerTakesSets(s: Shared, thread: number): void {
  try {
    takeSets(s, thread);
  } catch (e) {
    fail(s, `worker ${thread}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  }
}

// A worker loads this module (through tsx where it is TypeScript) and takes sets; one that cannot
// load takes none.
const BOOT = `
const { workerData } = require("node:worker_threads");
(async () => {
  let mod;
  try {
    if (workerData.tsx) (await import(workerData.tsx)).register();
    mod = await import(workerData.url);
  } catch {
    const control = new Int32Array(workerData.shared.control);
    Atomics.add(control, ${NOT_LOADED}, 1);
    Atomics.notify(control, ${DONE});
    return;
  }
  mod.workerTakesSets(workerData.shared, workerData.thread);
})();
`;

// Owns the workers: one that dies (out of memory, an error outside its sets) is an error the
// waiting thread throws at once (it cannot see the worker's events while it waits).
const SUPERVISOR = `
const { workerData, Worker } = require("node:worker_threads");
const { boot, shared, threads } = workerData;
const control = new Int32Array(shared.control);
function fail(text) {
  if (Atomics.compareExchange(control, ${FAILED}, 0, 1) !== 0) return;
  const bytes = Buffer.from(text, "utf8").subarray(0, ${ERR_BYTES});
  new Uint8Array(shared.error).set(bytes);
  Atomics.store(control, ${ERR_LEN}, bytes.length);
  Atomics.store(control, ${FAILED}, 2);
  Atomics.notify(control, ${DONE});
}
for (let k = 1; k < threads; k++) {
  const w = new Worker(${JSON.stringify(BOOT)}, { eval: true, execArgv: [], workerData: { ...boot, shared, thread: k } });
  w.on("error", (e) => fail("worker " + k + " died: " + (e && e.code ? e.code + ": " : "") + (e && e.message ? e.message : String(e))));
  w.on("exit", (code) => { if (code !== 0) fail("worker " + k + " exited with code " + code); });
}
`;

/**
 * Solves every set; in `threads` threads (the calling one and threads - 1 workers; default: the
 * machine's cores) where there are several sets of at least PARALLEL_MIN_FLOWS flows in all.
 * `onDone(done, total)` is told as sets finish. Their solves are charged to the call's `budget`
 * (default: a new one of `workLimit`, else SOLVE_WORK link crossings), across threads; past it
 * they stop with SolveWorkExceeded, saying how far they got.
 */
export function solveSets(
  bandwidth: Float64Array,
  sets: readonly FlowSet[],
  options: {
    readonly threads?: number;
    readonly onDone?: (done: number, total: number) => void;
    /** Tests: threads for fewer flows than PARALLEL_MIN_FLOWS, and the calling thread taking sets only where no worker loads. */
    readonly minFlows?: number;
    readonly callerTakes?: boolean;
    /** Tests: the module a worker loads (one that cannot load leaves every set to the calling thread). */
    readonly moduleUrl?: string;
    readonly workLimit?: number;
    readonly budget?: SolveBudget;
  } = {},
): SolvedSet[] {
  const total = sets.length;
  const budget = options.budget ?? new SolveBudget(options.workLimit ?? THRESHOLDS.SOLVE_WORK.value);
  // Past the budget: with several sets, how many were solved (one set says how far it got itself).
  const stopped = (e: unknown, done: number): unknown =>
    e instanceof SolveWorkExceeded && total > 1
      ? new SolveWorkExceeded(e.limit, { count: done, of: total, what: "distinct rounds solved" })
      : e;
  const flows = sets.reduce((a, s) => a + s.bytes.length, 0);
  const threads = Math.min(total, options.threads ?? availableParallelism());
  if (threads <= 1 || flows < (options.minFlows ?? PARALLEL_MIN_FLOWS)) {
    let k = 0;
    try {
      return sets.map((set) => {
        const r = solveSet(bandwidth, set, undefined, undefined, undefined, budget);
        options.onDone?.(++k, total);
        return r;
      });
    } catch (e) {
      throw stopped(e, k);
    }
  }
  const used = sets.map((set) => sharedCopy(usedLinks(set)));
  const shared: Shared = {
    control: new SharedArrayBuffer(CONTROL * 4),
    error: new SharedArrayBuffer(ERR_BYTES),
    bandwidth: sharedCopy(bandwidth),
    sets: sets.map((s) => ({
      bytes: sharedCopy(s.bytes),
      from: sharedCopy(s.from),
      tag: sharedCopy(s.tag),
      pathStart: sharedCopy(s.pathStart),
      links: sharedCopy(s.links),
      tags: s.tags,
    })),
    ends: sets.map((s) => new Float64Array(new SharedArrayBuffer(Math.max(8, s.tags * 8)), 0, s.tags)),
    links: used,
    linkBytes: used.map((u) => new Float64Array(new SharedArrayBuffer(Math.max(8, u.length * 8)), 0, u.length)),
    solves: new Int32Array(new SharedArrayBuffer(total * 4)),
    setWork: new Float64Array(new SharedArrayBuffer(Math.max(8, total * 8)), 0, total),
    thread: new Int32Array(new SharedArrayBuffer(total * 4)),
    work: new BigInt64Array(new SharedArrayBuffer(8)),
    workLimit: budget.limit,
  };
  shared.work[0] = BigInt(Math.floor(budget.spent));
  const control = new Int32Array(shared.control);
  const url = options.moduleUrl ?? import.meta.url;
  const boot = { url, tsx: /\.(c|m)?ts$/.test(new URL(url).pathname) ? import.meta.resolve("tsx/esm/api") : undefined };
  const workers = threads - 1;
  const supervisor = new Worker(SUPERVISOR, { eval: true, execArgv: [], workerData: { boot, shared, threads } });
  supervisor.unref();
  supervisor.on("error", () => {});
  let told = 0;
  const tell = () => {
    const done = Atomics.load(control, DONE);
    if (done > told) options.onDone?.((told = done), total);
  };
  try {
    if (options.callerTakes !== false) takeSets(shared, 0, tell);
    // The workers' sets still in hand (and, where no worker could load, every set left).
    let lastDone = -1;
    let lastBeat = -1;
    let since = performance.now();
    for (;;) {
      const done = Atomics.load(control, DONE);
      if (Atomics.load(control, FAILED) === 2) {
        // A worker past the budget: the call's refusal, not a failure.
        if (Atomics.load(shared.work, 0) > BigInt(Math.floor(budget.limit))) throw new SolveWorkExceeded(budget.limit);
        const text = Buffer.from(new Uint8Array(shared.error, 0, Atomics.load(control, ERR_LEN))).toString("utf8");
        throw new Error(`network model: a worker thread solving a round failed: ${text}`);
      }
      if (done >= total) break;
      if (Atomics.load(control, NOT_LOADED) === workers) takeSets(shared, 0, tell);
      const beat = Atomics.load(control, BEAT);
      if (done !== lastDone || beat !== lastBeat) {
        if (done !== lastDone) tell();
        lastDone = done;
        lastBeat = beat;
        since = performance.now();
      } else if (performance.now() - since > STALL_SECONDS * 1000) {
        throw new Error(
          `network model: the worker threads solving rounds made no progress for ${STALL_SECONDS} s (${done} of ${total} rounds solved; --threads 1 solves them here)`,
        );
      }
      Atomics.wait(control, DONE, done, 1000);
    }
  } catch (e) {
    throw stopped(e, Atomics.load(control, DONE));
  } finally {
    // Its workers end with it; the call's budget has what every thread spent.
    void supervisor.terminate();
    budget.spent = Number(Atomics.load(shared.work, 0));
  }
  tell();
  invariant(Atomics.load(control, DONE) === total, "solveSets: every set solved");
  return sets.map((_, j) => ({
    ends: shared.ends[j] as Float64Array,
    links: shared.links[j] as Int32Array,
    linkBytes: shared.linkBytes[j] as Float64Array,
    solves: shared.solves[j] as number,
    work: shared.setWork[j] as number,
    thread: shared.thread[j] as number,
  }));
}
