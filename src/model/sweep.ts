/**
 * Sweeping the alpha-beta model over the group size: which algorithm is faster as N grows into
 * the thousands, and where the lines cross (ring all-reduce's 2(n-1)·alpha latency against the
 * double binary tree's ~2·log2(n), the reason NCCL added trees). A call that names no segment
 * gets the one default (makeCall and defaultSegment, src/specs/index.ts), as the front API and bench do.
 */
import { type DType, dtypeInfo } from "../core/dtype.js";
import { minOf } from "../core/extent.js";
import type { Algorithm } from "../schedule/dsl.js";
import { formulaTime, type ModelParams, modelTime } from "../schedule/model.js";
import type { Collective, CollectiveCall } from "../specs/index.js";
import { lineChartSvg } from "../viz/chart.js";
import { bytesText } from "../viz/svg.js";
import { bandwidths, callOf, type Machine, machineFor, type NetworkRequest, timeOnMachine } from "./machine.js";

/** 2, 4, 8, ..., max (and max itself when it is not a power of two). */
export function powersOfTwo(max: number): number[] {
  const out: number[] = [];
  for (let n = 2; n <= max; n *= 2) out.push(n);
  if (out[out.length - 1] !== max && max >= 2) out.push(max);
  return out;
}

export interface SweepOptions {
  readonly sizes: readonly number[];
  /** Message size S in bytes, nccl-tests' meaning (callOf): per-rank collectives get S / n per rank. */
  readonly bytes: number;
  readonly dtype?: DType;
  readonly root?: number;
  /** Elements per segment; default each algorithm's (makeCall's one default). */
  readonly segment?: number;
  readonly params: ModelParams;
  /** Told before each size is modelled (the CLI's progress line). */
  readonly onSize?: (n: number, index: number, total: number) => void;
}

export interface SweepRow {
  readonly n: number;
  /** cclab's count argument at this n (per rank for per-rank collectives). */
  readonly count: number;
  /** Modelled time per algorithm, µs, in the order given. */
  readonly times: number[];
  /** Formula estimate per algorithm, µs. */
  readonly formulas: number[];
}

export interface Crossover {
  readonly a: string;
  readonly b: string;
  /** The sizes between which the faster algorithm changes. */
  readonly between: [number, number];
  /** Where the lines cross, interpolated in log2 n. */
  readonly at: number;
  /** Faster above the crossover. */
  readonly fasterAbove: string;
}

export interface SweepResult {
  readonly algorithms: string[];
  readonly rows: SweepRow[];
  readonly crossovers: Crossover[];
  /** Elements in S (S / element size); per-rank collectives get count / n per rank (each row's count). */
  readonly count: number;
  /** The segment each algorithm ran with, in the order given. */
  readonly segments: number[];
  /** Wall-clock seconds the sweep took. */
  readonly seconds: number;
}

export function sweep(algs: readonly Algorithm[], o: SweepOptions): SweepResult {
  const t0 = performance.now();
  const dtype = o.dtype ?? "float32";
  const count = Math.max(0, Math.floor(o.bytes / dtypeInfo(dtype).bytes));
  const rows: SweepRow[] = o.sizes.map((n, i) => {
    o.onSize?.(n, i, o.sizes.length);
    // The call a single `cclab model --bytes S` makes at this n: S in nccl-tests' meaning.
    const calls = algs.map((a) => callOf(a, n, o.bytes, { dtype, root: o.root ?? 0, segment: o.segment }).call);
    return {
      n,
      count: calls[0]?.count ?? count,
      times: algs.map((a, k) => modelTime(a, calls[k] as CollectiveCall, o.params).time),
      formulas: algs.map((a, k) => formulaTime(a, calls[k] as CollectiveCall, o.params)),
    };
  });
  const crossovers = crossoversOf(
    algs.map((a) => a.name),
    rows.map((r) => r.n),
    rows.map((r) => r.times),
  );
  return {
    algorithms: algs.map((a) => a.name),
    rows,
    crossovers,
    count,
    segments: algs.map(
      (a) => callOf(a, o.sizes[0] ?? 2, o.bytes, { dtype, root: o.root ?? 0, segment: o.segment }).call.segment,
    ),
    seconds: (performance.now() - t0) / 1000,
  };
}

