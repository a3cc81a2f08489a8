/**
 * `cclab bench [collective] --algorithm <name> --backend sim|mpi|nccl -n <ranks>` with
 * nccl-tests' flags (-b -e -f -w -d -r; the op is --op since -o is the output file, and
 * iterations are --iters since -n is the rank count, in every cclab command): the hand-rolled
 * algorithm's time, algbw, busbw and #wrong per size, out of place and in place, beside the
 * engine's own collective, each row printed as its size is done. See src/bench.
 */
import { resolve } from "node:path";
import { type Command, InvalidArgumentError as CommanderError, Option } from "commander";
import { runBench } from "../bench/index.js";
import { dtypeAlias, loadAlgorithms } from "../bench/plan.js";
import { type Average, DEFAULT_AVERAGE } from "../bench/stats.js";
import {
  BENCH_BACKENDS,
  BENCH_COLLECTIVES,
  type BenchBackend,
  type BenchCollective,
  type BenchOptions,
} from "../bench/types.js";
import { DTYPES, isDType } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { parseOp } from "../core/op.js";
import { betaFromGBps } from "../schedule/model.js";
import { allAlgorithms } from "../schedule/registry.js";
import { findSpec } from "../specs/index.js";
import type { Machine } from "../tools/topology-shape.js";
import { parseBeta } from "./model.js";
import {
  addNetworkOptions,
  givenOptions,
  modelFlagsGiven,
  type NetworkFlags,
  networkRequest,
  refuseAlphaBeta,
} from "./network-options.js";
import { jsonOption, LAUNCH_MAX_RANKS, npOption, nranksOption, outputOption, parsers, ranksOf } from "./options.js";
import { absolutePlacement, shapeOfFlags } from "./topology-shape.js";

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
  parseOp(value.toLowerCase(), { op: "bench", arg: "--op" });
  return value.toLowerCase();
}

interface BenchFlags extends NetworkFlags {
  algorithm: string;
  algorithmFile?: string;
  backend: BenchBackend;
  nranks?: number;
  np?: number;
  minbytes: number;
  maxbytes: number;
  stepfactor: number;
  iters: number;
  warmup_iters: number;
  datatype: string;
  op: string;
  root: number;
  segment?: number;
  output: string[];
  json?: boolean;
  chart?: string;
  progress: boolean;
  alpha: number;
  beta: number;
  gamma: number;
  simMaxBytes: number;
  floors?: boolean;
  average: number;
}

/** -o's files: .json gets the result, .svg or .html the chart. */
function outputs(files: readonly string[], chart: string | undefined): { json?: string; chart?: string } {
  const out: { json?: string; chart?: string } = {};
  for (const f of [...files, ...(chart ? [chart] : [])]) {
    const ext = /\.([a-z]+)$/i.exec(f)?.[1]?.toLowerCase();
    if (ext === "json") out.json = f;
    else if (ext === "svg" || ext === "html") out.chart = f;
    else {
      throw new InvalidArgumentError(
        { op: "bench", arg: "--output" },
        `${f}: write .json (every row and the totals) or .svg/.html (busbw against size)`,
      );
    }
  }
  return out;
}

