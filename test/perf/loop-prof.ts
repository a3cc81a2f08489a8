/**
 * A bare loop of back-to-back all-reduces through runCollective (bench's path), for a CPU
 * profiler: nothing timed, nothing printed. Not a test. Profile rank 0 with perf
 * (test/perf/perf-rank0.sh):
 *   mpirun -np 2 test/perf/perf-rank0.sh --import tsx test/perf/loop-prof.ts [algorithm = recursive_doubling] [count = 256] [calls = 300000]
 */
import { initMpi } from "../../src/backends/mpi/index.js";
import { runCollective } from "../../src/collectives/api.js";
import { tensor, view } from "../../src/core/buffer.js";

const comm = await initMpi();
const count = Number(process.argv[3] ?? 256);
const alg = process.argv[2] ?? "recursive_doubling";
const input = tensor("float32", new Array(count).fill(1));
const output = tensor("float32", new Array(count).fill(0));
const rc = { collective: "allreduce", count, root: 0, op: { name: "sum" } } as const;
const bufs = { input: view(input), output: view(output) };
const calls = Number(process.argv[4] ?? 300000);
for (let i = 0; i < calls; i++) await runCollective(comm, rc, bufs, { algorithm: alg });
await comm.destroy();
