/**
 * A rank never outlives the job that started it. A worker thread (so it runs while the rank's main
 * thread computes, or blocks in MPI_Init or MPI_Finalize) checks every 200 ms that the processes
 * this rank depends on are still there: its parent (mpirun's daemon, or cclab run itself) and the
 * cclab launcher. When one is gone (exited, killed -9, a zombie, or its pid now names another
 * process) the rank SIGKILLs itself; when the launcher has been stopped (SIGSTOP, Ctrl-Z) for
 * longer than the job's timeout, too. It only ever signals this process, never a pid it read.
 *
 * It also bounds calls that block the main thread and cannot be interrupted (MPI_Comm_accept
 * while joining ranks that no mpirun started together): blockingDeadline() arms a deadline before
 * the call and disarms it after; a call still blocked past it ends the rank, saying which call.
 */
import { Worker } from "node:worker_threads";

export interface Watched {
  readonly pid: number;
  /** For the message: 'the launcher (cclab run)', 'the parent process'. */
  readonly what: string;
}

export interface WatchdogOptions {
  /** Who is dying, for the message: 'rank 3'. */
  readonly who: string;
  readonly watched: readonly Watched[];
  /** How long a watched process may stay stopped before this one gives up (Infinity: forever). */
  readonly stoppedMs: number;
  readonly intervalMs?: number;
}

/** The words a rank's watchdog writes when it gives up on a launcher stopped too long (launch-procs.ts looks for them). */
export const STOPPED_PAST_TIMEOUT = "past the job's timeout";

// Runs in the worker (plain JavaScript, CommonJS: no loader needed there).
const WATCHDOG = `
const { workerData, parentPort } = require("node:worker_threads");
const fs = require("node:fs");
let deadline = null;
parentPort.on("message", (m) => {
  deadline = m && typeof m.at === "number" ? m : null;
});
const { who, watched, stoppedMs, intervalMs, self } = workerData;
function stat(pid) {
  try {
    const s = fs.readFileSync("/proc/" + pid + "/stat", "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { state: f[0], start: f[19] };
  } catch {
    return null;
  }
}
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}
const procFs = fs.existsSync("/proc/self/stat");
const state = watched.map((w) => ({ ...w, start: procFs ? stat(w.pid)?.start : undefined, stoppedAt: 0 }));
function die(why) {
  try {
    fs.writeSync(2, "cclab: " + who + ": " + why + "; stopping this rank\\n");
  } catch {}
  process.kill(self, "SIGKILL");
}
setInterval(() => {
  const now = Date.now();
  if (deadline && now > deadline.at) return die(deadline.why);
  for (const w of state) {
    const s = procFs ? stat(w.pid) : null;
    if (!alive(w.pid) || (procFs && (!s || s.state === "Z" || (w.start !== undefined && s.start !== w.start)))) {
      return die(w.what + " (pid " + w.pid + ") is gone");
    }
    if (s && (s.state === "T" || s.state === "t")) {
      w.stoppedAt ||= now;
      if (now - w.stoppedAt > stoppedMs) {
        return die(w.what + " (pid " + w.pid + ") has been stopped for " + Math.round((now - w.stoppedAt) / 1000) + " s, ${STOPPED_PAST_TIMEOUT}");
      }
    } else w.stoppedAt = 0;
  }
}, intervalMs);
`;

let started: Worker | null = null;

/** Starts the watchdog once per process; it never keeps the process alive. */
export function startWatchdog(o: WatchdogOptions): void {
  const watched = o.watched.filter((w) => Number.isInteger(w.pid) && w.pid > 1 && w.pid !== process.pid);
  if (started) return;
  started = new Worker(WATCHDOG, {
    eval: true,
    workerData: {
      who: o.who,
      watched,
      stoppedMs: Number.isFinite(o.stoppedMs) ? o.stoppedMs : Number.MAX_SAFE_INTEGER,
      intervalMs: o.intervalMs ?? 200,
      self: process.pid,
    },
    stdout: false,
    stderr: false,
    resourceLimits: { maxOldGenerationSizeMb: 16 },
    // Plain JavaScript: no loader (tsx) in the watchdog thread.
    execArgv: [],
  });
  started.unref();
  started.on("error", () => {});
}

