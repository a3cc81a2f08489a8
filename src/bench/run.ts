/**
 * One rank's whole bench on a process backend (mpi or nccl): the sweep, then rank 0 prints the
 * report and writes --json/--chart. Every rank returns the same exit code (1 when any element
 * was wrong), so mpirun and cclab run's launcher report the failure too.
 */
import { writeFileSync } from "node:fs";
import { opLabel } from "../core/op.js";
import { htmlPage } from "../viz/svg.js";
import { benchChartSvg } from "./chart.js";
import { FLOORS_ENV, type Floors, parseFloors } from "./floors.js";
import { benchCommOf, builtinName, type DeviceTransfer, measure } from "./measure.js";
import { type BenchProgress, NO_PROGRESS, progressBar } from "./plan.js";
import { averageBusBw, builtinWrong, headLines, outOfBounds, rowLine, tailLines } from "./report.js";
import { simNetwork } from "./sim.js";
import { DEFAULT_AVERAGE } from "./stats.js";
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
    ...(sim ? {} : { average: o.average ?? DEFAULT_AVERAGE }),
    builtinName: extra.builtinName,
    ...(sim ? { model: { alpha: o.alpha, beta: o.beta, gamma: o.gamma }, simMaxBytes: o.simMaxBytes } : {}),
    ...(sim && o.network ? { network: simNetwork(o.network, o.nranks) } : {}),
    ...(!sim && o.machine ? { topology: o.machine.topology } : {}),
    rows,
    outOfBounds: outOfBounds(rows),
    builtinWrong: builtinWrong(rows),
    avgBusBw: averageBusBw(rows),
    ...(extra.memory ? { memory: extra.memory } : {}),
    ...(extra.floors ? { floors: extra.floors } : {}),
  };
}

/**
 * What bench prints, as the run goes: the head and the table's header at once, each row the
 * moment its size is done (as nccl-tests), the totals at the end, then the files. With --json,
 * stdout gets only the result as JSON, at the end.
 */
export interface Reporter {
  row(r: BenchRow): void;
  /** Prints the rest, writes --output's files; the exit code is 1 when anything was wrong. */
  end(result: BenchResult): number;
}

export function reporter(
  o: BenchOptions,
  io: BenchIO,
  head: BenchResult,
  progress: BenchProgress = NO_PROGRESS,
): Reporter {
  const sizes = { min: o.minBytes, max: o.maxBytes, factor: o.stepFactor };
  const say = (line: string) => {
    progress.clear?.();
    io.out(line);
  };
  if (!o.jsonStdout) for (const l of headLines(head, sizes)) say(l);
  return {
    row: (r) => {
      if (!o.jsonStdout) say(rowLine(r, head));
    },
    end: (result) => {
      if (o.jsonStdout) io.out(JSON.stringify(result, null, 2));
      else for (const l of tailLines(result)) say(l);
      const note = (line: string) => (o.jsonStdout ? io.err(line) : io.out(line));
      if (o.json) {
        writeFileSync(o.json, `${JSON.stringify(result, null, 2)}\n`);
        note(`# wrote ${o.json}`);
      }
      if (o.chart) {
        writeFileSync(
          o.chart,
          o.chart.endsWith(".html")
            ? htmlPage(`cclab bench ${result.collective}`, benchChartSvg(result))
            : benchChartSvg(result),
        );
        note(`# wrote ${o.chart}`);
      }
      return result.outOfBounds > 0 ? 1 : 0;
    },
  };
}

/** Prints the whole report at once and writes the files (a run already done). */
export function emit(result: BenchResult, o: BenchOptions, io: BenchIO): number {
  const r = reporter(o, io, result);
  for (const row of result.rows) r.row(row);
  return r.end(result);
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
  // --floors on mpi: measured by the launching process before mpirun (floors.ts), handed down.
  const given = process.env[FLOORS_ENV];
  const floors = given ? parseFloors(given) : undefined;
  const name = builtinName(engine, o.collective);
  const progress = rankProgress(opts, comm.rank, `bench ${o.collective}`);
  const report =
    comm.rank === 0 ? reporter(opts, io, resultOf(opts, [], { builtinName: name, floors }), progress) : null;
  const run = await measure(bc, opts, progress, (row) => report?.row(row));
  const result = resultOf(opts, run.rows, { builtinName: run.builtinName, memory: run.memory, floors });
  if (report) return report.end(result);
  return result.outOfBounds > 0 ? 1 : 0;
}
