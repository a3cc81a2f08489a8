/**
 * A user's schedule(), bounded. An algorithm file is code cclab runs inside every tool (verify,
 * explain, trace, model, export, bench): a schedule() that never returns, builds millions of
 * operations in one step, throws or overflows the stack must end as an error that names the file,
 * the algorithm, the call and the bound, never as a hang or a crash of the tool.
 *
 * Tools call schedule() synchronously, deep inside planning, so the bound is a rehearsal: before
 * a call is planned for the first time, the same call runs in a worker thread with a deadline and
 * a heap limit, counting steps and operations as they come; only once it passed there does the
 * tool run it itself (schedules are pure functions of the call, so it passes here too). The tool's
 * thread waits for the verdict with Atomics.wait. A supervisor thread owns the worker: it starts
 * the deadline once the worker has loaded the file, terminates a worker past it, and sees the
 * worker die of its heap limit (the waiting thread cannot see events).
 *
 * The deadline counts the rehearsal thread's own CPU time (Linux: /proc/self/task/<tid>/stat),
 * not the wall clock: a call of milliseconds once missed a ten-second wall bound on a machine
 * loaded to eleven runnable threads on two cores, where a loop that never ends still spends its
 * seconds of CPU. Where the thread's time cannot be read, and as a backstop, the wall clock
 * bounds it at WALL_FACTOR times the seconds.
 */
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { InvalidArgumentError } from "../core/errors.js";
import type { Algorithm, Memory } from "../schedule/dsl.js";
import { ScheduleError } from "../schedule/plan.js";
import type { RankCall } from "../specs/types.js";

/** Past this many times the CPU bound in wall time, a rehearsal is stopped whatever its CPU time. */
export const WALL_FACTOR = 6;

/** The bounds on one schedule() call of a user's algorithm, stated plainly. */
export const SCHEDULE_BOUNDS = {
  /** CPU seconds one call may take (CCLAB_SCHEDULE_TIMEOUT). */
  seconds: 10,
  /** Operations (transfers and local ops) over all its steps (CCLAB_SCHEDULE_MAX_OPS). */
  ops: 4_000_000,
  /** Steps (plan.ts stops at a million too). */
  steps: 1_000_000,
  /** The rehearsal's heap, in MB (CCLAB_SCHEDULE_HEAP_MB). */
  heapMb: 1024,
} as const;

export interface ScheduleBounds {
  readonly seconds: number;
  readonly ops: number;
  readonly steps: number;
  readonly heapMb: number;
}

export function scheduleBounds(env: NodeJS.ProcessEnv = process.env): ScheduleBounds {
  const num = (name: string, fallback: number) => {
    const v = env[name];
    if (v === undefined || v === "") return fallback;
    const n = Number(v);
    if (!/^\d+(\.\d+)?$/.test(v) || !(n > 0)) {
      throw new InvalidArgumentError(
        { op: "schedule", arg: name },
        `must be a positive number, got ${JSON.stringify(v)}`,
      );
    }
    return n;
  };
  return {
    seconds: num("CCLAB_SCHEDULE_TIMEOUT", SCHEDULE_BOUNDS.seconds),
    ops: num("CCLAB_SCHEDULE_MAX_OPS", SCHEDULE_BOUNDS.ops),
    steps: SCHEDULE_BOUNDS.steps,
    heapMb: num("CCLAB_SCHEDULE_HEAP_MB", SCHEDULE_BOUNDS.heapMb),
  };
}

// The rehearsal: loads the file (through tsx where it is TypeScript), then runs each call it is
// sent, counting steps and operations as the schedule yields them.
const REHEARSAL = `
const { workerData, parentPort } = require("node:worker_threads");
(async () => {
  try {
    if (workerData.tsx) (await import(workerData.tsx)).register();
    const mod = await import(workerData.url);
    let tid = null;
    try { tid = Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop()); } catch {}
    parentPort.postMessage({ ready: true, tid: Number.isInteger(tid) && tid > 0 ? tid : null });
    parentPort.on("message", ({ id, name, call, input, output, steps: maxSteps, ops: maxOps }) => {
      let steps = 0;
      let ops = 0;
      let next = 0;
      const scratch = (count) => {
        const r = { buf: "scratch", offset: next, count };
        next += Number(count) || 0;
        return r;
      };
      try {
        for (const s of mod[name].schedule(call, { input, output, scratch })) {
          steps++;
          ops += (s && s.transfers ? s.transfers.length : 0) + (s && s.local ? s.local.length : 0);
          if (steps > maxSteps) return parentPort.postMessage({ id, bound: "more than " + maxSteps + " steps" });
          if (ops > maxOps) return parentPort.postMessage({ id, bound: "more than " + maxOps + " operations (by step " + steps + ")" });
        }
        parentPort.postMessage({ id, ok: true });
      } catch (e) {
        const stack = e instanceof RangeError && /call stack/.test(e.message);
        parentPort.postMessage({ id, threw: (e && e.name ? e.name + ": " : "") + (e && e.message !== undefined ? e.message : String(e)), stack });
      }
    });
  } catch (e) {
    parentPort.postMessage({ loadError: String(e && e.message || e) });
  }
})();
`;

