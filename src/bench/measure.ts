/**
 * The timing loop for process backends (mpi, nccl), the same on every rank, as nccl-tests'
 * BenchTime: per size, warm-up calls, then back-to-back calls timed after a barrier, the time
 * taken across ranks as its -a says (the mean by default) — for the hand-rolled algorithm out of place and in place and
 * for the engine's own collective out of place, interleaved in rounds so drifting load on a
 * shared machine hits all three alike. Then, per variant, the inputs are reset, outputs set to
 * a sentinel, one more call is made and every output element is checked against the oracle.
 */

import { type Buffers, invoker } from "../collectives/dispatch.js";
import { HostBuffer, isHostBuffer, type View, view } from "../core/buffer.js";
import { dtypeInfo, type TypedArray } from "../core/dtype.js";
import { maxOf } from "../core/extent.js";
import { opLabel } from "../core/op.js";
import { findAlgorithm } from "../schedule/registry.js";
import { rankCall, specOf } from "../specs/index.js";
import { allocateMemory, viewsFor } from "./buffers.js";
import { countWrong, expectedOutput, fillPeriodic, type Patterns, patterns } from "./data.js";
import { algBandwidth, busBandwidth, shapeOf, sizeSweep } from "./metrics.js";
import { type BenchProgress, benchAlgorithms, benchCall, resolveAlgorithm } from "./plan.js";
import {
  type Average,
  DEFAULT_AVERAGE,
  type PerCall,
  perCall,
  ROUNDS,
  ratios,
  roundSizes,
  SERIES_MAX_BYTES,
  type Spread,
  spread,
  warmupCalls,
} from "./stats.js";
import type {
  BenchCollective,
  BenchComm,
  BenchOptions,
  BenchRow,
  CommWithBuiltin,
  Measurement,
  MemoryReport,
} from "./types.js";

/**
 * Warm-up calls a variant makes with rank 0 late (runStaggered), up to 64 KiB (where the warm-up
 * is 10,000 calls anyway), and how late, µs: past the first native wait's 100 µs.
 */
const STAGGERED_CALLS = 20;
const LATE_US = 500;
/**
 * The warm-up's calls of the timing loop (runInterleaved) a size, its calls shared out among them
 * (without them the timing loop itself was compiled, and deoptimised, inside the timed calls).
 */
const WARMUP_PASSES = 20;

/** The built-in's name in the engine's API, for the header. */
export function builtinName(engine: "MPI" | "NCCL", c: BenchCollective): string {
  const b = specOf(c).builtin;
  return engine === "MPI" ? b.mpi : b.nccl;
}

/** Host <-> device copies for device buffers (the nccl backend's writeDevice and readDevice). */
export interface DeviceTransfer {
  write(dst: View, src: TypedArray): Promise<void>;
  read(src: View): Promise<TypedArray>;
}

/**
 * A BenchComm over any comm that carries its engine's collectives. Host buffers are read and
 * written in place; device buffers through `device` (a host staging array each way).
 */
