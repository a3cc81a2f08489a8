/**
 * `cclab bench`: nccl-tests for cclab's hand-rolled algorithms. Every backend prints the same
 * table (size, count, type, redop, root; time, algbw, busbw, #wrong out of place and in place)
 * and exits 1 when any result was wrong, 2 when the backend cannot run here.
 *
 * - sim: times from the alpha-beta model over the schedule; each size executed once to check it.
 * - mpi: real processes under mpirun, timed like nccl-tests, beside MPI's own collective.
 * - nccl: one process per GPU, beside NCCL's own collective.
 */
import { benchMpi } from "./mpi.js";
import { benchNccl } from "./nccl.js";
import { checkOptions, loadAlgorithms, NO_PROGRESS, progressBar } from "./plan.js";
import { reporter, resultOf } from "./run.js";
import { benchSim } from "./sim.js";
import { type BenchIO, type BenchOptions, STDIO } from "./types.js";

export { benchChartSvg, benchSeries } from "./chart.js";
export { algBandwidth, busBandwidth, busFactor, parseBytes, shapeOf, sizeSweep } from "./metrics.js";
export type { BenchOptions, BenchResult, BenchRow, Measurement, MemoryReport } from "./types.js";

/**
 * Runs the bench and resolves with the exit code. `nranksGiven`: -n was on the command line (an
 * existing MPI job must then have that many ranks).
 */
export async function runBench(o: BenchOptions, io: BenchIO = STDIO, nranksGiven = true): Promise<number> {
  await loadAlgorithms(o);
  checkOptions(o);
  switch (o.backend) {
    case "sim": {
      const progress = o.progress ? progressBar(`bench ${o.collective} (sim)`) : NO_PROGRESS;
      const report = reporter(o, io, resultOf(o, [], { builtinName: null }), progress);
      const rows = await benchSim(o, progress, (row) => report.row(row));
      return report.end(resultOf(o, rows, { builtinName: null }));
    }
    case "mpi":
      return benchMpi(o, io, nranksGiven);
    case "nccl":
      return benchNccl(o, io);
  }
}
