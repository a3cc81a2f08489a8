/**
 * The time-space diagram's SVG elements for one view (size, margins, zoom, step shown) of a
 * Diagram (diagram.ts): one horizontal lane per rank, an arrow per message from the send's post to
 * the receive's completion, dashed guides where each algorithm step's first message leaves, small boxes where
 * ranks reduce or copy locally, red waits-for arrows where a run deadlocked, the time axis and the
 * legend. Labels go through the collision-free layout (labels.ts).
 *
 * A pure string builder used twice: trace.ts writes the static picture, and the step-through page
 * (page.ts, client/) calls renderDiagram in the browser at every zoom, pan or step, with text
 * widths the browser measures. Touches no DOM and no file.
 */
import type { TraceEvent } from "../trace.js";
import type { Diagram, DrawnMessage } from "./diagram.js";
import {
  type Box,
  type Candidate,
  estimateWidth,
  type LabelMode,
  type Measure,
  Occupancy,
  placeLabels,
  textBox,
} from "./labels.js";
import { bytesText, esc, px } from "./svg.js";

/** A pan/zoom transform of the plot (d3-zoom's k, x, y): screen = plot origin + k * base + (x, y). */
export interface Zoom {
  readonly k: number;
  readonly x: number;
  readonly y: number;
}

export interface RenderOptions {
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
  readonly title?: string;
  readonly labels?: LabelMode;
  readonly measure?: Measure;
  readonly zoom?: Zoom;
  /** The step being shown: its messages are emphasised and later ones faded (default: none, all plain). */
  readonly current?: number;
  /** Which slider position a message belongs to (default its step). */
  readonly phaseOf?: (m: DrawnMessage) => number | undefined;
  /** Draw the legend under the axis (the static picture; the page has its own). */
  readonly legend?: boolean;
  /** Build only `parts` (the page moving a step over an unchanged view); body then lacks the messages. */
  readonly partsOnly?: boolean;
  /**
   * The page: no hover bars or titles in the markup (it adds them to the hovered message), and a
   * message's phase as data-p (the page fades by a style rule, so a step alone redraws little).
   */
  readonly lean?: boolean;
}

export interface Rendered {
  readonly body: string[];
  readonly defs: string;
  /** Message labels shown and left out (hover text remains for those). */
  readonly shown: number;
  readonly hidden: number;
  /** The groups that change with the step alone (the page replaces just these when only the step moves). */
  readonly parts: { readonly locals: string; readonly "msg-labels": string };
}

const FONT = { title: 18, lane: 14, header: 12, label: 12, axis: 12, legend: 12 };

/** One arrowhead per colour (context-stroke is not yet everywhere), and the plot's clip. */
function diagramDefs(o: RenderOptions): string {
  const plotW = o.width - o.left - o.right;
  const plotH = o.height - o.top - o.bottom;
  const heads = [...PALETTE, "#d62728"].map(
    (c, i) =>
      `<marker id="arrow-${i}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="${c}"/></marker>`,
  );
  return `${heads.join("")}<clipPath id="plot-clip"><rect x="${o.left}" y="${o.top}" width="${px(plotW)}" height="${px(plotH)}"/></clipPath>`;
}

/** Styles the diagram carries itself, so hover works in a bare SVG too. */
export const DIAGRAM_CSS =
  ".msg .op-bar{visibility:hidden}.msg:hover .op-bar{visibility:visible}" +
  ".msg:hover line.arrow{stroke-width:3.5}.msg.future{opacity:.13}.msg.current line.arrow{stroke-width:2.6}" +
  ".msg-label{paint-order:stroke;stroke:#fff;stroke-width:3px}.locals .future{opacity:.15}";

/** Where a time and a rank are drawn in a view: X(t) and Y(rank) in SVG coordinates. */
export function diagramScales(d: Diagram, o: RenderOptions): { X: (t: number) => number; Y: (r: number) => number } {
  const z = o.zoom ?? { k: 1, x: 0, y: 0 };
  const plotW = o.width - o.left - o.right;
  const laneGap = (o.height - o.top - o.bottom) / Math.max(1, d.size);
  return {
    X: (t) => o.left + z.x + z.k * (((t - d.t0) / (d.t1 - d.t0)) * plotW),
    Y: (r) => o.top + z.y + z.k * ((r + 0.5) * laneGap),
  };
}

