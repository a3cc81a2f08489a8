/**
 * A whole BenchOptions for the bench tests (sim, ring all-reduce, 4 ranks, 1 KiB - 64 KiB by 2,
 * 20 calls), as the CLI's defaults would make it; each test overrides what it is about.
 */
import type { BenchOptions } from "../../src/bench/types.js";
import { betaFromGBps } from "../../src/schedule/model.js";

export function benchOptions(over: Partial<BenchOptions> = {}): BenchOptions {
  return {
    collective: "allreduce",
    algorithm: "ring",
    backend: "sim",
    nranks: 4,
    minBytes: 1024,
    maxBytes: 64 * 1024,
    stepFactor: 2,
    iters: 20,
    warmupIters: 5,
    dtype: "float32",
    op: { name: "sum" },
    root: 0,
    progress: false,
    alpha: 5,
    beta: betaFromGBps(25),
    gamma: 0,
    simMaxBytes: 4 * 1024 * 1024,
    ...over,
  };
}
