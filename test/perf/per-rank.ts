/**
 * Each rank's own call times, not the maximum over ranks bench takes (issue 26, n = 4 at 1 KiB):
 * rounds of back-to-back all-reduces after MPI_Barrier, alternating recursive doubling (through
 * invoke(), as bench calls it) and MPI_Allreduce, every call timed on its own on every rank; each
 * rank writes its series to $TMPDIR/cclab-per-rank-<rank>.json, and rank 0 then prints, for each,
 * the per-rank medians and means and the median of each call's maximum and average over ranks
 * (nccl-tests' -a 3 and its default -a 1). Not a test: run it by hand and say the load with it.
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

// Warm-up: 20 rounds of 1,000 calls of each.
for (let w = 0; w < 20; w++) {
  for (const [, run] of variants) {
    await comm.builtin.barrier();
    for (let i = 0; i < 1000; i++) await run();
  }
}
const series: Record<string, number[]> = Object.fromEntries(variants.map(([name]) => [name, []]));
for (let k = 0; k < rounds; k++) {
  for (const [name, run] of variants) {
    await comm.builtin.barrier();
    let t = performance.now();
    for (let i = 0; i < per; i++) {
      await run();
      const now = performance.now();
      series[name]!.push((now - t) * 1000);
      t = now;
    }
  }
}
writeFileSync(file(comm.rank), JSON.stringify(series));
await comm.builtin.barrier();
if (comm.rank === 0) {
  const all = Array.from({ length: comm.size }, (_, r) => JSON.parse(readFileSync(file(r), "utf8")) as typeof series);
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
  }
}
comm.destroy();