export function benchCommOf(comm: CommWithBuiltin, engine: "MPI" | "NCCL", device?: DeviceTransfer): BenchComm {
  const scalar = comm.alloc("float64", 1);
  const one = view(scalar);
  const noDevice = (v: View): never => {
    throw new Error(`cclab bench: ${v.buffer.location} memory needs the backend's writeDevice/readDevice`);
  };
  const write = async (v: View, fill: (host: TypedArray) => void): Promise<void> => {
    if (isHostBuffer(v.buffer)) {
      fill(v.buffer.data.subarray(v.offset, v.offset + v.count) as TypedArray);
      return;
    }
    if (!device) return noDevice(v);
    const stage = new HostBuffer(v.buffer.dtype, v.count);
    fill(stage.data);
    await device.write(v, stage.data);
  };
  const read = async <T>(v: View, f: (host: TypedArray) => T): Promise<T> => {
    if (isHostBuffer(v.buffer)) return f(v.buffer.data.subarray(v.offset, v.offset + v.count) as TypedArray);
    if (!device) return noDevice(v);
    return f(await device.read(v));
  };
  const reduceScalar = async (x: number, op: "max" | "sum"): Promise<number> => {
    await write(one, (h) => {
      h[0] = x;
    });
    await comm.builtin.allreduce(null, one, { name: op });
    await comm.synchronize();
    return read(one, (h) => h[0] as number);
  };
  // nccl-tests' -a with the engine's all-reduce: rank 0's value (the others give -Infinity to a
  // max), the mean (a sum / size), the minimum, the maximum.
  const acrossRanks = async (xs: Float64Array, how: Average): Promise<Float64Array> => {
    const v = view(comm.alloc("float64", xs.length));
    const mine = how !== 0 || comm.rank === 0;
    await write(v, (h) => (mine ? (h as Float64Array).set(xs) : h.fill(Number.NEGATIVE_INFINITY as never)));
    await comm.builtin.allreduce(null, v, { name: how === 1 ? "sum" : how === 2 ? "min" : "max" });
    await comm.synchronize();
    return read(v, (h) => Float64Array.from(h as Float64Array, (x) => (how === 1 ? x / comm.size : x)));
  };
  return {
    comm,
    engine,
    acrossRanks,
    barrier: async () => {
      await comm.builtin.barrier();
      await comm.synchronize();
    },
    maxOverRanks: (x) => reduceScalar(x, "max"),
    sumOverRanks: (x) => reduceScalar(x, "sum"),
    write,
    read,
  };
}

/** The engine's collective on the benchmark's views, out of place; returns the view holding this rank's result. */
function builtinCall(comm: CommWithBuiltin, o: BenchOptions, count: number, bufs: Buffers) {
  const call = rankCall(benchCall(o, comm.size, count), comm.rank);
  const x = { call, input: bufs.input, output: bufs.output };
  return { run: () => specOf(o.collective).builtin.run(comm.builtin.spec, x), result: bufs.output };
}

/** Inputs to the pattern, outputs to the sentinel (outputs first: in place they overlap). */
async function prepare(bc: BenchComm, p: Patterns, bufs: Buffers): Promise<void> {
  const rank = bc.comm.rank;
  if (bufs.output && bufs.output.count > 0) await bc.write(bufs.output, (h) => fillPeriodic(h, p.sentinel));
  if (bufs.input && bufs.input.count > 0) {
    await bc.write(bufs.input, (h) => fillPeriodic(h, p.inputs[rank] as TypedArray));
  }
}

/** Wrong elements of this rank's result view. */
async function check(
  bc: BenchComm,
  p: Patterns,
  o: BenchOptions,
  count: number,
  result: View | undefined,
): Promise<number> {
  const { rank, size } = bc.comm;
  let wrong = 0;
  for (const e of expectedOutput(o.collective, p, rank, size, count, o.root)) {
    if (!result || e.length === 0) continue;
    wrong += await bc.read(view(result, e.offset, e.length), (h) => countWrong(h, e.table, e.start));
  }
  return wrong;
}

interface Variant {
  readonly bufs: Buffers;
  /** The view holding this rank's result. */
  readonly result: View | undefined;
  run(): unknown;
}

/** One variant's timings: the rounds' spread, and on host engines every call's time (each taken across ranks as -a says). */
interface Timed {
  readonly rounds: Spread;
  readonly each?: Float64Array;
}

/**
 * `batch` calls of `run` back to back, each call's µs into e[at ..] from the end of the one
 * before (the first from t0). A function of its own that touches no object of the sweep, so V8's
 * compiled code for it, made in the warm-up, fits every size and variant: the loop that held it
 * was recompiled in the timed calls of each new size ("wrong map", the sweep's objects being new).
 */
async function timeEach(run: () => unknown, batch: number, e: Float64Array, at: number, t0: number): Promise<void> {
  let t = t0;
  for (let i = 0; i < batch; i++) {
    await run();
    const now = performance.now();
    e[at + i] = (now - t) * 1000;
    t = now;
  }
}