/** A message's send and receive as thick bars on their lanes, from post to completion (shown on hover). */
export function opBars(m: DrawnMessage, X: (t: number) => number, Y: (r: number) => number, color?: string): string {
  const c = color ?? (PALETTE[(m.step ?? 0) % PALETTE.length] as string);
  const bar = (cls: string, e: TraceEvent) =>
    `<line class="op-bar ${cls}" x1="${px(X(e.start))}" y1="${px(Y(e.rank))}" x2="${px(Math.max(X(e.end), X(e.start) + 2))}" y2="${px(Y(e.rank))}" stroke="${c}" stroke-width="6" stroke-opacity="0.45"/>`;
  return bar("send", m.send) + bar("recv", m.recv);
}

/** One view being drawn: the diagram, its scales and bounds, the label space taken so far, the elements written. */
interface View {
  readonly d: Diagram;
  readonly o: RenderOptions;
  readonly measure: Measure;
  readonly z: Zoom;
  readonly plotW: number;
  readonly plotH: number;
  readonly laneGap: number;
  readonly X: (t: number) => number;
  readonly Y: (r: number) => number;
  readonly visX: (x: number) => boolean;
  readonly visY: (y: number) => boolean;
  readonly occupied: Occupancy;
  readonly body: string[];
  readonly clip: string;
}

/** The diagram's SVG elements for one view of it (see Diagram, RenderOptions). */
export function renderDiagram(d: Diagram, o: RenderOptions): Rendered {
  const plotW = o.width - o.left - o.right;
  const plotH = o.height - o.top - o.bottom;
  const v: View = {
    d,
    o,
    measure: o.measure ?? estimateWidth,
    z: o.zoom ?? { k: 1, x: 0, y: 0 },
    plotW,
    plotH,
    laneGap: plotH / Math.max(1, d.size),
    ...diagramScales(d, o),
    visX: (x: number) => x >= o.left - 1 && x <= o.left + plotW + 1,
    visY: (y: number) => y >= o.top - 1 && y <= o.top + plotH + 1,
    occupied: new Occupancy(),
    body: [],
    clip: ' clip-path="url(#plot-clip)"',
  };
  const phaseOf = o.phaseOf ?? ((m: DrawnMessage) => m.step);
  const body = v.body;
  if (o.title)
    body.push(`<text x="${o.left}" y="28" font-size="${FONT.title}" font-weight="bold">${esc(o.title)}</text>`);
  drawLanes(v);
  drawStepGuides(v);
  const localsAt = body.length;
  drawLocals(v, phaseOf);
  const localsEnd = body.length;
  const labels = drawMessages(v, phaseOf);
  drawDeadlocks(v);
  drawAxis(v);
  if (o.legend) body.push(...legend(o.left, o.height - 14, v.measure));
  const parts = {
    locals: body.slice(localsAt, localsEnd).join(""),
    "msg-labels": body.slice(labels.at, labels.end).join(""),
  };
  return { body, defs: diagramDefs(o), shown: labels.shown, hidden: labels.hidden, parts };
}

/** Lanes, and their labels where there is room (every k-th when lanes are close). */
function drawLanes(v: View): void {
  const { d, o, measure, plotW, plotH, Y, visY, occupied, body, clip } = v;
  body.push(`<g class="lanes"${clip}>`);
  const laneLabels: { r: number; c: Candidate }[] = [];
  for (let r = 0; r < d.size; r++) {
    const y = Y(r);
    if (!visY(y)) continue;
    body.push(
      `<line class="lane" x1="${o.left}" y1="${px(y)}" x2="${px(o.left + plotW)}" y2="${px(y)}" stroke="#333" stroke-width="1.2"/>`,
    );
    occupied.add({ x: o.left, y: y - 1, w: plotW, h: 2 });
    laneLabels.push({ r, c: textBox(`rank ${r}`, o.left - 10, y + FONT.lane * 0.35, FONT.lane, "end", measure) });
  }
  body.push("</g>");
  const laneBounds: Box = { x: 0, y: o.top - FONT.lane, w: o.left, h: plotH + 2 * FONT.lane };
  const placedLanes = placeLabels(
    laneLabels.map((l) => ({ candidates: [l.c] })),
    occupied,
    laneBounds,
  );
  body.push('<g class="lane-labels">');
  placedLanes.forEach((c, i) => {
    if (c) body.push(labelText("label lane-label", c, FONT.lane, "#000", `data-rank="${laneLabels[i]?.r}"`));
  });
  body.push("</g>");
}

