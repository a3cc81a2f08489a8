/**
 * A line chart as SVG, log2 x: `cclab model --sweep` (modelled time against group size, dashed
 * markers where two lines cross) and `cclab bench --chart` (busbw against message size).
 */
import { maxOf, minOf } from "../core/extent.js";
import { esc, px, svgDocument, timeText } from "./svg.js";

export interface Series {
  readonly name: string;
  /** [x, y] with x > 0 (log scale), in increasing x. */
  readonly points: readonly (readonly [number, number])[];
  /** Drawn dashed (a reference line rather than a measurement). */
  readonly dashed?: boolean;
}

export interface Marker {
  readonly x: number;
  readonly label: string;
}

export interface ChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  readonly markers?: readonly Marker[];
  /** y values are microseconds: label ticks as times. */
  readonly yIsTime?: boolean;
  /** Log-scale y (times that span decades). Default false. */
  readonly logY?: boolean;
  /** Text of an x tick at a power of two (default the number). */
  readonly xText?: (x: number) => string;
  /** Hover text of a point (default none). */
  readonly pointText?: (x: number, y: number) => string;
  /** Smallest x the axis starts at, at most (default 2). */
  readonly xFloor?: number;
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];

export function lineChartSvg(o: ChartOptions): string {
  const width = 960;
  const height = 520;
  const left = 90;
  const right = 300;
  const top = 56;
  const bottom = 70;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const xs = o.series.flatMap((s) => s.points.map((p) => p[0])).filter((v) => v > 0);
  const ys = o.series.flatMap((s) => s.points.map((p) => p[1]));
  const xMin = Math.max(1, minOf(xs, o.xFloor ?? 2));
  const xMax = maxOf(xs, xMin * 2);
  const lx = (v: number) => Math.log2(v);
  const yMax0 = maxOf(ys, 1e-9);
  const yMin0 = o.logY
    ? minOf(
        ys.filter((v) => v > 0),
        yMax0,
      )
    : 0;
  const ty = (v: number) => (o.logY ? Math.log10(v > 0 ? v : yMin0) : v);
  // Log axis: the data's own range with a little room (not whole decades), so lines that differ
  // by 3x fill the plot instead of sharing a corner of it.
  const logRange = logAxis(yMin0, yMax0);
  const [y0, y1] = o.logY ? [Math.log10(logRange.lo), Math.log10(logRange.hi)] : [0, niceCeil(yMax0)];
  const X = (v: number) => left + ((lx(v) - lx(xMin)) / (lx(xMax) - lx(xMin) || 1)) * plotW;
  const Y = (v: number) => top + plotH - ((ty(v) - y0) / (y1 - y0 || 1)) * plotH;
  const yText = (v: number) => (o.yIsTime ? timeText(v) : String(Number(v.toPrecision(4))));
  const body: string[] = [`<text x="${left}" y="30" font-size="17" font-weight="bold">${esc(o.title)}</text>`];

  // Axes and grid.
  body.push('<g class="axes" font-size="13">');
  body.push(
    `<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${left + plotW / 2}" y="${height - 22}" font-size="14" text-anchor="middle">${esc(o.xLabel)}</text>`,
    `<text x="22" y="${top + plotH / 2}" font-size="14" text-anchor="middle" transform="rotate(-90 22 ${top + plotH / 2})">${esc(o.yLabel)}</text>`,
  );
  // A grid line at every power of two; at most about 12 labels, so long size sweeps stay legible.
  const e0 = Math.ceil(lx(xMin));
  const e1 = Math.floor(lx(xMax));
  const every = Math.max(1, Math.ceil((e1 - e0 + 1) / 12));
  for (let e = e0; e <= e1; e++) {
    const gx = X(2 ** e);
    body.push(`<line x1="${px(gx)}" y1="${top}" x2="${px(gx)}" y2="${top + plotH}" stroke="#eee"/>`);
    if ((e - e0) % every === 0) {
      const text = o.xText ? o.xText(2 ** e) : String(2 ** e);
      body.push(`<text class="xtick" x="${px(gx)}" y="${top + plotH + 16}" text-anchor="middle">${esc(text)}</text>`);
    }
  }
  const yTicks: number[] = [];
  if (o.logY) yTicks.push(...logRange.ticks);
  else for (let i = 0; i <= 5; i++) yTicks.push((y1 * i) / 5);
  for (const v of yTicks) {
    body.push(
      `<line x1="${left}" y1="${px(Y(v))}" x2="${left + plotW}" y2="${px(Y(v))}" stroke="#eee"/>`,
      `<text class="ytick" x="${left - 6}" y="${px(Y(v) + 4)}" text-anchor="end">${esc(yText(v))}</text>`,
    );
  }
  body.push("</g>");

  // Crossover markers.
  body.push('<g class="markers">');
  for (const m of o.markers ?? []) {
    const mx = X(m.x);
    // Right of the line in the left half, left of it in the right half; one line per '; ' part.
    const right = mx < left + plotW / 2;
    body.push(
      `<line class="crossover" x1="${px(mx)}" y1="${top}" x2="${px(mx)}" y2="${top + plotH}" stroke="#555" stroke-dasharray="6,4"/>`,
      ...m.label
        .split("; ")
        .map(
          (part, i) =>
            `<text x="${px(right ? mx + 6 : mx - 6)}" y="${top + plotH - 30 + i * 15}" font-size="12" fill="#333" text-anchor="${right ? "start" : "end"}" stroke="#fff" stroke-width="3" paint-order="stroke">${esc(part)}</text>`,
        ),
    );
  }
  body.push("</g>");

  // Lines and the legend.
  body.push('<g class="series">');
  o.series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length] as string;
    const dash = s.dashed ? ' stroke-dasharray="6,4"' : "";
    const pts = s.points.map(([a, b]) => `${px(X(a))},${px(Y(b))}`).join(" ");
    const hover = (a: number, b: number) => (o.pointText ? `<title>${esc(o.pointText(a, b))}</title>` : "");
    body.push(
      `<g class="line" data-name="${esc(s.name)}">`,
      `<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"${dash}/>`,
      ...s.points.map(
        ([a, b]) => `<circle cx="${px(X(a))}" cy="${px(Y(b))}" r="3" fill="${c}">${hover(a, b)}</circle>`,
      ),
      "</g>",
    );
    const ly = top + 10 + i * 20;
    body.push(
      `<line x1="${left + plotW + 14}" y1="${ly}" x2="${left + plotW + 38}" y2="${ly}" stroke="${c}" stroke-width="2"${dash}/>`,
      `<text x="${left + plotW + 44}" y="${ly + 5}" font-size="14">${esc(s.name)}</text>`,
    );
  });
  body.push("</g>");
  return svgDocument(width, height, o.title, body);
}

