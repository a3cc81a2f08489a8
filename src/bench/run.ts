/**
 * One rank's whole bench on a process backend (mpi or nccl): the sweep, then rank 0 prints the
 * report and writes --json/--chart. Every rank returns the same exit code (1 when any element
 * was wrong), so mpirun and cclab run's launcher report the failure too.
 */
import { writeFileSync } from "node:fs";
import { opLabel } from "../core/op.js";
import { benchChartSvg } from "./chart.js";
import { FLOORS_ENV, type Floors, parseFloors } from "./floors.js";
import { benchCommOf, type DeviceTransfer, measure } from "./measure.js";
import { type BenchProgress, NO_PROGRESS, progressBar } from "./plan.js";
import { averageBusBw, builtinWrong, outOfBounds, reportLines } from "./report.js";
import type { BenchIO, BenchOptions, BenchResult, BenchRow, CommWithBuiltin, MemoryReport } from "./types.js";

export function resultOf(
  o: BenchOptions,
  rows: BenchRow[],
  extra: { builtinName: string | null; memory?: MemoryReport; floors?: Floors },
): BenchResult {
  const sim = o.backend === "sim";
  return {
    tool: "cclab bench",
    collective: o.collective,
    algorithm: o.algorithm,
    backend: o.backend,
    nranks: o.nranks,
    dtype: o.dtype,
    op: opLabel(o.op),
    root: o.root,
    iters: o.iters,
    warmupIters: o.warmupIters,
    timing: sim ? "model" : "measured",
    builtinName: extra.builtinName,
    ...(sim ? { model: { alpha: o.alpha, beta: o.beta, gamma: o.gamma }, simMaxBytes: o.simMaxBytes } : {}),
    rows,
    outOfBounds: outOfBounds(rows),
    builtinWrong: builtinWrong(rows),
    avgBusBw: averageBusBw(rows),
    ...(extra.memory ? { memory: extra.memory } : {}),
    ...(extra.floors ? { floors: extra.floors } : {}),
  };
}

/** Prints the report, writes the files; the exit code is 1 when anything was wrong. */
export function emit(result: BenchResult, o: BenchOptions, io: BenchIO): number {
  for (const l of reportLines(result, { min: o.minBytes, max: o.maxBytes, factor: o.stepFactor })) io.out(l);
  if (o.json) {
    writeFileSync(o.json, `${JSON.stringify(result, null, 2)}\n`);
    io.out(`# wrote ${o.json}`);
  }
  if (o.chart) {
    writeFileSync(o.chart, benchChartSvg(result));
    io.out(`# wrote ${o.chart}`);
  }
  return result.outOfBounds > 0 ? 1 : 0;
}

/** The progress bar for rank 0 of a process job (a line every few seconds when its launcher had a terminal). */
export function rankProgress(o: BenchOptions, rank: number, title: string): BenchProgress {
  if (!o.progress || rank !== 0) return NO_PROGRESS;
  return progressBar(title, process.env.CCLAB_BENCH_TTY === "1");
}

export async function runRanks(
  comm: CommWithBuiltin,
  engine: "MPI" | "NCCL",
  o: BenchOptions,
  io: BenchIO,
  device?: DeviceTransfer,
): Promise<number> {
  const bc = benchCommOf(comm, engine, device);
  const opts = { ...o, nranks: comm.size };
  const run = await measure(bc, opts, rankProgress(opts, comm.rank, `bench ${o.collective}`));
  // --floors on mpi: measured by the launching process before mpirun (floors.ts), handed down.
  const given = process.env[FLOORS_ENV];
  const floors = given ? parseFloors(given) : undefined;
  const result = resultOf(opts, run.rows, { builtinName: run.builtinName, memory: run.memory, floors });
  if (comm.rank === 0) return emit(result, opts, io);
  return result.outOfBounds > 0 ? 1 : 0;
}
