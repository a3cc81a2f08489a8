/**
 * Bytes a call allocates on V8's heap, and where (issue 26: each minor GC a run of small calls sets
 * off stalls both ranks 0.2 - 0.9 ms). Calls all-reduce through invoke() as bench does, after a
 * warm-up, under V8's sampling heap profiler (objects a GC has since collected included): the
 * bytes sampled a call in all, and the top allocation sites. (heapUsed before and after is no
 * measure: a scavenge between them makes it negative.) Not a test: run it by hand.
 *   mpirun -np 2 node --import tsx test/perf/alloc.ts [algorithm = ring] [bytes = 1024] [calls = 20000]
 * The algorithm MPI_Allreduce measures bench's built-in row (the same buffers, awaited the same way).
 * Sites are the outermost function V8 did not inline into its caller. Through tsx every site
 * reads line 1; for lines, bundle it against the compiled package (npm run build, then esbuild
 * with its imports pointed at dist/src/) and run the bundle the same way.
 */
import { Session } from "node:inspector/promises";
import { initMpi } from "../../src/backends/mpi/index.js";
import { allReduceCall } from "./allreduce-call.js";

const comm = await initMpi();
const bytes = Number(process.argv[3] ?? 1024);
const calls = Number(process.argv[4] ?? 20000);
const ar = allReduceCall(comm, bytes, "alloc");
const alg =
  process.argv[2] === "MPI_Allreduce"
    ? { name: "MPI_Allreduce", run: ar.builtin() }
    : ar.hand(process.argv[2] ?? "ring");
const loop = async (n: number) => {
  for (let i = 0; i < n; i++) await alg.run();
};
await loop(20000);
comm.builtin.barrier();

const s = new Session();
s.connect();
await s.post("HeapProfiler.startSampling", {
  samplingInterval: 32,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
await loop(calls);
const { profile } = (await s.post("HeapProfiler.stopSampling")) as {
  profile: { head: Node };
};
interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}
const sites = new Map<string, number>();
let total = 0;
const walk = (n: Node, stack: string[]) => {
  const here = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/.*\/src\//, "src/")}:${n.callFrame.lineNumber + 1}`;
  const path = [...stack, here];
  total += n.selfSize;
  if (n.selfSize > 0) {
    const key = path.slice(-3).join(" < ");
    sites.set(key, (sites.get(key) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, path);
};
walk(profile.head, []);
if (comm.rank === 0) {
  console.log(
    `${alg.name} ${bytes} B: ${(total / calls).toFixed(0)} bytes of heap a call (sampled over ${calls} calls, the caller's await included)`,
  );
  const top = [...sites.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
  for (const [k, v] of top) console.log(`  ${(v / calls).toFixed(1)} B/call  ${k}`);
}
comm.destroy();