/** Step guides where each step's first message leaves, and their headers in the band above the plot. */
function drawStepGuides(v: View): void {
  const { d, o, measure, plotW, plotH, X, visX, occupied, body } = v;
  body.push(`<g class="step-guides">`);
  const headerReqs: { candidates: Candidate[] }[] = [];
  for (const g of d.guides) {
    const x = X(g.start);
    if (!visX(x)) continue;
    const tip = g.what ? `step ${g.step}: ${g.what}` : `step ${g.step}`;
    body.push(
      `<line class="step-guide" data-step="${g.step}" x1="${px(x)}" y1="${o.top - 4}" x2="${px(x)}" y2="${px(o.top + plotH)}" stroke="#999" stroke-width="1" stroke-dasharray="5,4"><title>${esc(tip)}</title></line>`,
    );
    const texts = [tip, `step ${g.step}`, String(g.step)];
    const candidates: Candidate[] = [];
    for (const t of texts)
      for (let row = 0; row < 3; row++)
        candidates.push(textBox(t, x + 3, o.top - 8 - row * (FONT.header + 3), FONT.header, "start", measure));
    headerReqs.push({ candidates });
  }
  body.push("</g>");
  const headerBounds: Box = { x: o.left - 4, y: 36, w: plotW + o.right, h: o.top - 36 };
  body.push('<g class="step-labels">');
  for (const c of placeLabels(headerReqs, occupied, headerBounds)) {
    if (c) body.push(labelText("label step-label", c, FONT.header, "#444"));
  }
  body.push("</g>");
}

/**
 * Local operations: orange boxes for reductions, grey for copies and scales; faded after the
 * last arrival of the step shown (they carry no step of their own).
 */
function drawLocals(v: View, phaseOf: (m: DrawnMessage) => number | undefined): void {
  const { d, o, X, Y, visX, visY, occupied, body, clip } = v;
  let tCut = Number.POSITIVE_INFINITY;
  if (o.current !== undefined) {
    tCut = d.t0;
    for (const m of d.messages)
      if ((phaseOf(m) ?? Number.POSITIVE_INFINITY) <= o.current) tCut = Math.max(tCut, m.recv.end);
  }
  body.push(`<g class="locals"${clip}>`);
  for (const e of d.locals) {
    const x = X(e.end);
    const y = Y(e.rank);
    if (!visX(x) || !visY(y)) continue;
    const fill = e.kind === "reduce" ? "#ff7f0e" : "#bbbbbb";
    const w = 9;
    occupied.add({ x: x - w / 2, y: y - w / 2, w, h: w });
    body.push(
      `<rect class="${e.kind}${e.end > tCut ? " future" : ""}" x="${px(x - w / 2)}" y="${px(y - w / 2)}" width="${w}" height="${w}" fill="${fill}" stroke="#333" stroke-width="0.6"><title>${esc(`rank ${e.rank} ${e.kind} ${e.count} x ${e.dtype} (${bytesText(e.bytes)})`)}</title></rect>`,
    );
  }
  body.push("</g>");
}

