/**
 * Each rank's own call times, not the maximum over ranks bench takes (issue 26, n = 4 at 1 KiB):
 * rounds of back-to-back all-reduces after MPI_Barrier, alternating recursive doubling (through
 * invoke(), as bench calls it) and MPI_Allreduce, every call timed on its own on every rank; each
 * rank writes its series and each call's end (on CLOCK_MONOTONIC, which the ranks share) to
 * $TMPDIR/cclab-per-rank-<rank>.json, and rank 0 then prints, for each, the per-rank medians and
 * means, the median of each call's maximum and average over ranks (nccl-tests' -a 3 and its
 * default -a 1), how far apart the ranks leave a call and which rank is slowest, and every rank
 * its context switches a call, and the calls over 300 µs (stalls) of each. Not a test: run it
 * by hand and say the load with it.
 *   mpirun --oversubscribe -np 4 node --import tsx test/perf/per-rank.ts [bytes = 1024] [calls a round = 200] [rounds = 10]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initMpi } from "../../src/backends/mpi/index.js";
import { allReduceCall } from "./allreduce-call.js";

const comm = await initMpi();
const bytes = Number(process.argv[2] ?? 1024);
const per = Number(process.argv[3] ?? 200);
const rounds = Number(process.argv[4] ?? 10);
const ar = allReduceCall(comm, bytes, "per-rank");
const variants: [string, () => unknown][] = [
  ["recursive_doubling", ar.hand("recursive_doubling").run],
  ["MPI_Allreduce", ar.builtin()],
];
const file = (r: number) => join(tmpdir(), `cclab-per-rank-${r}.json`);

/**
 * One round: `per` back-to-back calls of `run`, each timed, into `took` and `end` (µs) from `at`.
 * A small function that touches nothing else, warmed up exactly as it is timed (as bench's
 * timeEach): a loop in the module's body was first compiled, and thrown away, inside the timed
 * calls (TurboFan jobs of ~25 ms on the rank's core, --trace-opt --trace-deopt), which this tool
 * then counted as the variants' stalls.
 */
async function timeRound(run: () => unknown, per: number, took: Float64Array, end: Float64Array, at: number) {
  let t = performance.now();
  for (let i = 0; i < per; i++) {
    await run();
    const now = performance.now();
    took[at + i] = (now - t) * 1000;
    end[at + i] = now * 1000;
    t = now;
  }
}

// Warm-up through the timing loop itself: 20 rounds of 1,000 calls of each.
const scratch = [new Float64Array(1000), new Float64Array(1000)] as const;
for (let w = 0; w < 20; w++) {
  for (const [, run] of variants) {
    await comm.builtin.barrier();
    await timeRound(run, 1000, scratch[0], scratch[1], 0);
  }
}
const took: Record<string, Float64Array> = Object.fromEntries(
  variants.map(([name]) => [name, new Float64Array(rounds * per)]),
);
/** Each call's end on this rank, µs on performance.now()'s clock (shifted to CLOCK_MONOTONIC below). */
const endAt: Record<string, Float64Array> = Object.fromEntries(
  variants.map(([name]) => [name, new Float64Array(rounds * per)]),
);
const switches: Record<string, number> = Object.fromEntries(variants.map(([name]) => [name, 0]));
for (let k = 0; k < rounds; k++) {
  for (const [name, run] of variants) {
    await comm.builtin.barrier();
    const ru0 = process.resourceUsage();
    await timeRound(run, per, took[name]!, endAt[name]!, k * per);
    const ru1 = process.resourceUsage();
    switches[name]! +=
      ru1.involuntaryContextSwitches -
      ru0.involuntaryContextSwitches +
      ru1.voluntaryContextSwitches -
      ru0.voluntaryContextSwitches;
  }
}
console.log(
  `rank ${comm.rank} context switches a call: ${Object.entries(switches)
    .map(([n, v]) => `${n} ${(v / (rounds * per)).toFixed(2)}`)
    .join(", ")}`,
);
// performance.now() and process.hrtime() both read CLOCK_MONOTONIC, which every process on this
// machine shares: the offset between them puts every rank's ends on one time line.
const offset = Number(process.hrtime.bigint()) / 1000 - performance.now() * 1000;
const series = Object.fromEntries(Object.entries(took).map(([name, v]) => [name, Array.from(v)]));
const ends = Object.fromEntries(Object.entries(endAt).map(([name, v]) => [name, Array.from(v, (e) => e + offset)]));
writeFileSync(file(comm.rank), JSON.stringify({ series, ends }));
await comm.builtin.barrier();
if (comm.rank === 0) {
  const read = Array.from(
    { length: comm.size },
    (_, r) => JSON.parse(readFileSync(file(r), "utf8")) as { series: typeof series; ends: typeof ends },
  );
  const all = read.map((x) => x.series);
  const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1] as number;
  const mean = (a: number[]) => a.reduce((s, v) => s + v, 0) / a.length;
  for (const [name] of variants) {
    const ranks = all.map((s) => s[name]!);
    const calls = ranks[0]!.length;
    const over = (f: (v: number[]) => number) =>
      median(Array.from({ length: calls }, (_, i) => f(ranks.map((r) => r[i]!))));
    console.log(
      `${name} ${bytes} B, ${comm.size} ranks: per-rank medians ${ranks.map((r) => median(r).toFixed(1)).join(" ")} µs, ` +
        `means ${ranks.map((r) => mean(r).toFixed(1)).join(" ")}; median of each call's maximum over ranks ` +
        `${over((v) => Math.max(...v)).toFixed(1)}, of its average ${over(mean).toFixed(1)}`,
    );
    // How far apart the ranks leave a call: the median over calls of (last end - first end), and
    // how often the rank slowest in one call is not the one slowest in the call before.
    const endsOf = read.map((x) => x.ends[name]!);
    const skew = Array.from({ length: calls }, (_, i) => {
      const e = endsOf.map((r) => r[i]!);
      return Math.max(...e) - Math.min(...e);
    });
    const slowest = Array.from({ length: calls }, (_, i) => {
      const v = ranks.map((r) => r[i]!);
      return v.indexOf(Math.max(...v));
    });
    let moved = 0;
    for (let i = 1; i < calls; i++) if (slowest[i] !== slowest[i - 1]) moved++;
    const sorted = [...skew].sort((p, q) => p - q);
    // The stalls: calls whose average over ranks took over 300 µs (a rank off its core, most often),
    // how many, their time in all and the longest, beside each variant's mean÷median by that average.
    const avg = Array.from({ length: calls }, (_, i) => mean(ranks.map((r) => r[i]!)));
    const stalls = avg.filter((v) => v > 300);
    console.log(
      `  by each call's average over ranks: mean÷median ${(mean(avg) / median(avg)).toFixed(2)}; ` +
        `${stalls.length} calls over 300 µs, ${(stalls.reduce((s, v) => s + v, 0) / 1000).toFixed(1)} ms in all, ` +
        `the longest ${Math.max(...avg).toFixed(0)} µs`,
    );
    console.log(
      `  ranks leave a call apart by (last end - first end): median ${median(skew).toFixed(1)} µs, ` +
        `p90 ${sorted[Math.floor(0.9 * calls)]!.toFixed(1)}; slowest rank changes from one call to the next in ` +
        `${((100 * moved) / (calls - 1)).toFixed(0)}% of calls; slowest per rank ` +
        `${ranks.map((_, r) => slowest.filter((x) => x === r).length).join(" ")}`,
    );
  }
}
comm.destroy();
