/**
 * `cclab bench --backend mpi -n N`: started outside an MPI job it relaunches itself under
 * mpirun (mpirunCommand) with the same arguments and returns mpirun's exit code; inside one
 * (OMPI_COMM_WORLD_SIZE or PMI_SIZE set) it is one rank, and rank 0 prints.
 */
import { spawn } from "node:child_process";
import { mpiAvailable, mpirunCommand } from "../backends/mpi/index.js";
import { useTopology } from "../collectives/plans.js";
import { FLOORS_ENV, measureFloors } from "./floors.js";
import { runRanks } from "./run.js";
import type { BenchIO, BenchOptions } from "./types.js";

export function insideMpiJob(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.OMPI_COMM_WORLD_SIZE !== undefined || env.PMI_SIZE !== undefined;
}

/** Runs this same command line under mpirun: node [its flags] <cli script> bench ... */
export function relaunch(
  np: number,
  o: BenchOptions,
  io: BenchIO,
  argv: readonly string[] = process.argv.slice(1),
): Promise<number> {
  const { cmd, args } = mpirunCommand(np, [process.execPath, ...process.execArgv, ...argv]);
  const env = { ...process.env };
  if (o.progress && process.stderr.isTTY) env.CCLAB_BENCH_TTY = "1";
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: "inherit", env });
    child.on("error", (e) => {
      io.err(`cclab bench: could not start ${cmd}: ${e.message}`);
      resolve(2);
    });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

export async function benchMpi(o: BenchOptions, io: BenchIO, nranksGiven: boolean): Promise<number> {
  const a = mpiAvailable();
  if (!a.ok) {
    io.err(`mpi backend unavailable: ${a.reason}`);
    io.err(`to get it: ${a.hint}`);
    return 2;
  }
  if (!insideMpiJob()) {
    if (o.floors) {
      // Measured here, before the job: mpirun cannot be started from inside one of its ranks.
      const bytes = Math.min(o.maxBytes, 64 * 1024 * 1024);
      io.err(`cclab bench: measuring the floors in C (mpirun -np 2 ${bytes} bytes)...`);
      process.env[FLOORS_ENV] = JSON.stringify(measureFloors(bytes));
    }
    return relaunch(o.nranks, o, io);
  }

  const { initMpi } = await import("../backends/mpi/index.js");
  const comm = await initMpi();
  try {
    if (nranksGiven && comm.size !== o.nranks) {
      throw new RangeError(`-n ${o.nranks} was given but this MPI job has ${comm.size} ranks`);
    }
    // --topology: the algorithms run on the machine's shape (Swing on a torus: its multiport form).
    if (o.machine) {
      const { shapeOfSpec } = await import("../tools/topology-shape.js");
      const where = { rank: comm.rank, op: "bench" };
      useTopology(comm, shapeOfSpec(o.machine.topology, comm.size, o.machine.placement, where));
    }
    return await runRanks(comm, "MPI", o, io);
  } catch (e) {
    // One rank failing would leave the others blocked in a collective: end the whole job.
    io.err(`rank ${comm.rank}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    comm.proc.mpi.abort(comm.proc.mpi.commWorld(), 1);
    return 1;
  }
}
