/**
 * `cclab bench [collective] --algorithm <name> --backend sim|mpi|nccl -n <ranks>` with
 * nccl-tests' flags (-b -e -f -w -d -o -r; iterations are --iters, since -n is the rank count
 * in every cclab command): the hand-rolled algorithm's time, algbw, busbw and #wrong per size,
 * out of place and in place, beside the engine's own collective. See src/bench.
 */
import { type Command, InvalidArgumentError as CommanderError, Option } from "commander";
import { runBench } from "../bench/index.js";
import { dtypeAlias } from "../bench/plan.js";
import { BENCH_BACKENDS, BENCH_COLLECTIVES, type BenchBackend, type BenchCollective } from "../bench/types.js";
import { DTYPES, isDType } from "../core/dtype.js";
import { parseOp } from "../core/op.js";
import { betaFromGBps } from "../schedule/model.js";
import { parseBeta } from "./model.js";
import { intOption, numberOption, sizeOption } from "./options.js";

function factorOption(value: string): number {
  const f = Number(value);
  if (!Number.isFinite(f) || f <= 1) throw new CommanderError(`-f/--stepfactor must be a number > 1, got '${value}'`);
  return f;
}

function dtypeOption(value: string): string {
  const d = dtypeAlias(value);
  if (!isDType(d)) {
    throw new CommanderError(
      `-d/--datatype: unknown type '${value}'; expected one of ${DTYPES.join(", ")} (or float, half, double)`,
    );
  }
  return d;
}

function opOption(value: string): string {
  parseOp(value, { op: "bench", arg: "-o/--op" });
  return value;
}

interface BenchFlags {
  algorithm: string;
  algorithmFile?: string;
  backend: BenchBackend;
  nranks?: number;
  minbytes: number;
  maxbytes: number;
  stepfactor: number;
  iters: number;
  warmup_iters: number;
  datatype: string;
  op: string;
  root: number;
  segment?: number;
  json?: string;
  chart?: string;
  progress: boolean;
  alpha: number;
  beta: number;
  gamma: number;
  simMaxBytes: number;
  floors?: boolean;
}

export function registerBench(program: Command): void {
  program
    .command("bench")
    .description(
      "nccl-tests for hand-rolled algorithms: time, algbw, busbw and #wrong per size, beside MPI's/NCCL's own collective",
    )
    .argument("[collective]", `one of ${BENCH_COLLECTIVES.join(", ")}`, "allreduce")
    .option("--algorithm <name>", "the algorithm (see cclab verify), or 'auto' to choose per size", "auto")
    .option("--algorithm-file <file>", "your own algorithm file")
    .addOption(new Option("--backend <name>", "where the ranks run").choices([...BENCH_BACKENDS]).default("sim"))
    .option(
      "-n, --nranks <n>",
      "number of ranks (default 4; inside an MPI job, the job's size)",
      intOption("-n", 1, 4096),
    )
    .option("-b, --minbytes <size>", "smallest message: 8, 1K, 1M, 1G", sizeOption("-b"), 1024)
    .option("-e, --maxbytes <size>", "largest message", sizeOption("-e"), 64 * 1024 * 1024)
    .option("-f, --stepfactor <f>", "multiply the size by f each step", factorOption, 2)
    .option("--iters <n>", "timed iterations per size (nccl-tests' -n)", intOption("--iters", 1), 20)
    .option("-w, --warmup_iters <n>", "warm-up iterations per size", intOption("-w", 0), 5)
    .option("-d, --datatype <type>", `element type: ${DTYPES.join(", ")}`, dtypeOption, "float32")
    .option("-o, --op <op>", "sum, prod, min, max, avg, band, bor, bxor, premulsum(<scalar>)", opOption, "sum")
    .option("-r, --root <rank>", "root of broadcast, reduce, gather, scatter", intOption("-r", 0), 0)
    .option("--segment <n>", "pipelining segment in elements (default 128 KiB worth)", intOption("--segment", 1))
    .option("--json <file>", "write every row and the memory figure as JSON")
    .option("--chart <file.svg>", "write busbw against size, hand-rolled and built-in, as SVG")
    .option("--no-progress", "no progress bar")
    .option("--floors", "mpi: first measure this machine's floors in C (MPI ping-pong, Sendrecv, memcpy, float32 sum)")
    .option("--alpha <us>", "sim: latency per message, microseconds", numberOption("--alpha"), 5)
    .option("--beta <x>", "sim: microseconds per byte, or a bandwidth like 25GB/s", parseBeta, betaFromGBps(25))
    .option("--gamma <us-per-byte>", "sim: local reduction cost, microseconds per byte", numberOption("--gamma"), 0)
    .option(
      "--sim-max-bytes <size>",
      "sim: execute and check sizes up to this (larger: model only)",
      sizeOption("--sim-max-bytes"),
      4 * 1024 * 1024,
    )
    .action(async (collective: string, f: BenchFlags) => {
      if (!(BENCH_COLLECTIVES as readonly string[]).includes(collective)) {
        throw new CommanderError(
          `cclab bench: '${collective}' has no nccl-tests bus-bandwidth formula; bench one of ${BENCH_COLLECTIVES.join(", ")}`,
        );
      }
      if (f.maxbytes < f.minbytes) throw new CommanderError(`-e ${f.maxbytes} is smaller than -b ${f.minbytes}`);
      const dtype = f.datatype;
      if (!isDType(dtype)) throw new CommanderError(`unknown datatype ${dtype}`);
      process.exitCode = await runBench(
        {
          collective: collective as BenchCollective,
          algorithm: f.algorithm,
          algorithmFile: f.algorithmFile,
          backend: f.backend,
          nranks: f.nranks ?? 4,
          minBytes: f.minbytes,
          maxBytes: f.maxbytes,
          stepFactor: f.stepfactor,
          iters: f.iters,
          warmupIters: f.warmup_iters,
          dtype,
          op: parseOp(f.op, { op: "bench", arg: "-o/--op" }),
          root: f.root,
          segment: f.segment,
          json: f.json,
          chart: f.chart,
          progress: f.progress,
          alpha: f.alpha,
          beta: f.beta,
          gamma: f.gamma,
          simMaxBytes: f.simMaxBytes,
          floors: f.floors === true,
        },
        undefined,
        f.nranks !== undefined,
      );
    });
}