/** Messages: the arrow, the send's and receive's spans (shown on hover), and a label where it fits. */
function drawMessages(
  v: View,
  phaseOf: (m: DrawnMessage) => number | undefined,
): { at: number; end: number; shown: number; hidden: number } {
  const { d, o, measure, plotW, plotH, X, Y, occupied, body, clip } = v;
  const mode = o.labels ?? "auto";
  const plot: Box = { x: o.left, y: o.top, w: plotW, h: plotH };
  body.push(`<g class="messages"${clip}>`);
  const labelReqs: { m: number; candidates: Candidate[] }[] = [];
  const stepBytes = new Map<number, Set<number>>();
  for (const m of d.messages) {
    if (m.step === undefined) continue;
    const set = stepBytes.get(m.step) ?? new Set<number>();
    set.add(m.send.bytes);
    stepBytes.set(m.step, set);
  }
  const fractions = mode === "all" ? [0.5, 0.3, 0.7, 0.15, 0.85, 0.4, 0.6, 0.22, 0.78] : [0.5, 0.3, 0.7];
  d.messages.forEach((m, i) => {
    const x1 = X(m.send.start);
    const y1 = Y(m.send.rank);
    const x2 = X(m.recv.end);
    const y2 = Y(m.recv.rank);
    if (Math.max(x1, x2) < o.left || Math.min(x1, x2) > o.left + plotW) return;
    if (Math.max(y1, y2) < o.top || Math.min(y1, y2) > o.top + plotH) return;
    const color = PALETTE[(m.step ?? 0) % PALETTE.length] as string;
    const head = (m.step ?? 0) % PALETTE.length;
    const k = phaseOf(m);
    const phase =
      o.current === undefined || k === undefined ? "" : k > o.current ? " future" : k === o.current ? " current" : "";
    if (!o.partsOnly)
      body.push(
        o.lean
          ? `<g class="msg" data-i="${i}" data-p="${k ?? ""}" data-from="${m.send.rank}" data-to="${m.recv.rank}">`
          : `<g class="msg${phase}" data-i="${i}" data-step="${m.step ?? ""}" data-from="${m.send.rank}" data-to="${m.recv.rank}"><title>${esc(m.tip)}</title>`,
        // The page draws a hovered message's bars itself (thousands of messages at n = 64).
        o.lean ? "" : opBars(m, X, Y, color),
        `<circle cx="${px(x1)}" cy="${px(y1)}" r="2.5" fill="${color}"/>`,
        `<line class="arrow" x1="${px(x1)}" y1="${px(y1)}" x2="${px(x2)}" y2="${px(y2)}" stroke="${color}" stroke-width="1.6" marker-end="url(#arrow-${head})"/>`,
        "</g>",
      );
    if (mode === "none" || phase === " future") return;
    const candidates: Candidate[] = [];
    // auto: at most 28 characters (the hover text has it all), and no wider than its arrow's run.
    // A bytes-only label says nothing where the whole step moves one size; there it is left to hover text.
    const sizes = m.step === undefined ? undefined : stepBytes.get(m.step);
    const uniform = sizes !== undefined && sizes.size === 1;
    const bytesOnly = uniform ? [] : [bytesText(m.send.bytes)];
    // Where the step moves one size everywhere, the bytes say nothing either: what it moves alone.
    const detailed = !m.detail ? [] : uniform ? [clip28(m.detail)] : [clip28(m.text), clip28(m.detail)];
    const texts = mode === "all" ? (uniform && m.detail ? [m.short] : [m.text, m.short]) : [...detailed, ...bytesOnly];
    const maxW = mode === "all" ? Number.POSITIVE_INFINITY : Math.abs(x2 - x1) + 24;
    for (const text of new Set(texts)) {
      for (const f of fractions) {
        const lx = x1 + (x2 - x1) * f;
        const ly = y1 + (y2 - y1) * f;
        for (const c of [
          textBox(text, lx, ly - 5, FONT.label, "middle", measure),
          textBox(text, lx, ly + FONT.label + 3, FONT.label, "middle", measure),
        ])
          if (c.box.w <= maxW) candidates.push(c);
      }
    }
    labelReqs.push({ m: i, candidates });
  });
  body.push("</g>");
  // The current step's labels first, then in time order.
  if (o.current !== undefined) {
    const cur = (r: { m: number }) => (phaseOf(d.messages[r.m] as DrawnMessage) === o.current ? 0 : 1);
    labelReqs.sort((a, b) => cur(a) - cur(b) || a.m - b.m);
  }
  const placed = placeLabels(labelReqs, occupied, plot);
  const labelsAt = body.length;
  body.push('<g class="msg-labels">');
  placed.forEach((c, i) => {
    const req = labelReqs[i];
    if (!c || !req) return;
    const m = d.messages[req.m] as DrawnMessage;
    const color = PALETTE[(m.step ?? 0) % PALETTE.length] as string;
    body.push(labelText("label msg-label", c, FONT.label, color, `data-i="${req.m}"`));
  });
  body.push("</g>");
  const labelsEnd = body.length;
  const shown = placed.filter(Boolean).length;
  return { at: labelsAt, end: labelsEnd, shown, hidden: labelReqs.length - shown };
}

/** Deadlocks: at the round it was found, a red arrow from each blocked operation to the rank it waits for. */
function drawDeadlocks(v: View): void {
  const { d, z, laneGap, X, Y, body, clip } = v;
  if (d.deadlocks.length > 0) {
    body.push(`<g class="deadlock"${clip}>`);
    const red = PALETTE.length;
    for (const dl of d.deadlocks) {
      const x = X(dl.at);
      const cyc = new Set(dl.cycle);
      for (const b of dl.blocked) {
        const y1 = Y(b.rank);
        const y2 = Y(b.peer);
        const dir = b.kind === "send" ? "to" : "from";
        const tip = `rank ${b.rank} blocked in ${b.kind}(${dir} ${b.peer}, ${b.count} x ${b.dtype}${b.label ? `, '${b.label}'` : ""})`;
        const width = cyc.has(b.rank) && cyc.has(b.peer) ? 2.5 : 1.5;
        body.push(
          `<g class="blocked" data-rank="${b.rank}"><title>${esc(tip)}</title>`,
          `<circle cx="${px(x)}" cy="${px(y1)}" r="6" fill="none" stroke="#d62728" stroke-width="2"/>`,
          `<line x1="${px(x)}" y1="${px(y1)}" x2="${px(x + 0.25 * laneGap * z.k)}" y2="${px(y2)}" stroke="#d62728" stroke-width="${width}" stroke-dasharray="4,3" marker-end="url(#arrow-${red})"/>`,
          "</g>",
        );
      }
    }
    body.push("</g>");
  }
}

