/**
 * Bytes a call allocates on V8's heap, and where (issue 26: each minor GC a run of small calls sets
 * off stalls both ranks 0.2 - 0.9 ms). Calls all-reduce through invoke() as bench does, after a
 * warm-up; heapUsed before and after (the young generation made large enough that no GC runs in
 * between), then V8's sampling heap profiler over the same calls, its top allocation sites.
 * Not a test: run it by hand.
 *   mpirun -np 2 node --max-semi-space-size=64 --import tsx test/perf/alloc.ts [algorithm = ring] [bytes = 1024] [calls = 20000]
 * Sites are the outermost function V8 did not inline into its caller. Through tsx every site
 * reads line 1; for lines, bundle it against the compiled package (npm run build, then esbuild
 * with its imports pointed at dist/src/) and run the bundle the same way.
 */
import { Session } from "node:inspector/promises";
import { initMpi } from "../../src/backends/mpi/index.js";
import { allocate, invoke } from "../../src/collectives/dispatch.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall, rankCall } from "../../src/specs/index.js";

const comm = await initMpi();
const alg = findAlgorithm("allreduce", process.argv[2] ?? "ring", { op: "alloc" });
const bytes = Number(process.argv[3] ?? 1024);
const calls = Number(process.argv[4] ?? 20000);
const mine = rankCall(
  makeCall({ collective: "allreduce", size: comm.size, count: bytes / 4, dtype: "float32" }),
  comm.rank,
);
const bufs = allocate(comm, mine);
const loop = async (n: number) => {
  for (let i = 0; i < n; i++) await invoke(comm, mine, alg.name, bufs);
};
await loop(20000);
comm.builtin.barrier();
const before = process.memoryUsage().heapUsed;
await loop(calls);
const after = process.memoryUsage().heapUsed;
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
const walk = (n: Node, stack: string[]) => {
  const here = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/.*\/src\//, "src/")}:${n.callFrame.lineNumber + 1}`;
  const path = [...stack, here];
  if (n.selfSize > 0) {
    const key = path.slice(-3).join(" < ");
    sites.set(key, (sites.get(key) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, path);
};
walk(profile.head, []);
if (comm.rank === 0) {
  console.log(
    `${alg.name} ${bytes} B: ${((after - before) / calls).toFixed(0)} bytes of heap a call (heapUsed over ${calls} calls)`,
  );
  const top = [...sites.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
  for (const [k, v] of top) console.log(`  ${(v / calls).toFixed(1)} B/call  ${k}`);
}
comm.destroy();
