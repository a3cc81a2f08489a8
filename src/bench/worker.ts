/**
 * One nccl bench rank. As a cclab program (main(comm, args), started by cclab run's launcher)
 * it receives the runtime's guarded comm; runNcclRank joins a job someone else started. Both
 * find the layer carrying comm.builtin (the backend's own NCCL collectives) and run the same
 * timing loop as MPI on it.
 */
import { topologyOf, useTopology } from "../collectives/plans.js";
import type { Comm } from "../comm.js";
import type { View } from "../core/buffer.js";
import type { TypedArray } from "../core/dtype.js";
import { UnavailableError } from "../core/errors.js";
import { findLayer } from "../runtime/guard.js";
import { shapeOfSpec } from "../tools/topology-shape.js";
import { loadAlgorithms } from "./plan.js";
import { runRanks } from "./run.js";
import { type BenchIO, type BenchOptions, hasBuiltin, STDIO } from "./types.js";

interface NcclTransfers {
  writeDevice(dst: View, src: TypedArray): Promise<void>;
  readDevice(src: View): Promise<TypedArray>;
}

const NCCL_MODULE = new URL("../backends/nccl/index.js", import.meta.url).href;

async function onComm(comm: Comm, o: BenchOptions, io: BenchIO): Promise<number> {
  const raw = findLayer(comm, hasBuiltin);
  if (!raw) {
    throw new UnavailableError("the nccl backend's comm carries no builtin collectives (comm.builtin.allreduce ...)");
  }
  await loadAlgorithms(o);
  // --topology: the shape cclab run gave the world comm (or, in another launcher's job, the flags give).
  const shape =
    topologyOf(comm) ??
    (o.machine
      ? shapeOfSpec(o.machine.topology, comm.size, o.machine.placement, { rank: comm.rank, op: "bench" })
      : undefined);
  if (shape) useTopology(raw, shape);
  // Device memory is filled and checked through the backend's own host <-> device copies.
  const nccl = (await import(NCCL_MODULE)) as Partial<NcclTransfers>;
  if (typeof nccl.writeDevice !== "function" || typeof nccl.readDevice !== "function") {
    throw new UnavailableError("src/backends/nccl exports no writeDevice/readDevice");
  }
  const { writeDevice, readDevice } = nccl as NcclTransfers;
  return runRanks(raw, "NCCL", o, io, { write: (d, s) => writeDevice(d, s), read: (v) => readDevice(v) });
}

/** cclab run's entry: args[0] is the bench options as JSON. Wrong results fail the rank (exit 1). */
export async function main(comm: Comm, args: string[]): Promise<void> {
  const o = JSON.parse(args[0] ?? "{}") as BenchOptions;
  const code = await onComm(comm, o, STDIO);
  if (code !== 0) throw new Error(`cclab bench: wrong results (exit ${code})`);
}

/** A rank of a job started by mpirun, srun or torchrun. */
export async function runNcclRank(o: BenchOptions, io: BenchIO): Promise<number> {
  const { finalize, init } = await import("../runtime/init.js");
  const comm = await init({ backend: "nccl" });
  try {
    const code = await onComm(comm, o, io);
    await finalize(comm);
    return code;
  } catch (e) {
    await finalize(comm, e);
    throw e;
  }
}
