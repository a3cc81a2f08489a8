/**
 * Where a slow small call's time goes (issue 26): every call of a bench-like loop timed on its
 * own, and for each call that took over 5x the median, which wait it was in (event-loop turns,
 * turns that slept between tests, turns without a completion, the longest gap between two turns of the fast
 * path; progress.ts's loopStats) and whether a garbage collection ran during it (PerformanceObserver 'gc'). The loop is
 * bench's: rounds of back-to-back calls after MPI_Barrier, the call through invoke() as bench
 * makes it. Each rank prints its own summary (a stall seen on one rank only is a peer's).
 * Not a test: run it by hand and say the load with it.
 *   mpirun -np 2 node --import tsx test/perf/stalls.ts [algorithm = ring] [bytes = 1024] [calls = 2000] [rounds = 10] [warm-up calls = 500]
 * Add --trace-gc (or --trace-opt --trace-deopt) after `node`, and STALLS_MARK=1 for a line after
 * each call over 1 ms, to see which of V8's lines fell inside a slow call.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { initMpi } from "../../src/backends/mpi/index.js";
import { loopStats as w } from "../../src/backends/mpi/progress.js";
import { allReduceCall } from "./allreduce-call.js";

const comm = await initMpi();
const algName = process.argv[2] ?? "ring";
const bytes = Number(process.argv[3] ?? 1024);
const calls = Number(process.argv[4] ?? 2000);
const rounds = Number(process.argv[5] ?? 10);
const warmup = Number(process.argv[6] ?? 500);
const alg = allReduceCall(comm, bytes, "stalls").hand(algName);
if (!comm.planRunner) throw new Error("stalls: this MPI comm offers no fast path");
const mark = process.env.STALLS_MARK === "1";

const gcs: { start: number; end: number; kind: number }[] = [];
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcs.push({
      start: e.startTime,
      end: e.startTime + e.duration,
      kind: (e as { detail?: { kind?: number } }).detail?.kind ?? 0,
    });
  }
});
obs.observe({ entryTypes: ["gc"] });

const start = new Float64Array(calls);
const end = new Float64Array(calls);
const turns = new Int32Array(calls);
const slept = new Int32Array(calls);
const empty = new Int32Array(calls);
const gap = new Float64Array(calls);

/**
 * Calls `from` to `to` - 1, each timed and its waits counted. A function, warmed up exactly as it
 * is timed (as bench's timeEach): a loop in the module's body was compiled, and thrown away,
 * inside the timed calls.
 */
async function timeCalls(from: number, to: number, marking: boolean): Promise<void> {
  for (let i = from; i < to; i++) {
    const t0 = w.turns;
    const m0 = w.sleeping;
    const e0 = w.empty;
    w.maxGapMs = 0;
    start[i] = performance.now();
    await alg.run();
    end[i] = performance.now();
    turns[i] = w.turns - t0;
    slept[i] = w.sleeping - m0;
    empty[i] = w.empty - e0;
    gap[i] = w.maxGapMs;
    // STALLS_MARK=1: a line after each call over 1 ms, so V8's --trace-* lines before it fell inside it.
    const took = (end[i] as number) - (start[i] as number);
    if (marking && took > 1) console.log(`== rank ${comm.rank} call ${i} took ${(took * 1000).toFixed(0)} us`);
  }
}

const per = Math.ceil(calls / rounds);
// Warm-up through the same rounds (their slots are overwritten by the timed calls).
for (let done = 0; done < warmup; done += per) {
  comm.builtin.barrier();
  await timeCalls(0, Math.min(per, warmup - done), false);
}
for (let i = 0; i < calls; i += per) {
  comm.builtin.barrier();
  await timeCalls(i, Math.min(calls, i + per), mark);
}
// Let the observer deliver the last entries.
await new Promise((r) => setTimeout(r, 50));
obs.disconnect();

const us = Array.from(end, (e, k) => (e - (start[k] as number)) * 1000);
const sorted = [...us].sort((a, b) => a - b);
const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
const median = q(0.5);
const mean = us.reduce((a, b) => a + b, 0) / us.length;
const lines: string[] = [];
const slow = us
  .map((t, k) => [t, k] as const)
  .filter(([t]) => t > 5 * median)
  .sort((a, b) => b[0] - a[0]);
let withSleep = 0;
let withGc = 0;
let gcUs = 0;
for (const [t, k] of slow) {
  const s = start[k] as number;
  const e = end[k] as number;
  const gc = gcs.filter((g) => g.end > s && g.start < e);
  if ((slept[k] as number) > 0) withSleep++;
  if (gc.length) withGc++;
  gcUs += gc.reduce((a, g) => a + (Math.min(e, g.end) - Math.max(s, g.start)) * 1000, 0);
  if (lines.length < 12)
    lines.push(
      `  call ${k}: ${t.toFixed(0)} us; turns ${turns[k]}, of them sleeping ${slept[k]}, without a completion ${empty[k]}, longest gap between turns ${((gap[k] as number) * 1000).toFixed(0)} us${gc.length ? `; gc ${gc.map((g) => `kind ${g.kind} ${((g.end - g.start) * 1000).toFixed(0)} us`).join(", ")}` : ""}`,
    );
}
const slowTotal = slow.reduce((a, [t]) => a + t, 0);
const allGcs = gcs.filter((g) => g.end > (start[0] as number) && g.start < (end[calls - 1] as number));
console.log(
  `rank ${comm.rank}: ${alg.name} ${bytes} B, ${calls} calls: min ${q(0).toFixed(1)} median ${median.toFixed(1)} p99 ${q(0.99).toFixed(1)} max ${q(1).toFixed(0)} mean ${mean.toFixed(1)} us (mean/median ${(mean / median).toFixed(2)}); ` +
    `${slow.length} calls over 5x the median, ${((100 * slowTotal) / us.reduce((a, b) => a + b, 0)).toFixed(0)}% of the time; of them ${withSleep} slept in a wait, ${withGc} overlapped a gc (${gcUs.toFixed(0)} us of gc inside them; ${allGcs.length} gcs in the whole loop)\n${lines.join("\n")}`,
);
comm.destroy();