/** Time axis under the plot: ticks over what is in view. */
function drawAxis(v: View): void {
  const { d, o, measure, z, plotW, plotH, X, visX, occupied, body } = v;
  const span = d.t1 - d.t0;
  const axisY = o.top + plotH + 8;
  const tAt = (x: number) => d.t0 + ((x - o.left - z.x) / (z.k * plotW)) * span;
  const unitText = d.unit === "tick" ? "logical time (sim scheduler rounds)" : `time (${d.unit})`;
  body.push(
    '<g class="axis">',
    `<line x1="${o.left}" y1="${axisY}" x2="${px(o.left + plotW)}" y2="${axisY}" stroke="#333"/>`,
  );
  const tickReqs: { candidates: Candidate[] }[] = [];
  for (const t of axisTicks(tAt(o.left), tAt(o.left + plotW), d.unit)) {
    const x = X(t);
    if (!visX(x)) continue;
    body.push(`<line x1="${px(x)}" y1="${axisY}" x2="${px(x)}" y2="${axisY + 5}" stroke="#333"/>`);
    tickReqs.push({ candidates: [textBox(String(t), x, axisY + 19, FONT.axis, "middle", measure)] });
  }
  const axisBounds: Box = { x: 0, y: axisY, w: o.width, h: 30 };
  for (const c of placeLabels(tickReqs, occupied, axisBounds))
    if (c) body.push(labelText("label tick", c, FONT.axis, "#000"));
  const unitLabel = textBox(unitText, o.left + plotW / 2, axisY + 38, FONT.axis, "middle", measure);
  occupied.add(unitLabel.box);
  body.push(labelText("label axis-label", unitLabel, FONT.axis, "#000"), "</g>");
}

function clip28(s: string): string {
  return s.length <= 28 ? s : `${s.slice(0, 27)}…`;
}

function labelText(cls: string, c: Candidate, size: number, fill: string, attrs = ""): string {
  const anchor = c.anchor === "start" ? "" : ` text-anchor="${c.anchor}"`;
  return `<text class="${cls}" x="${px(c.x)}" y="${px(c.y)}" font-size="${size}"${anchor} fill="${fill}"${attrs ? ` ${attrs}` : ""}>${esc(c.text)}</text>`;
}

/** The legend, its items laid out one after another by their measured widths. */
function legend(left: number, y: number, measure: Measure): string[] {
  const out = ['<g class="legend">'];
  let x = left;
  const item = (glyph: string, text: string) => {
    out.push(
      glyph
        .replace(/\{x\}/g, String(x))
        .replace(/\{x2\}/g, String(x + 28))
        .replace(/\{xm\}/g, String(x + 4)),
    );
    out.push(`<text class="label legend-label" x="${x + 34}" y="${y}" font-size="${FONT.legend}">${esc(text)}</text>`);
    x += 34 + measure(text, FONT.legend) + 24;
  };
  item(
    `<line x1="{x}" y1="${y - 4}" x2="{x2}" y2="${y - 4}" stroke="${PALETTE[0]}" stroke-width="1.6" marker-end="url(#arrow-0)"/>`,
    "message (what it moves; bytes on hover)",
  );
  item(
    `<rect x="{xm}" y="${y - 10}" width="9" height="9" fill="#ff7f0e" stroke="#333" stroke-width="0.6"/>`,
    "reduction",
  );
  item(
    `<rect x="{xm}" y="${y - 10}" width="9" height="9" fill="#bbbbbb" stroke="#333" stroke-width="0.6"/>`,
    "copy / scale",
  );
  item(
    `<line x1="{xm}" y1="${y - 13}" x2="{xm}" y2="${y + 2}" stroke="#999" stroke-dasharray="5,4"/>`,
    "step: its first message",
  );
  out.push("</g>");
  return out;
}

const PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];

/** Up to about 12 round tick positions over [t0, t1]. */
function axisTicks(t0: number, t1: number, unit: string): number[] {
  const span = t1 - t0;
  if (!(span > 0)) return [];
  let step = unit === "tick" ? 1 : 10 ** Math.floor(Math.log10(span / 5));
  while (span / step > 12) step *= step.toString().startsWith("2") ? 2.5 : 2;
  const out: number[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1 + 1e-9; t += step) out.push(Number(t.toPrecision(6)));
  return out;
}
