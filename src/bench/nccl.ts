/**
 * `cclab bench --backend nccl -n N`: one process per GPU. The nccl backend module says whether
 * it can run (ncclAvailable: the reason and how to get it when not, exit 2). Outside a job the
 * ranks are started by cclab run's launcher, whose store carries NCCL's unique id; each rank
 * (src/bench/worker.ts) gets its comm from initNccl through the runtime, and the timing loop is
 * the same as MPI's: hand-rolled algorithms on the comm, ncclAllReduce & co. through
 * comm.builtin, device buffers from comm.alloc, host staging through comm.copy.
 */
import { insideJob } from "../runtime/env.js";
import { ownModule } from "../runtime/user-module.js";
import type { BenchIO, BenchOptions } from "./types.js";

type Availability = { ok: true } | { ok: false; reason: string; hint: string };

interface NcclModule {
  ncclAvailable?: () => Availability;
  initNccl?: (...a: unknown[]) => unknown;
}

const NCCL_MODULE = new URL("../backends/nccl/index.js", import.meta.url).href;

/** The backend module and whether it can run here (never throws). */
export async function ncclStatus(): Promise<Availability> {
  let mod: NcclModule;
  try {
    mod = (await import(NCCL_MODULE)) as NcclModule;
  } catch (e) {
    const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
    return {
      ok: false,
      reason: `nccl backend not built: ${why}`,
      hint: "build the nccl backend (src/backends/nccl, native/) on a machine with CUDA and NCCL",
    };
  }
  if (typeof mod.ncclAvailable !== "function" || typeof mod.initNccl !== "function") {
    return {
      ok: false,
      reason: "nccl backend not built: src/backends/nccl/index.js exports no ncclAvailable() and initNccl()",
      hint: "update src/backends/nccl",
    };
  }
  return mod.ncclAvailable();
}

/** The bench rank program, as cclab run starts it (main(comm, args)). */
export const WORKER = ownModule("./worker.ts", import.meta.url);

export async function benchNccl(o: BenchOptions, io: BenchIO): Promise<number> {
  const a = await ncclStatus();
  if (!a.ok) {
    io.err(a.reason.startsWith("nccl backend") ? a.reason : `nccl backend unavailable: ${a.reason}`);
    io.err(`to get it: ${a.hint}`);
    return 2;
  }
  const args = [JSON.stringify(o)];
  if (insideJob()) {
    // Someone else (mpirun, srun, torchrun) started the ranks: be one of them.
    const { runNcclRank } = await import("./worker.js");
    return runNcclRank(o, io);
  }
  const { launch } = await import("../runtime/launch.js");
  const result = await launch({
    nprocs: o.nranks,
    backend: "nccl",
    program: WORKER,
    args,
    // Rank 0 prints the report; drop the launcher's '[rank 0] ' so the table reads as nccl-tests'.
    stdout: (t) => void process.stdout.write(t.replace(/^\[rank 0\] /gm, "")),
    env: o.progress && process.stderr.isTTY ? { CCLAB_BENCH_TTY: "1" } : {},
    ...(o.machine ? { topology: o.machine.topology, placement: o.machine.placement } : {}),
  });
  if (result.exitCode !== 0) io.err(result.summary);
  return result.exitCode;
}
