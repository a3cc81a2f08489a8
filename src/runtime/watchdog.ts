/**
 * A rank never outlives the job that started it. A worker thread (so it runs while the rank's main
 * thread computes, or blocks in MPI_Init or MPI_Finalize) checks every 200 ms that the processes
 * this rank depends on are still there: its parent (mpirun's daemon, or cclab run itself) and the
 * cclab launcher. When one is gone (exited, killed -9, a zombie, or its pid now names another
 * process) the rank SIGKILLs itself; when the launcher has been stopped (SIGSTOP, Ctrl-Z) for
 * longer than the job's timeout, too. It only ever signals this process, never a pid it read.
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

// Runs in the worker (plain JavaScript, CommonJS: no loader needed there).
const WATCHDOG = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
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
  for (const w of state) {
    const s = procFs ? stat(w.pid) : null;
    if (!alive(w.pid) || (procFs && (!s || s.state === "Z" || (w.start !== undefined && s.start !== w.start)))) {
      return die(w.what + " (pid " + w.pid + ") is gone");
    }
    if (s && (s.state === "T" || s.state === "t")) {
      w.stoppedAt ||= now;
      if (now - w.stoppedAt > stoppedMs) {
        return die(w.what + " (pid " + w.pid + ") has been stopped for " + Math.round((now - w.stoppedAt) / 1000) + " s, past the job's timeout");
      }
    } else w.stoppedAt = 0;
  }
}, intervalMs);
`;

let started: Worker | null = null;

/** Starts the watchdog once per process; it never keeps the process alive. */
export function startWatchdog(o: WatchdogOptions): void {
  const watched = o.watched.filter((w) => Number.isInteger(w.pid) && w.pid > 1 && w.pid !== process.pid);
  if (started || watched.length === 0) return;
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
