/**
 * Sweeping the alpha-beta model over the group size: which algorithm is faster as N grows into
 * the thousands, and where the lines cross (ring all-reduce's 2(n-1)·alpha latency against the
 * double binary tree's ~2·log2(n), the reason NCCL added trees). A call that names no segment
 * gets the one default (makeCall, src/specs/segment.ts), as the front API and bench do.
 */
import { type DType, dtypeInfo } from "../core/dtype.js";
import type { Algorithm } from "../schedule/dsl.js";
import { formulaTime, type ModelParams, modelTime } from "../schedule/model.js";
import { makeCall } from "../specs/index.js";
import { lineChartSvg } from "../viz/chart.js";
import { bytesText } from "../viz/svg.js";

/** 2, 4, 8, ..., max (and max itself when it is not a power of two). */
export function powersOfTwo(max: number): number[] {
  const out: number[] = [];
  for (let n = 2; n <= max; n *= 2) out.push(n);
  if (out[out.length - 1] !== max && max >= 2) out.push(max);
  return out;
}

export interface SweepOptions {
  readonly sizes: readonly number[];
  /** Message size in bytes (count = bytes / element size). */
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
    const call = (a: Algorithm) =>
      makeCall({ collective: a.collective, size: n, count, root: o.root ?? 0, dtype, segment: o.segment }, a);
    return {
      n,
      times: algs.map((a) => modelTime(a, call(a), o.params).time),
      formulas: algs.map((a) => formulaTime(a, call(a), o.params)),
    };
  });
  const crossovers: Crossover[] = [];
  for (let i = 0; i < algs.length; i++) {
    for (let j = i + 1; j < algs.length; j++) {
      for (let k = 1; k < rows.length; k++) {
        const p = rows[k - 1] as SweepRow;
        const q = rows[k] as SweepRow;
        const d0 = (p.times[i] as number) - (p.times[j] as number);
        const d1 = (q.times[i] as number) - (q.times[j] as number);
        if (d0 === 0 || d1 === 0 || Math.sign(d0) === Math.sign(d1)) continue;
        const f = d0 / (d0 - d1);
        const at = 2 ** (Math.log2(p.n) + f * (Math.log2(q.n) - Math.log2(p.n)));
        const [a, b] = [(algs[i] as Algorithm).name, (algs[j] as Algorithm).name];
        crossovers.push({ a, b, between: [p.n, q.n], at, fasterAbove: d1 < 0 ? a : b });
      }
    }
  }
  return {
    algorithms: algs.map((a) => a.name),
    rows,
    crossovers,
    count,
    segments: algs.map(
      (a) => makeCall({ collective: a.collective, size: 2, count, dtype, segment: o.segment }, a).segment,
    ),
    seconds: (performance.now() - t0) / 1000,
  };
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
