/**
 * What every backend's bench shares before it runs: loading a user's algorithm file once,
 * checking the options against the registry, resolving 'auto' per size, and the progress bar.
 */
import { resolve } from "node:path";
import cliProgress from "cli-progress";
import { chooseFor } from "../collectives/api.js";
import type { DType } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { checkOpFitsDType } from "../core/op.js";
import type { Algorithm } from "../schedule/dsl.js";
import { findAlgorithm } from "../schedule/registry.js";
import { makeCall } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import { loadAlgorithmFile } from "../verify/load.js";
import { AVERAGES } from "./stats.js";
import type { BenchOptions } from "./types.js";

const loaded = new Set<string>();

/** Registers the algorithms of --algorithm-file (once per process, however often bench runs). */
export async function loadAlgorithms(o: BenchOptions): Promise<void> {
  if (!o.algorithmFile) return;
  const file = resolve(o.algorithmFile);
  if (loaded.has(file)) return;
  await loadAlgorithmFile(file);
  loaded.add(file);
}

/** Throws, naming the flag, where the options cannot describe a run. */
export function checkOptions(o: BenchOptions): void {
  benchAlgorithms(o);
  if (!Number.isInteger(o.root) || o.root < 0 || o.root >= o.nranks) {
    throw new InvalidArgumentError(
      { op: "bench", arg: "-r/--root" },
      `must be a rank in [0, ${o.nranks}), got ${o.root}`,
    );
  }
  checkOpFitsDType(o.op, o.dtype, { op: "bench", arg: "-o/--op" });
  const average = { op: "bench", arg: "-a/--average" };
  if (o.average !== undefined && !(AVERAGES as readonly number[]).includes(o.average)) {
    throw new InvalidArgumentError(average, `must be 0 (rank 0's), 1 (mean), 2 (min) or 3 (max), got ${o.average}`);
  }
  if (o.average !== undefined && o.backend === "sim") {
    throw new InvalidArgumentError(average, "takes measured times across ranks (mpi, nccl); sim's times are modelled");
  }
}

/**
 * The algorithms one bench compares: `--algorithm ring,segmented_ring` times both (and the
 * built-in) interleaved in the same rounds, one row per algorithm and size.
 */
export function benchAlgorithms(o: BenchOptions): string[] {
  const names =
    o.algorithms !== undefined
      ? [...o.algorithms]
      : o.algorithm
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s.length > 0);
  for (const name of names) if (name !== "auto") findAlgorithm(o.collective, name, { op: "bench" });
  return names.length > 0 ? names : ["auto"];
}

/** The algorithm's name for this size ('auto' picks as the front API would). */
export function resolveAlgorithm(o: BenchOptions, n: number, count: number, requested = o.algorithm): string {
  return requested === "auto" ? chooseFor(o.collective, n, count, o.dtype).algorithm : requested;
}

export function algorithmFor(o: BenchOptions, n: number, count: number): Algorithm {
  return findAlgorithm(o.collective, resolveAlgorithm(o, n, count), { op: "bench" });
}

/** nccl-tests' datatype names besides cclab's. */
const DTYPE_ALIASES: Record<string, DType> = {
  float: "float32",
  half: "float16",
  double: "float64",
  int: "int32",
  char: "int8",
  bf16: "bfloat16",
  fp16: "float16",
  fp32: "float32",
  fp64: "float64",
};

/** The call one benchmark variant makes: the options' collective, root, dtype, op and segment at this size. */
export function benchCall(o: BenchOptions, n: number, count: number, inPlace = false, alg?: Algorithm): CollectiveCall {
  return makeCall(
    {
      collective: o.collective,
      size: n,
      count,
      root: o.root,
      dtype: o.dtype,
      op: o.op,
      inPlace,
      segment: o.segment,
    },
    alg,
  );
}

export function dtypeAlias(x: string): string {
  return DTYPE_ALIASES[x] ?? x;
}

export interface BenchProgress {
  start(total: number): void;
  /** One more done (or `by` more). */
  tick(what: string, by?: number): void;
  stop(): void;
  /** Clears the bar's line before a row is printed (the bar redraws below it). */
  clear?(): void;
}

export const NO_PROGRESS: BenchProgress = { start() {}, tick() {}, stop() {} };

/**
 * A cli-progress bar on stderr. On a terminal it redraws in place; `forceLines` (a rank under
 * mpirun whose launcher had a terminal) prints a line every few seconds instead.
 */
export function progressBar(title: string, forceLines = false): BenchProgress {
  const stream = process.stderr;
  if (!stream.isTTY && !forceLines) return NO_PROGRESS;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${title} [{bar}] {value}/{total} {what}`,
      hideCursor: stream.isTTY === true,
      clearOnComplete: true,
      noTTYOutput: forceLines,
      notTTYSchedule: 5000,
      etaBuffer: 4,
    },
    cliProgress.Presets.shades_classic,
  );
  return {
    start: (total) => bar.start(total, 0, { what: "" }),
    tick: (what, by = 1) => bar.increment(by, { what }),
    stop: () => bar.stop(),
    clear: () => {
      if (stream.isTTY) stream.write("\r\x1b[2K");
    },
  };
}