/**
 * Arms a deadline for a call about to block the main thread (the watchdog thread ends the rank
 * with `why` if it is still blocked after `ms`); returns the disarm. Without a watchdog (init
 * not called), it bounds nothing and says so by returning null.
 */
export function blockingDeadline(ms: number, why: string): (() => void) | null {
  if (!started) return null;
  const w = started;
  const allowed = allowBlocking(ms + 1000);
  w.postMessage({ at: Date.now() + ms, why });
  return () => {
    allowed();
    w.postMessage({ at: null });
  };
}

/** The words a rank's eventLoopBound writes (launch-procs.ts makes them the job's reason). */
export const HELD_THREAD = "its code has kept the main thread for";

/** The shortest time a thread may keep its event loop before eventLoopBound gives up on it (process start-up, MPI_Init). */
export const MIN_BLOCKED_MS = 3000;

/** The heartbeat of this process's eventLoopBound, if one runs (blockingDeadline moves it ahead). */
let heartbeat: BigInt64Array | null = null;

/**
 * Lets the main thread block for up to `ms` in a call that is bounded otherwise (MPI_Init and
 * MPI_Comm_accept while joining, under the join timeout): eventLoopBound waits that long first.
 * Returns the end of the allowance.
 */
export function allowBlocking(ms: number): () => void {
  const h = heartbeat;
  if (!h) return () => {};
  // Whole milliseconds: a fractional --timeout (1.0005 s) makes `ms` fractional, which BigInt refuses.
  Atomics.store(h, 0, BigInt(Date.now() + Math.ceil(Math.max(0, ms))));
  return () => Atomics.store(h, 0, BigInt(Date.now()));
}

// Runs in its own thread: reads the heartbeat the watched thread writes every 200 ms.
const LOOP_WATCH = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { beat, ms, message, self } = workerData;
const last = new BigInt64Array(beat, 0, 1);
const who = new Int32Array(beat, 8, 1);
let prev = Date.now();
let gap = 0;
setInterval(() => {
  const now = Date.now();
  const since = now - Number(Atomics.load(last, 0));
  // This thread did not run either (the process was stopped or descheduled): that time is no block.
  if (now - prev > 1000) gap = Math.max(gap, since);
  prev = now;
  if (since < 1000) gap = 0;
  if (since <= ms + gap) return;
  const rank = Atomics.load(who, 0);
  try {
    fs.writeSync(2, message.replace("{s}", (since / 1000).toFixed(1)).replace("{rank}", rank < 0 ? "a rank" : "rank " + rank) + "\\n");
  } catch {}
  process.kill(self, "SIGKILL");
}, 200);
`;

/**
 * Ends this process when its main thread keeps its event loop for longer than `ms` (at least
 * MIN_BLOCKED_MS): a rank's code that never returns (a schedule() that loops, a busy wait) holds
 * the thread, and no timer of the runtime's guard can fire then, so `--timeout` is enforced from
 * another thread. `message` ('{s}' is replaced by the seconds) is written to stderr first; the
 * process then SIGKILLs itself (no code of the blocked thread can run). '{rank}' in it is replaced
 * by the rank set last with the returned `running` (sim: which rank's code ran last). Returns the stop.
 */
export function eventLoopBound(ms: number, message: string): { stop(): void; running(rank: number): void } {
  const beat = new SharedArrayBuffer(16);
  const last = new BigInt64Array(beat, 0, 1);
  const who = new Int32Array(beat, 8, 1);
  who[0] = -1;
  // A beat never moves an allowance (allowBlocking) back.
  const tick = () => {
    const now = BigInt(Date.now());
    if (Atomics.load(last, 0) < now) Atomics.store(last, 0, now);
  };
  tick();
  heartbeat = last;
  const timer = setInterval(tick, 200);
  timer.unref();
  const w = new Worker(LOOP_WATCH, {
    eval: true,
    workerData: { beat, ms: Math.max(MIN_BLOCKED_MS, ms), message, self: process.pid },
    stdout: false,
    stderr: false,
    resourceLimits: { maxOldGenerationSizeMb: 16 },
    execArgv: [],
  });
  w.unref();
  w.on("error", () => {});
  return {
    stop: () => {
      if (heartbeat === last) heartbeat = null;
      clearInterval(timer);
      void w.terminate();
    },
    running: (rank) => {
      who[0] = rank;
    },
  };
}
