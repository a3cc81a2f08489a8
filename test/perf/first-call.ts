/**
 * Why the first call of a bench round costs more (issue 26): rounds of back-to-back all-reduces
 * after a barrier, as bench makes them, where the round before is of another variant or of the
 * same. For each sequence of variants (e.g. "mpi,ring": a round of MPI_Allreduce, then one of the
 * ring; the last variant named is the one reported), the first call of the reported variant's
 * rounds against its later calls: median and mean µs, and the fast path's event-loop turns in
 * the first call. Not a test: run it by hand and say the load with it.
 *   mpirun -np 2 node --import tsx test/perf/first-call.ts [bytes = 1024] [rounds = 400] [calls a round = 20] [sequences = ring mpi,ring rd,ring]
 */
import { initMpi } from "../../src/backends/mpi/index.js";
import { loopStats as w } from "../../src/backends/mpi/progress.js";
import { allReduceCall } from "./allreduce-call.js";

const comm = await initMpi();
const bytes = Number(process.argv[2] ?? 1024);
const rounds = Number(process.argv[3] ?? 400);
const per = Number(process.argv[4] ?? 20);
const sequences = process.argv.length > 5 ? process.argv.slice(5) : ["ring", "mpi,ring", "rd,ring"];
const ar = allReduceCall(comm, bytes, "first-call");
const names: Record<string, string> = { ring: "ring", rd: "recursive_doubling", seg: "segmented_ring" };
const variant = (v: string): (() => unknown) => (v === "mpi" ? ar.builtin() : ar.hand(names[v] ?? v).run);

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] as number;
const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
for (const seq of sequences) {
  const runs = seq.split(",").map(variant);
  const target = runs[runs.length - 1] as () => unknown;
  for (let i = 0; i < 5000; i++) for (const r of runs) await r();
  const first: number[] = [];
  const later: number[] = [];
  const turns: number[] = [];
  for (let k = 0; k < rounds; k++) {
    for (const r of runs.slice(0, -1)) {
      await comm.builtin.barrier();
      for (let i = 0; i < per; i++) await r();
    }
    await comm.builtin.barrier();
    let t = performance.now();
    for (let i = 0; i < per; i++) {
      const t0 = w.turns;
      await target();
      const now = performance.now();
      (i === 0 ? first : later).push((now - t) * 1000);
      if (i === 0) turns.push(w.turns - t0);
      t = now;
    }
  }
  console.log(
    `rank ${comm.rank} ${seq} ${bytes} B: first call median ${median(first).toFixed(2)} mean ${mean(first).toFixed(2)} us ` +
      `(turns median ${median(turns)}, mean ${mean(turns).toFixed(1)}); later calls median ${median(later).toFixed(2)} mean ${mean(later).toFixed(2)} us`,
  );
}
comm.destroy();