// The supervisor: owns the rehearsal worker, its deadline and its death, and hands each verdict
// to the waiting thread through the shared buffer: [state, length, utf-8 text...].
const SUPERVISOR = `
const { workerData, parentPort, Worker } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
const { sab, boot, rehearsal, heapMb, wallFactor } = workerData;
// The rehearsal thread's CPU seconds (utime + stime, fields 14 and 15 of its stat, after the
// command's parenthesis), or null where they cannot be read.
const TICKS = 100;
let tid = null;
function cpuSeconds() {
  if (tid === null) return null;
  try {
    const s = readFileSync("/proc/self/task/" + tid + "/stat", "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch { return null; }
}
const state = new Int32Array(sab, 0, 2);
const text = new Uint8Array(sab, 8);
let worker = null;
let ready = null;
let current = null;
function settle(code, message) {
  if (!current) return;
  clearInterval(current.timer);
  current = null;
  const b = Buffer.from(message || "", "utf8").subarray(0, text.length);
  text.set(b);
  state[1] = b.length;
  Atomics.store(state, 0, code);
  Atomics.notify(state, 0);
}
function start() {
  worker = new Worker(rehearsal, { eval: true, workerData: boot, execArgv: [], stdout: true, stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: heapMb } });
  worker.unref();
  const w = worker;
  ready = new Promise((resolve) => {
    w.on("message", (m) => {
      if (m.ready) { tid = m.tid; return resolve(true); }
      if (m.loadError !== undefined) { resolve(false); return settle(7, m.loadError); }
      if (!current || m.id !== current.id) return;
      if (m.ok) return settle(1, "");
      if (m.bound) return settle(3, m.bound);
      settle(m.stack ? 5 : 2, m.threw);
    });
  });
  w.on("error", (e) => {
    if (worker === w) worker = null;
    const oom = e && e.code === "ERR_WORKER_OUT_OF_MEMORY";
    settle(oom ? 4 : 2, oom ? "ran out of its " + heapMb + " MB heap" : String(e && e.message || e));
  });
  w.on("exit", () => {
    if (worker === w) worker = null;
    settle(2, "the rehearsal worker exited");
  });
}
parentPort.on("message", async (m) => {
  if (!worker) start();
  const w = worker;
  current = { id: m.id, timer: null };
  const me = current;
  if (!(await ready) || current !== me) return;
  const cpu0 = cpuSeconds();
  const wall0 = Date.now();
  me.timer = setInterval(() => {
    const cpu = cpu0 === null ? null : cpuSeconds();
    const over = cpu === null ? Date.now() - wall0 >= m.seconds * 1000 : cpu - cpu0 >= m.seconds;
    if (!over && Date.now() - wall0 < m.seconds * 1000 * wallFactor) return;
    if (worker === w) worker = null;
    w.terminate();
    settle(6, over ? "did not return within " + m.seconds + " s" + (cpu === null ? "" : " of CPU time") : "did not return within " + m.seconds * wallFactor + " s of wall time");
  }, Math.min(250, m.seconds * 100));
  w.postMessage(m.request);
});
`;

/** What a verdict's state means (0: none yet). */
const VERDICT = { ok: 1, threw: 2, bound: 3, heap: 4, stack: 5, time: 6, load: 7 } as const;

/** One supervisor per algorithm file (and heap limit), started on the first rehearsal. */
class Rehearsal {
  private readonly sab = new SharedArrayBuffer(8 + 4096);
  private readonly state = new Int32Array(this.sab, 0, 2);
  private supervisor: Worker | null = null;
  private nextId = 1;
  constructor(
    private readonly file: string,
    private readonly heapMb: number,
  ) {}