export function registerBench(program: Command): void {
  const p = parsers("bench");
  const ranks = p.int("-n", 1, Math.max(...Object.values(LAUNCH_MAX_RANKS)));
  const bench = program
    .command("bench")
    .description(
      "nccl-tests for hand-rolled algorithms: time, algbw, busbw and #wrong per size, beside MPI's/NCCL's own collective",
    )
    .argument("[collective]", `one of ${BENCH_COLLECTIVES.join(", ")} (torch's names too)`, "allreduce")
    .option("--algorithm <name>", "the algorithm (see cclab list), or 'auto' to choose per size", "auto")
    .option("--algorithm-file <file>", "your own algorithm file")
    .addOption(new Option("--backend <name>", "where the ranks run").choices([...BENCH_BACKENDS]).default("sim"))
    .addOption(nranksOption("ranks (default 4; inside an MPI job, the job's size)", ranks))
    .addOption(npOption(ranks).hideHelp())
    .option("-b, --minbytes <size>", "smallest message: 8, 1K, 1M, 1G", p.size("-b"), 1024)
    .option("-e, --maxbytes <size>", "largest message", p.size("-e"), 64 * 1024 * 1024)
    .option("-f, --stepfactor <f>", "multiply the size by f each step", factorOption, 2)
    .option("--iters <n>", "timed iterations per size (nccl-tests' -n)", p.int("--iters", 1), 20)
    .option("-w, --warmup_iters <n>", "warm-up iterations per size", p.int("-w", 0), 5)
    .option("-d, --datatype <type>", `element type: ${DTYPES.join(", ")}`, dtypeOption, "float32")
    .option(
      "--op <op>",
      "sum, prod, min, max, avg, band, bor, bxor, premulsum(<scalar>) (nccl-tests' -o)",
      opOption,
      "sum",
    )
    .option("-r, --root <rank>", "root of broadcast, reduce, gather, scatter", p.int("-r", 0), 0)
    .option(
      "--segment <n>",
      "pipelining segment in elements (default: the algorithm's own, else 128 KiB, as the front API)",
      p.int("--segment", 1),
    )
    .addOption(
      outputOption(
        "write .json (every row, the totals, the memory figure) or .svg/.html (busbw against size); repeatable",
      )
        .argParser((v: string, prev: string[] = []) => [...prev, v])
        .default([]),
    )
    .addOption(jsonOption())
    .addOption(new Option("--chart <file.svg>", "the same as -o file.svg").hideHelp())
    .option("--no-progress", "no progress bar")
    .option(
      "-a, --average <0-3>",
      "mpi, nccl: each time across ranks as nccl-tests' -a: 0 rank 0's, 1 the mean, 2 the minimum, 3 the maximum",
      p.int("-a", 0, 3),
      DEFAULT_AVERAGE,
    )
    .option("--floors", "mpi: first measure this machine's floors in C (MPI ping-pong, Sendrecv, memcpy, float32 sum)")
    .option("--alpha <us>", "sim: latency per message, microseconds", p.number("--alpha"), 5)
    .option("--beta <x>", "sim: microseconds per byte, or a bandwidth like 25GB/s", parseBeta, betaFromGBps(25))
    .option("--gamma <us-per-byte>", "sim: local reduction cost, microseconds per byte", p.number("--gamma"), 0)
    .option(
      "--sim-max-bytes <size>",
      "sim: execute and check sizes up to this (larger: model only)",
      p.size("--sim-max-bytes"),
      4 * 1024 * 1024,
    )
    .action(async (collectiveName: string, f: BenchFlags, cmd: Command) => {
      const collective = findSpec(collectiveName)?.name ?? collectiveName;
      if (!(BENCH_COLLECTIVES as readonly string[]).includes(collective)) {
        throw new InvalidArgumentError(
          { op: "bench", arg: "collective" },
          `'${collectiveName}' has no nccl-tests bus-bandwidth formula; bench one of ${BENCH_COLLECTIVES.join(", ")}`,
        );
      }
      if (f.maxbytes < f.minbytes) {
        throw new InvalidArgumentError({ op: "bench", arg: "-e" }, `${f.maxbytes} is smaller than -b ${f.minbytes}`);
      }
      const dtype = f.datatype;
      if (!isDType(dtype)) throw new InvalidArgumentError({ op: "bench", arg: "-d" }, `unknown datatype ${dtype}`);
      const nranks = ranksOf("bench", f);
      // sim: --topology times the rows on the network model; mpi, nccl: it gives the algorithms the shape.
      const machine = f.backend === "sim" ? undefined : benchMachine(f, nranks ?? 4);
      const network = f.backend === "sim" ? networkRequest("bench", f, nranks ?? 4) : undefined;
      refuseAlphaBeta("bench", givenOptions(cmd), network);
      // With --algorithm-file and no --algorithm, bench the file's own algorithms (as explain,
      // trace and model do), not whatever 'auto' would pick among the built-ins.
      // Its names go as a list: a name may hold a comma, which --algorithm's list would split.
      const fromFile =
        f.algorithmFile !== undefined && cmd.getOptionValueSource("algorithm") !== "cli"
          ? await fileAlgorithms(f.algorithmFile, collective)
          : undefined;
      process.exitCode = await runBench(
        {
          collective: collective as BenchCollective,
          algorithm: fromFile ? fromFile.join(",") : f.algorithm,
          ...(fromFile ? { algorithms: fromFile } : {}),
          algorithmFile: f.algorithmFile,
          backend: f.backend,
          nranks: nranks ?? 4,
          minBytes: f.minbytes,
          maxBytes: f.maxbytes,
          stepFactor: f.stepfactor,
          iters: f.iters,
          warmupIters: f.warmup_iters,
          // sim's times are modelled: only measured runs take the default; an explicit -a on sim
          // goes on for checkOptions to refuse, as a library caller's is.
          average:
            f.backend === "sim" && cmd.getOptionValueSource("average") !== "cli" ? undefined : (f.average as Average),
          dtype,
          op: parseOp(f.op, { op: "bench", arg: "--op" }),
          root: f.root,
          segment: f.segment,
          ...outputs(f.output, f.chart),
          jsonStdout: f.json === true,
          progress: f.progress,
          alpha: f.alpha,
          beta: f.beta,
          gamma: f.gamma,
          simMaxBytes: f.simMaxBytes,
          network,
          ...(machine ? { machine } : {}),
          floors: f.floors === true,
        },
        undefined,
        nranks !== undefined,
      );
    });
  // sim: --topology and its link flags time the rows on the network model (src/cli/network-options.ts).
  addNetworkOptions(bench, "sim: ", "; mpi, nccl: the algorithms get the machine's shape (Swing on a torus)");
}

