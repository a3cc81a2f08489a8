/**
 * The network model's pictures: link utilization drawn on the machine (a torus or mesh grid, a
 * ring, the levels of a fat-tree or a rail system), busbw against message size, and the topology
 * picture of the step-through page, whose links the page colours by the bytes a step puts on them.
 *
 * Every picture is built from one geometry: drawn nodes (a router, a switch, or a box standing
 * for several) and shapes (a line for the links between two drawn nodes in one direction, or a
 * drawn node's own fill for the links it swallows). Every link of the topology belongs to at most
 * one shape, and a shape shows the hottest of its links. Large machines are aggregated so the
 * file stays bounded (a few hundred kB at 16,384 hosts): a grid beyond 1,024 routers becomes one
 * cell per router (or per block of routers) coloured by its hottest outgoing link, a level beyond
 * 128 nodes becomes boxes of consecutive nodes, a ring beyond 128 routers sectors. The caption
 * says what was aggregated.
 */
import { minOf } from "../core/extent.js";
import { bytesByClass, hottestLinks } from "../model/network/index.js";
import type { Topology } from "../model/network/types.js";
import { HEAT_UNUSED, heatColor, heatGradientStops, lineChartSvg } from "./chart.js";
import { LEFT, type Shape, TOP, type TopologyGeometry, topologyGeometry, WIDTH } from "./network-geometry.js";
import { bytesText, esc, px, svgDocument, timeText } from "./svg.js";

export { type TopologyGeometry, topologyGeometry } from "./network-geometry.js";
export interface HeatmapOptions {
  readonly title?: string;
  /** Hottest links listed in the caption (default 5). */
  readonly maxLinks?: number;
}

/** The heat map's parts, for tests: the SVG and each shape's colour. */
export interface Heatmap {
  readonly svg: string;
  readonly geometry: TopologyGeometry;
  readonly colors: readonly string[];
  /** Per shape, the hottest utilization among its links. */
  readonly values: Float64Array;
  readonly maxUtilization: number;
}

export function linkHeatmap(t: Topology, linkBytes: Float64Array, time: number, opts: HeatmapOptions = {}): Heatmap {
  if (linkBytes.length !== t.links.count)
    throw new Error(`linkHeatmapSvg: linkBytes has ${linkBytes.length} entries, the topology ${t.links.count} links`);
  const g = topologyGeometry(t);
  const values = new Float64Array(g.shapes.length);
  const used = new Uint8Array(g.shapes.length);
  let max = 0;
  for (let l = 0; l < t.links.count; l++) {
    const s = g.shapeOf[l] as number;
    const bytes = linkBytes[l] as number;
    if (s < 0 || !(bytes > 0)) continue;
    const u = time > 0 ? bytes / ((t.links.bandwidth[l] as number) * time) : 0;
    used[s] = 1;
    if (u > (values[s] as number)) values[s] = u;
    if (u > max) max = u;
  }
  const colors = Array.from(values, (v, s) => (used[s] ? heatColor(max > 0 ? v / max : 0) : HEAT_UNUSED));
  const title = opts.title ?? `link utilization on ${t.name}`;
  const hot = hottestLinks(t, linkBytes, time, opts.maxLinks ?? 5);
  // Hottest drawn last, on top.
  const order = Array.from(g.shapes.keys()).sort((a, c) => (values[a] as number) - (values[c] as number) || a - c);
  const body: string[] = [`<text x="${LEFT}" y="28" font-size="17" font-weight="bold">${esc(title)}</text>`];
  body.push('<g class="shapes">');
  for (const s of order) {
    const sh = g.shapes[s] as Shape;
    body.push(`${sh.el} ${sh.attr}="${colors[s]}"/>`);
  }
  body.push("</g>", '<g class="labels">', ...g.labels, "</g>");
  const y0 = g.height + 10;
  const legend = legendSvg(LEFT, y0, `0 — hottest link: ${pct(max)} busy`);
  const lines = [
    `utilization = bytes / (bandwidth × time), time = ${timeText(time)}; colours relative to the hottest link`,
    ...g.notes,
    ...(hot.length > 0
      ? [
          `bytes by link kind: ${bytesByClass(t, linkBytes)
            .filter((c) => c.bytes > 0)
            .map((c) => `${c.kind} ${bytesText(Math.round(c.bytes))} (${pct(c.share)})`)
            .join(", ")}`,
          "hottest links:",
        ]
      : ["no link carried any bytes"]),
    ...hot.map(
      (h, i) => `${i + 1}. ${h.from} → ${h.to} (${h.kind}): ${pct(h.utilization)}, ${bytesText(Math.round(h.bytes))}`,
    ),
  ];
  const caption = wrapLines(lines, 135);
  body.push(legend, '<g class="caption" font-size="12">');
  caption.forEach((c, i) => {
    body.push(`<text x="${LEFT}" y="${px(y0 + 50 + i * 16)}">${esc(c)}</text>`);
  });
  body.push("</g>");
  const svg = svgDocument(
    Math.max(g.width, WIDTH),
    y0 + 50 + caption.length * 16 + 10,
    title,
    body,
    heatGradient("heat"),
  );
  return { svg, geometry: g, colors, values, maxUtilization: max };
}

/**
 * Link utilization (bytes / (bandwidth × time)) drawn on the topology by its layout, with a colour
 * legend and the hottest links in the caption. Bounded in size at any scale (aggregates beyond a
 * few thousand drawn links; see the file's comment).
 */
export function linkHeatmapSvg(
  t: Topology,
  linkBytes: Float64Array,
  time: number,
  opts: { title?: string; maxLinks?: number } = {},
): string {
  return linkHeatmap(t, linkBytes, time, opts).svg;
}