/**
 * Where the faster of each pair of algorithms changes between consecutive x (group sizes or
 * message sizes), interpolated in log2 x. `times[k][i]` is algorithm i's time at xs[k]; a point
 * that could not be modelled (NaN) breaks no line and makes no crossover.
 */
export function crossoversOf(names: readonly string[], xs: readonly number[], times: readonly number[][]): Crossover[] {
  const out: Crossover[] = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      for (let k = 1; k < xs.length; k++) {
        const p = times[k - 1] as number[];
        const q = times[k] as number[];
        const d0 = (p[i] as number) - (p[j] as number);
        const d1 = (q[i] as number) - (q[j] as number);
        if (!Number.isFinite(d0) || !Number.isFinite(d1)) continue;
        if (d0 === 0 || d1 === 0 || Math.sign(d0) === Math.sign(d1)) continue;
        const [x0, x1] = [xs[k - 1] as number, xs[k] as number];
        const f = d0 / (d0 - d1);
        const at = 2 ** (Math.log2(x0) + f * (Math.log2(x1) - Math.log2(x0)));
        const [a, b] = [names[i] as string, names[j] as string];
        out.push({ a, b, between: [x0, x1], at, fasterAbove: d1 < 0 ? a : b });
      }
    }
  }
  return out;
}

/** The sweep as a line chart: log2 N across, modelled time up, crossovers marked. */
export function sweepChart(r: SweepResult, collective: string, bytes: number, params: ModelParams): string {
  const gbps = params.beta > 0 ? `${Number((1 / params.beta / 1e3).toPrecision(3))} GB/s` : "infinite bandwidth";
  return lineChartSvg({
    title: `${collective} of ${bytesText(bytes)}: alpha-beta model (alpha ${params.alpha} µs, ${gbps})`,
    xLabel: "ranks N (log scale)",
    yLabel: "modelled time",
    yIsTime: true,
    logY: true,
    series: r.algorithms.map((name, i) => ({ name, points: r.rows.map((row) => [row.n, row.times[i] as number]) })),
    markers: r.crossovers.map((c) => ({
      x: c.at,
      label: `${c.a} = ${c.b} at N ≈ ${Math.round(c.at)}; ${c.fasterAbove} faster above`,
    })),
  });
}

/** One algorithm at one point of a network (or size) sweep. */
export interface PointResult {
  /** µs; NaN where the point could not be modelled (`error` says why). */
  readonly time: number;
  /** GB/s, nccl-tests' definitions. */
  readonly algbw: number;
  readonly busbw: number;
  /** The network engine used ('exact', 'phases', 'symmetric'); absent on the alpha-beta model. */
  readonly engine?: string;
  readonly approximate?: boolean;
  readonly error?: string;
}

export interface GridRow {
  /** What the sweep varies: the rank count (over 'n') or the size in bytes (over 'bytes'). */
  readonly x: number;
  readonly n: number;
  /** Bytes as nccl-tests counts them (the whole array for per-rank collectives). */
  readonly size: number;
  /** cclab's count argument (per rank for per-rank collectives). */
  readonly count: number;
  /** Per algorithm, in the order given. */
  readonly results: readonly PointResult[];
}

export interface GridSweepOptions {
  readonly over: "n" | "bytes";
  /** Rank counts (over 'n': the sweep; over 'bytes': one). */
  readonly ns: readonly number[];
  /** Sizes S in bytes, nccl-tests' meaning (over 'bytes': the sweep; over 'n': one). */
  readonly sizes: readonly number[];
  readonly dtype: DType;
  readonly root?: number;
  readonly segment?: number;
  /** The network; left out, the alpha-beta model with `params`. */
  readonly network?: NetworkRequest;
  readonly params?: ModelParams;
  /** µs per byte reduced (network model; the alpha-beta model takes it in params). */
  readonly gamma?: number;
  /** Told before each algorithm at each point (the progress bar). */
  readonly onPoint?: (what: string) => void;
}