/**
 * mpi, nccl: --topology and --placement (checked here, for the n ranks) as the ranks read them;
 * the network model's other flags time nothing there and are refused.
 */
function benchMachine(f: BenchFlags, n: number): Machine | undefined {
  const model = modelFlagsGiven(f);
  if (model.length > 0)
    throw new InvalidArgumentError(
      { op: "bench", arg: model[0] },
      `sets the network model, which times --backend sim; on ${f.backend} the run is measured (--topology and --placement give the algorithms the machine's shape)`,
    );
  if (f.topology === undefined) {
    if (f.placement !== undefined)
      throw new InvalidArgumentError(
        { op: "bench", arg: "--placement" },
        "places ranks on a topology's hosts: give --topology too (e.g. --topology torus:4x4)",
      );
    return undefined;
  }
  shapeOfFlags(f.topology, n, f.placement, "bench");
  return { topology: f.topology, ...(f.placement !== undefined ? { placement: absolutePlacement(f.placement) } : {}) };
}

/** The names of the file's algorithms of `collective` (loading it, once per process). */
async function fileAlgorithms(path: string, collective: string): Promise<string[]> {
  // loadAlgorithms reads only algorithmFile; it remembers the file, so runBench does not load it again.
  await loadAlgorithms({ algorithmFile: path } as BenchOptions);
  const file = resolve(path);
  const mine = allAlgorithms().filter((a) => a.file === file);
  const names = mine.filter((a) => a.collective === collective).map((a) => a.name);
  if (names.length === 0) {
    const has = mine.map((a) => `${a.collective}/${a.name}`).join(", ") || "none";
    throw new InvalidArgumentError(
      { op: "bench", arg: "--algorithm-file" },
      `${path} has no ${collective} algorithm to bench (it has: ${has}); name the collective, or --algorithm`,
    );
  }
  return names;
}
