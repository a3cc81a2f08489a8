/**
 * What one all-reduce costs, layer by layer, on the MPI backend (issue 16's per-step overhead):
 * MPI_Allreduce through the addon; one isend + irecv + progress through the addon with nothing of
 * cclab around it; the fast path's runPlan on a compiled plan; execute(); the front API, as users
 * call it (allReduce) and as bench calls it (runCollective with views, out of place and in place).
 * 20,000 calls after 3,000, no barrier between calls, each timed on its own: the mean and the
 * median (a rare stall of a rank off its core moves the mean, not the median). Not a test: run
 * it, and say the load with it.
 *   mpirun -np 2 node --import tsx test/perf/step-cost.ts [algorithm, default ring] [count, default 256]
 */
import { initMpi } from "../../src/backends/mpi/index.js";
import { allReduce, planFor, runCollective } from "../../src/collectives/api.js";
import { tensor, view } from "../../src/core/buffer.js";
import { execute } from "../../src/schedule/executor.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall, rankCall } from "../../src/specs/index.js";

const comm = await initMpi();
const alg = findAlgorithm("allreduce", process.argv[2] ?? "ring", { op: "step-cost" });
const count = Number(process.argv[3] ?? 256);
const input = tensor("float32", new Array(count).fill(1));
const output = tensor("float32", new Array(count).fill(0));
const call = makeCall({ collective: "allreduce", size: comm.size, count, dtype: "float32" });
const plan = planFor(alg, rankCall(call, comm.rank));
const views = { input: view(input), output: view(output) };
const runner = comm.planRunner;
const builtin = comm.builtin;
if (!runner || !builtin) throw new Error("step-cost: this MPI comm offers no fast path or built-in");

const n = 20000;
const each = new Float64Array(n);
async function time(name: string, f: () => Promise<void> | void): Promise<void> {
  for (let i = 0; i < 3000; i++) await f();
  const t0 = performance.now();
  let t = t0;
  for (let i = 0; i < n; i++) {
    await f();
    const now = performance.now();
    each[i] = now - t;
    t = now;
  }
  const mean = ((t - t0) * 1000) / n;
  const median = Float64Array.from(each).sort()[n >> 1] as number;
  if (comm.rank === 0) console.log(`${name}: mean ${mean.toFixed(2)} µs, median ${(median * 1000).toFixed(2)} µs`);
}

// The raw exchange: what one step of a 2-rank schedule asks of MPI, through the addon.
const mpi = comm.proc.mpi;
const peer = comm.rank ^ 1;
const bytes = count * 4;
const reqs = new Int32Array(2);
const done = new Int32Array(8);
function exchange(): void {
  if (peer >= comm.size) return;
  reqs[0] = mpi.irecv(output.data, 0, bytes, peer, -1, comm.collHandle);
  reqs[1] = mpi.isend(input.data, 0, bytes, peer, 7, comm.collHandle);
  let active = 2;
  while (active > 0) {
    const n = mpi.progress(active, reqs, done, 50, false);
    // Keep the pending request (at most one left) at the front.
    if (n === 1 && active === 2) reqs[0] = reqs[1 - (done[0] as number)] as number;
    active -= n;
  }
}

await time("MPI_Allreduce (addon)", () => builtin.allreduce(view(input), view(output), "sum"));
await time("isend + irecv + progress (addon, one step's exchange)", exchange);
await time(`runPlan (${alg.name}, ${plan.steps.length} steps)`, () =>
  runner.runPlan(plan, views, { label: "step-cost" }),
);
await time("execute", () => execute(comm, plan, { input: view(input), output: view(output) }));
await time("allReduce (front API)", () => allReduce(comm, input, { algorithm: alg.name, output }));
const rc = { collective: "allreduce", count, root: 0, op: call.op } as const;
const outOfPlace = { input: view(input), output: view(output) };
const inPlace = { input: view(output), output: view(output) };
await time("runCollective (bench's path)", () => runCollective(comm, rc, outOfPlace, { algorithm: alg.name }));
await time("runCollective in place", () => runCollective(comm, rc, inPlace, { algorithm: alg.name }));
await comm.destroy();