export interface GridSweep {
  readonly over: "n" | "bytes";
  readonly algorithms: string[];
  readonly rows: GridRow[];
  readonly crossovers: Crossover[];
  /** describeTopology of the largest machine swept (network sweeps). */
  readonly topology?: readonly string[];
  readonly seconds: number;
}

/**
 * Several algorithms over rank counts or over sizes, each point timed by the network model on
 * the machine built for that n (or by the alpha-beta model), with nccl-tests' bytes and
 * bandwidths, and the crossovers where the fastest changes. A point an algorithm cannot run
 * (recursive doubling at n = 6, an engine past its reach) is kept with its error, not dropped.
 */
export function gridSweep(algs: readonly Algorithm[], o: GridSweepOptions): GridSweep {
  const t0 = performance.now();
  const rows: GridRow[] = [];
  let topology: readonly string[] | undefined;
  const points =
    o.over === "n" ? o.ns.map((n) => [n, o.sizes[0] as number]) : o.sizes.map((b) => [o.ns[0] as number, b]);
  for (const [n, bytes] of points as [number, number][]) {
    let machine: Machine | undefined;
    let machineError: string | undefined;
    if (o.network) {
      try {
        machine = machineFor(o.network, n);
        topology = machine.description;
      } catch (e) {
        machineError = (e as Error).message;
      }
    }
    let size = 0;
    let count = 0;
    const results = algs.map((alg): PointResult => {
      o.onPoint?.(`${alg.name} n=${n} ${bytesText(bytes)}`);
      try {
        const { call, size: s } = callOf(alg, n, bytes, { dtype: o.dtype, root: o.root, segment: o.segment });
        size = s;
        count = call.count;
        if (machineError !== undefined) throw new Error(machineError);
        if (machine) {
          const r = timeOnMachine(alg, call, machine, o.gamma ?? 0);
          return {
            ...bandwidths(alg.collective as Collective, n, s, r.time),
            time: r.time,
            engine: r.engine,
            approximate: r.approximate,
          };
        }
        const t = modelTime(alg, call, o.params ?? { alpha: 5, beta: 1 / 25e3, gamma: 0 }).time;
        return { ...bandwidths(alg.collective as Collective, n, s, t), time: t };
      } catch (e) {
        return { time: Number.NaN, algbw: 0, busbw: 0, error: (e as Error).message };
      }
    });
    rows.push({ x: o.over === "n" ? n : bytes, n, size, count, results });
  }
  const names = algs.map((a) => a.name);
  const crossovers = crossoversOf(
    names,
    rows.map((r) => r.x),
    rows.map((r) => r.results.map((p) => p.time)),
  );
  return { over: o.over, algorithms: names, rows, crossovers, topology, seconds: (performance.now() - t0) / 1000 };
}

/** A grid sweep as a chart: busbw against size (over sizes) or time against n (over rank counts). */
export function gridChart(r: GridSweep, title: string): string {
  const bySize = r.over === "bytes";
  return lineChartSvg({
    title,
    xLabel: bySize ? "message size S (log scale)" : "ranks N (log scale)",
    yLabel: bySize ? "busbw (GB/s)" : "modelled time",
    yIsTime: !bySize,
    logY: !bySize,
    xFloor: bySize ? minOf(r.rows.map((row) => row.x)) : 2,
    ...(bySize ? { xText: (x: number) => bytesText(x) } : {}),
    series: r.algorithms.map((name, i) => ({
      name,
      points: r.rows
        .filter((row) => Number.isFinite(row.results[i]?.time))
        .map(
          (row) =>
            [row.x, bySize ? (row.results[i] as PointResult).busbw : (row.results[i] as PointResult).time] as const,
        ),
    })),
    markers: r.crossovers.map((c) => ({
      x: c.at,
      label: `${c.a} = ${c.b} at ${bySize ? bytesText(Math.round(c.at)) : `N ≈ ${Math.round(c.at)}`}; ${c.fasterAbove} faster above`,
    })),
  });
}
