/**
 * Bus bandwidth against message size as an SVG line chart: one line for the hand-rolled
 * algorithm and one for the engine's own collective (on sim, where there is none, the model's
 * link bandwidth 1/beta, which a bandwidth-optimal algorithm's busbw approaches). Sizes on a
 * log2 axis labelled in bytes; pure string building, like src/viz.
 */
import { bytesText, esc, px, svgDocument } from "../viz/svg.js";
import type { BenchResult } from "./types.js";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c"];

export interface ChartSeries {
  readonly name: string;
  /** [bytes, GB/s], bytes > 0. */
  readonly points: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
}

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

/** 1, 2 or 5 times a power of ten, at least v. */
function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function benchChartSvg(r: BenchResult): string {
  const series = benchSeries(r);
  const title = `cclab bench ${r.collective}: bus bandwidth, ${r.nranks} ranks (${r.backend}), ${r.dtype} ${r.op}`;
  const width = 900;
  const height = 520;
  const left = 80;
  const right = 290;
  const top = 56;
  const bottom = 70;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const xMin = Math.max(1, Math.min(...xs, 1024));
  const xMax = Math.max(...xs, xMin * 2);
  const yMax = niceCeil(Math.max(...ys, 1e-6) * 1.05);
  const lx = (v: number) => Math.log2(v);
  const X = (v: number) => left + ((lx(v) - lx(xMin)) / (lx(xMax) - lx(xMin) || 1)) * plotW;
  const Y = (v: number) => top + plotH - (v / yMax) * plotH;
  const body: string[] = [`<text x="${left}" y="30" font-size="16" font-weight="bold">${esc(title)}</text>`];

  body.push('<g class="axes" font-size="11">');
  body.push(
    `<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${left + plotW / 2}" y="${height - 22}" font-size="13" text-anchor="middle">message size (bytes, nccl-tests' S)</text>`,
    `<text x="22" y="${top + plotH / 2}" font-size="13" text-anchor="middle" transform="rotate(-90 22 ${top + plotH / 2})">busbw (GB/s)</text>`,
  );
  const e0 = Math.ceil(lx(xMin));
  const e1 = Math.floor(lx(xMax));
  const every = Math.max(1, Math.ceil((e1 - e0 + 1) / 10));
  for (let e = e0; e <= e1; e++) {
    const gx = px(X(2 ** e));
    body.push(`<line x1="${gx}" y1="${top}" x2="${gx}" y2="${top + plotH}" stroke="#eee"/>`);
    if ((e - e0) % every === 0) {
      body.push(
        `<text class="xtick" x="${gx}" y="${top + plotH + 16}" text-anchor="middle">${esc(bytesText(2 ** e))}</text>`,
      );
    }
  }
  for (let i = 0; i <= 5; i++) {
    const v = (yMax * i) / 5;
    body.push(
      `<line x1="${left}" y1="${px(Y(v))}" x2="${left + plotW}" y2="${px(Y(v))}" stroke="#eee"/>`,
      `<text class="ytick" x="${left - 6}" y="${px(Y(v) + 4)}" text-anchor="end">${Number(v.toPrecision(3))}</text>`,
    );
  }
  body.push("</g>");

  body.push('<g class="series">');
  series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length] as string;
    const dash = s.dashed ? ' stroke-dasharray="6,4"' : "";
    const pts = s.points.map(([a, b]) => `${px(X(a))},${px(Y(b))}`).join(" ");
    body.push(
      `<g class="line" data-name="${esc(s.name)}">`,
      `<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"${dash}/>`,
      ...s.points.map(
        ([a, b]) =>
          `<circle cx="${px(X(a))}" cy="${px(Y(b))}" r="3" fill="${c}"><title>${esc(`${bytesText(a)}: ${b.toFixed(2)} GB/s`)}</title></circle>`,
      ),
      "</g>",
    );
    const ly = top + 10 + i * 20;
    body.push(
      `<line x1="${left + plotW + 14}" y1="${ly}" x2="${left + plotW + 38}" y2="${ly}" stroke="${c}" stroke-width="2"${dash}/>`,
      `<text x="${left + plotW + 44}" y="${ly + 4}" font-size="12">${esc(s.name)}</text>`,
    );
  });
  body.push("</g>");
  return svgDocument(width, height, title, body);
}