/**
 * Warm-up calls with rank 0 arriving `lateUs` late to each, on a host engine: every other rank's
 * call then waits past its first native wait, turns the event loop without a completion and
 * completes after it, so V8 has seen those paths before it optimizes the functions they run
 * through (TurboFan makes a branch it never saw a deoptimization, taken by the first late peer).
 * Without these calls, n = 4, 8 KiB: the ring's 20th timed call was slow (0.7 - 1.3 ms) in every
 * run, as was a 1 KiB recursive doubling row in one of three.
 */
async function runStaggered(bc: BenchComm, variants: readonly Variant[], calls: number, lateUs: number): Promise<void> {
  if (bc.engine !== "MPI") return;
  const late = bc.comm.rank === 0;
  for (const v of variants) {
    await bc.barrier();
    for (let i = 0; i < calls; i++) {
      if (late) {
        const until = performance.now() + lateUs / 1000;
        while (performance.now() < until) {}
      }
      await v.run();
    }
    await bc.comm.synchronize();
  }
}

/**
 * The calls of timeInterleaved, and nothing else: the warm-up runs the same loop, without the
 * reductions of statistics that would run between it and the first timed call. Returns each
 * variant's time per call of every round and, on a host engine, every call's time.
 */
async function runInterleaved(
  bc: BenchComm,
  variants: readonly Variant[],
  iters: number,
): Promise<{ perRound: number[][]; each: Float64Array[]; calls: number[] }> {
  const eachCall = bc.engine === "MPI";
  const calls = roundSizes(iters, ROUNDS);
  const perRound = variants.map(() => [] as number[]);
  const each = variants.map(() => new Float64Array(eachCall ? iters : 0));
  let at = 0;
  for (const batch of calls) {
    for (const [k, v] of variants.entries()) {
      const e = each[k] as Float64Array;
      await bc.barrier();
      const t0 = performance.now();
      if (eachCall) await timeEach(v.run, batch, e, at, t0);
      else for (let i = 0; i < batch; i++) await v.run();
      await bc.comm.synchronize();
      (perRound[k] as number[]).push(((performance.now() - t0) * 1000) / batch);
    }
    at += batch;
  }
  return { perRound, each, calls };
}

/**
 * Times `iters` calls of each variant in ROUNDS interleaved rounds (hand-rolled out of place, in
 * place, built-in, then again): each round is a batch of back-to-back calls after a barrier, as
 * nccl-tests times one batch, and its time per call is taken across ranks as -a says. On a shared
 * machine the ratio between variants then reflects the algorithms, not which one ran while
 * something else did, and the spread over rounds (stats.ts) shows how steady it was. On a host
 * engine (MPI: a call is done when its promise is) each call is also timed on its own, from the
 * end of the one before (nccl-tests' -I), into an array made before the rounds; on NCCL a call's
 * promise only says it is queued, so there only the rounds are timed.
 */
async function timeInterleaved(
  bc: BenchComm,
  variants: readonly Variant[],
  iters: number,
  how: Average,
): Promise<Timed[]> {
  const { perRound, each, calls } = await runInterleaved(bc, variants, iters);
  const out: Timed[] = [];
  for (const [k, rounds] of perRound.entries()) {
    const across = await bc.acrossRanks(Float64Array.from(rounds), how);
    const timed = { rounds: spread(Array.from(across), calls) };
    out.push(bc.engine === "MPI" ? { ...timed, each: await bc.acrossRanks(each[k] as Float64Array, how) } : timed);
  }
  return out;
}