  private start(): Worker {
    const ts = /\.(c|m)?tsx?$/i.test(this.file);
    const boot = { url: pathToFileURL(this.file).href, tsx: ts ? import.meta.resolve("tsx/esm/api") : undefined };
    const w = new Worker(SUPERVISOR, {
      eval: true,
      execArgv: [],
      workerData: { sab: this.sab, boot, rehearsal: REHEARSAL, heapMb: this.heapMb, wallFactor: WALL_FACTOR },
    });
    w.unref();
    w.on("error", () => {});
    return w;
  }

  /** Runs the call in the rehearsal; returns null when it passed, else what went wrong (and how). */
  run(name: string, call: RankCall, mem: Memory, b: ScheduleBounds): { code: number; what: string } | null {
    this.supervisor ??= this.start();
    Atomics.store(this.state, 0, 0);
    const id = this.nextId++;
    const request = {
      id,
      name,
      call,
      input: mem.input,
      output: mem.output,
      steps: b.steps,
      ops: b.ops,
    };
    this.supervisor.postMessage({ id, seconds: b.seconds, request });
    // Loading the file (tsx, its imports) is not the schedule's time: allow a minute for it.
    const waited = Atomics.wait(this.state, 0, 0, b.seconds * 1000 * WALL_FACTOR + 60_000);
    const code = Atomics.load(this.state, 0);
    if (waited === "timed-out" || code === 0) {
      void this.supervisor.terminate();
      this.supervisor = null;
      return { code: VERDICT.time, what: `did not return within ${b.seconds} s` };
    }
    if (code === VERDICT.ok) return null;
    const what = Buffer.from(new Uint8Array(this.sab, 8, this.state[1])).toString("utf8");
    return { code, what };
  }
}

const rehearsals = new Map<string, Rehearsal>();

/**
 * The algorithm with its schedule() bounded: each distinct call is rehearsed once (above) before
 * it runs here; a call that breaks a bound throws an error naming the file, the algorithm, the
 * call and the bound. `exportName` is how the file exports it.
 */
export function boundedAlgorithm(
  alg: Algorithm,
  file: string,
  exportName: string,
  bounds = scheduleBounds(),
): Algorithm {
  const passed = new Set<string>();
  const schedule = alg.schedule;
  return {
    ...alg,
    schedule(c: RankCall, mem: Memory) {
      const key = JSON.stringify([c, mem.input, mem.output]);
      if (!passed.has(key)) {
        const at = `${bounds.heapMb} ${file}`;
        let r = rehearsals.get(at);
        if (!r) rehearsals.set(at, (r = new Rehearsal(file, bounds.heapMb)));
        const failed = r.run(exportName, c, mem, bounds);
        // A ScheduleError: verify reports it in the algorithm's row, as any other broken schedule.
        if (failed) throw new ScheduleError(scheduleFailure(file, alg, c, failed, bounds));
        passed.add(key);
      }
      return schedule.call(alg, c, mem);
    },
  };
}

function scheduleFailure(
  file: string,
  alg: Algorithm,
  c: RankCall,
  failed: { code: number; what: string },
  b: ScheduleBounds,
): string {
  const where = `${file}: algorithm ${alg.collective}/${alg.name}: schedule() at n = ${c.size}, rank ${c.rank}, count ${c.count}`;
  switch (failed.code) {
    case VERDICT.time:
      return `${where} ${failed.what} (the bound on one call; CCLAB_SCHEDULE_TIMEOUT=<seconds> raises it): a loop that never ends?`;
    case VERDICT.bound:
      return `${where} made ${failed.what}, past the bound of ${b.ops} operations and ${b.steps} steps (CCLAB_SCHEDULE_MAX_OPS raises the first)`;
    case VERDICT.heap:
      return `${where} ${failed.what} before it returned (CCLAB_SCHEDULE_HEAP_MB raises it): millions of operations in one step?`;
    case VERDICT.load:
      return `${file} could not be loaded in the worker that bounds schedule(): ${failed.what}`;
    case VERDICT.stack:
      return `${where} overflowed the stack (${failed.what}): a recursion that never ends?`;
    default:
      return `${where} threw ${failed.what}`;
  }
}