/**
 * A log axis for data in [min, max]: bounds a little outside the data, and tick values at 1-2-5
 * steps of each decade inside them (finer, 1..9, when that gives fewer than three; plain even
 * steps when even that does, as for data within a factor of two).
 */
export function logAxis(min: number, max: number): { lo: number; hi: number; ticks: number[] } {
  const a = min > 0 ? min : 1;
  const b = Math.max(max, a * 1.0001);
  const pad = (b / a) ** 0.06;
  const lo = a / pad;
  const hi = b * pad;
  const within = (ms: number[]) => {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
      for (const m of ms) {
        const v = Number((m * 10 ** e).toPrecision(6));
        if (v >= lo && v <= hi) out.push(v);
      }
    return out;
  };
  for (const ms of [[1], [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
    const t = within(ms);
    if (t.length >= 3 && t.length <= 12) {
      // The axis reaches a labelled value at or above the data's largest (10 ms of labels under
      // data that reaches 15 read as a chart that stops short): the next round value, and hi with it.
      if ((t[t.length - 1] as number) < b) {
        let next = Number.POSITIVE_INFINITY;
        for (let e = Math.floor(Math.log10(b)); e <= Math.ceil(Math.log10(b)) + 1; e++)
          for (const m of ms) {
            const v = Number((m * 10 ** e).toPrecision(6));
            if (v >= b && v < next) next = v;
          }
        if (Number.isFinite(next)) return { lo, hi: Math.max(hi, next), ticks: [...t, next] };
      }
      return { lo, hi, ticks: t };
    }
  }
  // Too narrow for round values per decade: about five even steps.
  const raw = (hi - lo) / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * p >= raw) ?? 10) * p;
  const ticks: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) ticks.push(Number(v.toPrecision(6)));
  return { lo, hi, ticks };
}

/** 1, 2 or 5 times a power of ten, at least v. */
function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** The heat maps' colour scale: five stops of viridis, cold (dark blue) to hot (yellow). */
const HEAT = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"] as const;

/** Links that carried nothing: grey, outside the scale. */
export const HEAT_UNUSED = "#d9d9d9";

/** A colour for f in [0, 1] (clamped): viridis, interpolated between its five stops; 1 is exactly the last stop. */
export function heatColor(f: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(f) ? f : 0)) * (HEAT.length - 1);
  const i = Math.min(HEAT.length - 2, Math.floor(x));
  const a = HEAT[i] as string;
  const b = HEAT[i + 1] as string;
  const mix = (k: number) => {
    const va = Number.parseInt(a.slice(k, k + 2), 16);
    const vb = Number.parseInt(b.slice(k, k + 2), 16);
    return Math.round(va + (vb - va) * (x - i))
      .toString(16)
      .padStart(2, "0");
  };
  return `#${mix(1)}${mix(3)}${mix(5)}`;
}

/** The scale's stops as [offset, colour], for an SVG gradient legend. */
export function heatGradientStops(): [number, string][] {
  return HEAT.map((c, i) => [i / (HEAT.length - 1), c]);
}