/** A variant's per-call figures and, up to SERIES_MAX_BYTES, its series (µs, to the ns). */
function perCallOf(t: Timed, size: number): { perCall?: PerCall; series?: number[] } {
  if (!t.each || t.each.length === 0) return {};
  const ns = (x: number) => Math.round(x * 1000) / 1000;
  const raw = perCall(t.each);
  const pc = {
    ...raw,
    min: ns(raw.min),
    median: ns(raw.median),
    p99: ns(raw.p99),
    max: ns(raw.max),
    mean: ns(raw.mean),
  };
  if (size > SERIES_MAX_BYTES) return { perCall: pc };
  return { perCall: pc, series: Array.from(t.each, (x) => Math.round(x * 1000) / 1000) };
}

/** What the ratio compares: the per-call median where calls were timed one by one, else the rounds'; nccl-tests' mean. */
function ratioBasis(t: Timed | undefined): { median: number; mean: number } | undefined {
  if (!t) return undefined;
  const median = t.each && t.each.length > 0 ? perCall(t.each).median : t.rounds.median;
  return { median, mean: t.rounds.mean };
}

/** RSS high-water mark, bytes. */
function maxRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

export interface MeasuredRun {
  readonly rows: BenchRow[];
  readonly memory: MemoryReport;
  readonly builtinName: string;
}

