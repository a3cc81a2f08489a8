/**
 * Bus bandwidth against message size as an SVG line chart: one line for the hand-rolled
 * algorithm and one for the engine's own collective (on sim, where there is none, the model's
 * link bandwidth 1/beta, which a bandwidth-optimal algorithm's busbw approaches). Sizes on a
 * log2 axis labelled in bytes, drawn by src/viz's line chart.
 */
import { lineChartSvg, type Series } from "../viz/chart.js";
import { bytesText } from "../viz/svg.js";
import type { BenchResult } from "./types.js";

/** [bytes, GB/s] per line, bytes > 0. */
export type ChartSeries = Series;

export function benchSeries(r: BenchResult): ChartSeries[] {
  const rows = r.rows.filter((x) => x.size > 0);
  const hand: ChartSeries = {
    name: `${r.collective}/${r.algorithm} (hand-rolled${r.timing === "model" ? ", model" : ""})`,
    points: rows.map((x) => [x.size, x.outOfPlace.busbw] as const),
  };
  if (r.builtinName) {
    return [
      hand,
      {
        name: `${r.builtinName} (built-in)`,
        points: rows.filter((x) => x.builtin).map((x) => [x.size, x.builtin?.busbw ?? 0] as const),
      },
    ];
  }
  const link = r.model && r.model.beta > 0 ? 1 / r.model.beta / 1e3 : 0;
  return [hand, { name: "link bandwidth 1/beta", points: rows.map((x) => [x.size, link] as const), dashed: true }];
}

export function benchChartSvg(r: BenchResult): string {
  return lineChartSvg({
    title: `cclab bench ${r.collective}: bus bandwidth, ${r.nranks} ranks (${r.backend}), ${r.dtype} ${r.op}`,
    xLabel: "message size (bytes, nccl-tests' S)",
    yLabel: "busbw (GB/s)",
    series: benchSeries(r),
    xText: bytesText,
    xFloor: 1024,
    pointText: (bytes, gbs) => `${bytesText(bytes)}: ${gbs.toFixed(2)} GB/s`,
  });
}