function heatGradient(id: string): string {
  return `<linearGradient id="${id}" x1="0" x2="1" y1="0" y2="0">${heatGradientStops()
    .map(([o, c]) => `<stop offset="${o}" stop-color="${c}"/>`)
    .join("")}</linearGradient>`;
}

function legendSvg(x: number, y: number, text: string): string {
  return [
    '<g class="legend" font-size="12">',
    `<rect x="${x}" y="${y}" width="240" height="14" fill="url(#heat)" stroke="#333" stroke-width="0.5"/>`,
    `<text x="${x + 250}" y="${y + 11}">${esc(text)}</text>`,
    `<rect x="${x}" y="${y + 20}" width="14" height="14" fill="${HEAT_UNUSED}" stroke="#333" stroke-width="0.5"/>`,
    `<text x="${x + 20}" y="${y + 31}">no bytes</text>`,
    "</g>",
  ].join("");
}

/** 0.4237 -> '42.4%'; small values keep two significant digits. */
function pct(u: number): string {
  const v = u * 100;
  return `${v >= 1 || v === 0 ? v.toFixed(1) : v.toPrecision(2)}%`;
}

function wrapLines(lines: readonly string[], width: number): string[] {
  const out: string[] = [];
  for (const line of lines) {
    let rest = line;
    while (rest.length > width) {
      const cut = rest.lastIndexOf(" ", width);
      const at = cut > width / 2 ? cut : width;
      out.push(rest.slice(0, at));
      rest = `   ${rest.slice(at).trimStart()}`;
    }
    out.push(rest);
  }
  return out;
}

/** busbw against message size (log2 x), one line per algorithm. */
export function busbwChartSvg(
  series: { name: string; points: [bytes: number, busbwGBps: number][] }[],
  title: string,
): string {
  return lineChartSvg({
    title,
    xLabel: "message size",
    yLabel: "busbw (GB/s)",
    series: series.map((s) => ({ name: s.name, points: s.points })),
    xText: (x) => bytesText(x),
    pointText: (x, y) => `${bytesText(x)}: ${Number(y.toPrecision(4))} GB/s`,
    xFloor: minOf(series.flatMap((s) => s.points.map((p) => p[0]))),
  });
}

/** The step-through page's topology picture: shapes grey, each tagged with its id for the page's colouring. */
export interface PageNetwork {
  readonly svg: string;
  /** Per link, its shape (-1: not drawn). */
  readonly shapeOf: readonly number[];
  /** Per ordered rank pair 'from>to' that sends: [link, share / bandwidth (µs per byte)] flattened. */
  readonly routes: Readonly<Record<string, readonly number[]>>;
  /** Per link, 'from → to (kind)', for the page's caption. */
  readonly linkNames: readonly string[];
  readonly caption: string;
}

/** Ranks the page colours links for (each view's routes and picture travel in the page). */
export const PAGE_MAX_RANKS = 64;

/** Topologies the page draws: their link arrays travel in the page. */
export const PAGE_MAX_LINKS = 20_000;

/**
 * What the page needs to colour the links a step loads: the topology picture and every sending
 * pair's route (placement maps rank -> host; a multipath route's links each carry their share).
 */
export function pageNetwork(
  t: Topology,
  placement: Int32Array,
  pairs: Iterable<readonly [from: number, to: number]>,
): PageNetwork {
  if (placement.length > PAGE_MAX_RANKS)
    throw new Error(
      `the step-through page colours the links of at most ${PAGE_MAX_RANKS} ranks; this call has ${placement.length} (model larger groups with cclab model --topology)`,
    );
  if (t.links.count > PAGE_MAX_LINKS)
    throw new Error(
      `the step-through page draws topologies of at most ${PAGE_MAX_LINKS} links; ${t.name} has ${t.links.count}`,
    );
  const g = topologyGeometry(t);
  const body: string[] = ['<g class="shapes">'];
  g.shapes.forEach((sh, i) => {
    body.push(`${sh.el} ${sh.attr}="${HEAT_UNUSED}" data-s="${i}"/>`);
  });
  body.push("</g>", '<g class="labels">', ...g.labels, "</g>");
  // No title band (the page has its own heading), and no fixed size: the page scales it to its box.
  const y0 = TOP - 30;
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 ${y0} ${Math.ceil(g.width)} ${Math.ceil(g.height - y0)}" font-family="Helvetica, Arial, sans-serif">`,
    `<title>${esc(t.name)}</title>`,
    ...body,
    "</svg>",
  ].join("\n");
  const routes: Record<string, number[]> = {};
  for (const [a, b] of pairs) {
    const key = `${a}>${b}`;
    if (routes[key]) continue;
    const ha = placement[a];
    const hb = placement[b];
    if (ha === undefined || hb === undefined)
      throw new Error(`the page's topology: rank ${ha === undefined ? a : b} has no host (${placement.length} placed)`);
    const flat: number[] = [];
    if (ha !== hb) {
      const paths = t.paths(ha, hb);
      const share = new Map<number, number>();
      for (const p of paths) for (const l of p) share.set(l, (share.get(l) ?? 0) + 1 / paths.length);
      for (const [l, s] of share) flat.push(l, s / (t.links.bandwidth[l] as number));
    }
    routes[key] = flat;
  }
  const L = t.links;
  return {
    svg,
    shapeOf: Array.from(g.shapeOf),
    routes,
    linkNames: Array.from(
      { length: L.count },
      (_, l) => `${t.nodeName(L.from[l] as number)} → ${t.nodeName(L.to[l] as number)} (${L.kind[l]})`,
    ),
    caption: `${t.name}: links coloured by the bytes this step puts on them over their bandwidth (relative to the busiest). ${g.notes.join("; ")}`,
  };
}