/** Runs the whole sweep on this rank; every rank returns the same rows (times taken across ranks as o.average says). */
export async function measure(
  bc: BenchComm,
  o: BenchOptions,
  progress: BenchProgress,
  onRow: (row: BenchRow) => void = () => {},
): Promise<MeasuredRun> {
  const { comm } = bc;
  const n = comm.size;
  const shapes = sizeSweep(o.minBytes, o.maxBytes, o.stepFactor).map((b) => shapeOf(o.collective, n, b, o.dtype));
  const maxCount = maxOf(
    shapes.map((s) => s.count),
    0,
  );
  const p = patterns(o.dtype, o.op, n);
  const baseline = process.memoryUsage.rss();
  const mem = allocateMemory(comm, o.collective, o.dtype, maxCount, o.root);
  const elem = dtypeInfo(o.dtype).bytes;
  const rows: BenchRow[] = [];
  let handPeak = 0;
  let allPeak = 0;
  const engineName = builtinName(bc.engine, o.collective);
  progress.start(shapes.length * (2 * benchAlgorithms(o).length + 1));

  const requested = benchAlgorithms(o);
  for (const [index, { count, size }] of shapes.entries()) {
    const algs = requested.map((a) => resolveAlgorithm(o, n, count, a));
    const last = index === shapes.length - 1;
    const hand = (alg: string, inPlace: boolean): Variant => {
      const bufs = viewsFor(mem, comm, o.collective, count, o.root, inPlace);
      const call = benchCall(o, n, count, inPlace, findAlgorithm(o.collective, alg, { op: "bench" }));
      const mine = rankCall(call, comm.rank);
      return { bufs, result: bufs.output, run: invoker(comm, mine, alg, bufs) };
    };
    const outBufs = viewsFor(mem, comm, o.collective, count, o.root, false);
    const b = builtinCall(comm, o, count, outBufs);
    // Per algorithm out of place and in place, then the built-in: all timed in the same rounds.
    const variants: Variant[] = [
      ...algs.flatMap((alg) => [hand(alg, false), hand(alg, true)]),
      { bufs: outBufs, result: b.result, run: b.run },
    ];
    const builtinAt = variants.length - 1;

    // Warm-up through the timing loop itself, over the same variants: V8 then compiles that loop
    // (and every call path) with all they meet, here, not on a background thread sharing the
    // rank's core in the middle of the timed calls (a 10 - 13 ms TurboFan job there stalled a call
    // 4 ms; a loop warmed up without the built-in was thrown away at its first timed round:
    // measured on the development machine). At the largest size the hand-rolled variants first run alone, as
    // the memory probe: as many calls as the timed loop makes, then the RSS high-water mark
    // before the built-in has run there.
    // The first warm-up calls are timed (max over ranks, so every rank makes as many calls) and
    // bound the rest by WARMUP_BUDGET_MS a variant.
    await prepare(bc, p, outBufs);
    const hands = variants.slice(0, builtinAt);
    const probed = last ? hands : variants;
    const probe = Math.max(1, o.warmupIters);
    // A variant's call: the fastest of its rounds (each timed after its barrier, so no barrier in
    // it; the first calls of a size, of a new plan and cold code, are many times slower than the
    // rest); the slowest variant's, on the slowest rank.
    const first = await runInterleaved(bc, probed, probe);
    const perCallUs = await bc.maxOverRanks(maxOf(first.perRound.map((r) => spread(r, first.calls).min)));
    const warmup = warmupCalls(o.warmupIters, size, perCallUs);
    if (size <= 64 * 1024) await runStaggered(bc, probed, STAGGERED_CALLS, LATE_US);
    if (last) {
      await runInterleaved(bc, hands, Math.max(0, Math.max(warmup, o.iters) - probe));
      await comm.synchronize();
      handPeak = await bc.maxOverRanks(maxRss() - baseline);
    }
    // In WARMUP_PASSES calls of the loop, not one: V8 optimizes runInterleaved itself (an async
    // function with few turns of its own loop a call) only after many of its turns, and its
    // TurboFan job (26 - 30 ms, on all 4 ranks at once at n = 4) otherwise fell in the timed calls.
    // On NCCL a call only enqueues and every round's barrier costs milliseconds: one pass there.
    const rest = last ? warmup : Math.max(0, warmup - probe);
    const passes = bc.engine === "MPI" ? Math.min(WARMUP_PASSES, rest) : 1;
    for (let w = 0; w < passes; w++) {
      await runInterleaved(bc, variants, Math.floor(rest / passes) + (w < rest % passes ? 1 : 0));
    }

    const us = await timeInterleaved(bc, variants, o.iters, o.average ?? DEFAULT_AVERAGE);
    const measured: Measurement[] = [];
    for (const [k, v] of variants.entries()) {
      await prepare(bc, p, v.bufs);
      await bc.barrier();
      await v.run();
      await comm.synchronize();
      const wrong = await bc.sumOverRanks(await check(bc, p, o, count, v.result));
      const timed = us[k] as Timed;
      const t = timed.rounds;
      measured.push({
        timeUs: t.mean,
        algbw: algBandwidth(size, t.mean),
        busbw: busBandwidth(o.collective, n, size, t.mean),
        wrong,
        spread: t,
        ...perCallOf(timed, size),
      });
      const what = k === builtinAt ? engineName : `${algs[k >> 1]} ${k % 2 === 0 ? "out of place" : "in place"}`;
      progress.tick(`${size} B ${what}`);
    }
    if (last) allPeak = await bc.maxOverRanks(maxRss() - baseline);
    const builtin = measured[builtinAt] as Measurement;
    for (const [a, alg] of algs.entries()) {
      rows.push({
        size,
        count,
        type: o.dtype,
        redop: reduces(o.collective) ? opLabel(o.op) : "none",
        root: specOf(o.collective).rooted ? o.root : -1,
        algorithm: alg,
        outOfPlace: measured[2 * a] as Measurement,
        inPlace: measured[2 * a + 1] as Measurement,
        builtin,
        ratio: ratios(ratioBasis(us[2 * a]) as { median: number; mean: number }, ratioBasis(us[builtinAt])),
      });
      onRow(rows[rows.length - 1] as BenchRow);
    }
  }
  progress.stop();
  const messageBytes = shapes.length ? (shapes[shapes.length - 1] as { size: number }).size : 0;
  const ratio = (x: number) => (messageBytes > 0 ? x / messageBytes : 0);
  return {
    rows,
    builtinName: engineName,
    memory: {
      messageBytes,
      handRolledPeakBytes: handPeak,
      builtinPeakBytes: allPeak,
      handRolledRatio: ratio(handPeak),
      builtinRatio: ratio(allPeak),
      bufferBytes: (mem.send.count + mem.recv.count) * elem,
    },
  };
}

export function reduces(c: BenchCollective): boolean {
  return specOf(c).reducing;
}
