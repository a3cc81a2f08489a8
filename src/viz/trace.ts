/**
 * Time-space (Lamport) diagrams of a trace: one horizontal lane per rank, an arrow per message
 * from the send's post to the receive's completion, dashed guides where each algorithm step
 * begins, and small boxes where ranks reduce or copy locally. It reads only TraceEvents, so a
 * trace from any backend (sim ticks or real microseconds) draws the same way.
 */
import type { TraceEvent } from "../trace.js";
import { bytesText, esc, htmlPage, px, svgDocument } from "./svg.js";

/** A send and the receive it matched. */
export interface Message {
  readonly send: TraceEvent;
  readonly recv: TraceEvent;
}

/** The executor labels transfers '<collective>/<alg> step 3 (recvReduceSend chunk 2)'. */
export function stepOf(label: string | undefined): number | undefined {
  const m = label === undefined ? null : /\bstep (\d+)\b/.exec(label);
  return m ? Number(m[1]) : undefined;
}

/** The algorithm's own words for the step, the part in parentheses; else the whole label. */
export function stepDetail(label: string | undefined): string {
  if (label === undefined) return "";
  const m = /\bstep \d+ \((.*)\)$/.exec(label);
  return m ? (m[1] as string) : label;
}

/**
 * Pairs sends with receives: per (sender, receiver), the k-th send matched the k-th receive
 * (every backend matches point-to-point messages in order). Events are taken in post order.
 */
export function pairMessages(events: readonly TraceEvent[]): { messages: Message[]; unmatched: TraceEvent[] } {
  const order = events.map((e, i) => ({ e, i })).sort((a, b) => a.e.start - b.e.start || a.i - b.i);
  const sends = new Map<string, TraceEvent[]>();
  const recvs = new Map<string, TraceEvent[]>();
  for (const { e } of order) {
    if (e.peer === undefined) continue;
    if (e.kind === "send") push(sends, `${e.rank}>${e.peer}`, e);
    else if (e.kind === "recv") push(recvs, `${e.peer}>${e.rank}`, e);
  }
  const messages: Message[] = [];
  const unmatched: TraceEvent[] = [];
  for (const [key, ss] of sends) {
    const rs = recvs.get(key) ?? [];
    ss.forEach((send, k) => {
      const recv = rs[k];
      if (recv) messages.push({ send, recv });
      else unmatched.push(send);
    });
    unmatched.push(...rs.slice(ss.length));
  }
  for (const [key, rs] of recvs) if (!sends.has(key)) unmatched.push(...rs);
  messages.sort((a, b) => a.send.start - b.send.start || a.send.rank - b.send.rank);
  return { messages, unmatched };
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const q = m.get(k);
  if (q) q.push(v);
  else m.set(k, [v]);
}

/** What the ranks' details for one step share: 'recvReduceSend chunk 0/1/2' -> 'recvReduceSend'. */
export function commonDetail(details: readonly string[]): string {
  const ds = details.filter((d) => d !== "");
  if (ds.length === 0) return "";
  let prefix = ds[0] as string;
  for (const d of ds) while (!d.startsWith(prefix)) prefix = prefix.slice(0, -1);
  if (ds.every((d) => d === prefix)) return prefix;
  // Cut back to a word boundary so 'chunk 1' and 'chunk 12' do not leave 'chunk 1'.
  const cut = prefix.replace(/[^\s:;,]*$/, "").replace(/[\s:;,]+$/, "");
  const words = cut.split(/\s+/);
  // A trailing noun whose number differs per rank ('chunk', 'seg') says nothing on its own.
  if (words.length > 1 && /^(chunk|seg|segment|block|round|peer)$/.test(words[words.length - 1] as string)) {
    words.pop();
  }
  return words.join(" ");
}

/** The first post of each algorithm step, over all ranks, with what the step does. */
export function stepStarts(events: readonly TraceEvent[]): { step: number; start: number; what: string }[] {
  const byStep = new Map<number, { start: number; details: string[] }>();
  for (const e of events) {
    const k = stepOf(e.label);
    if (k === undefined) continue;
    const s = byStep.get(k);
    if (s) {
      s.start = Math.min(s.start, e.start);
      s.details.push(stepDetail(e.label));
    } else byStep.set(k, { start: e.start, details: [stepDetail(e.label)] });
  }
  return [...byStep.entries()]
    .sort(([a], [b]) => a - b)
    .map(([step, s]) => ({ step, start: s.start, what: commonDetail(s.details) }));
}

export interface TraceSvgOptions {
  /** Shown at the top and in <title>. */
  readonly title?: string;
  /** Ranks drawn; default one more than the largest rank in the trace. */
  readonly size?: number;
  /** The unit of start/end: 'tick' for sim's logical time, 'µs' for real backends. */
  readonly unit?: string;
}

const PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];

/** The time-space diagram as a standalone SVG document. */
export function traceSvg(events: readonly TraceEvent[], options: TraceSvgOptions = {}): string {
  const size = options.size ?? Math.max(0, ...events.map((e) => Math.max(e.rank, e.peer ?? 0))) + 1;
  const unit = options.unit ?? "tick";
  const title = options.title ?? `time-space diagram, ${size} ranks`;
  const t0 = Math.min(0, ...events.map((e) => e.start));
  const t1 = Math.max(t0 + 1, ...events.map((e) => e.end));
  const span = t1 - t0;
  const left = 90;
  const right = 60;
  const top = 78;
  const laneGap = size > 16 ? 36 : 90;
  const plotW = unit === "tick" ? Math.min(2400, Math.max(640, span * 150)) : 1000;
  const plotH = laneGap * size;
  const width = left + plotW + right;
  const height = top + plotH + 92;
  const x = (t: number) => left + ((t - t0) / span) * plotW;
  const y = (r: number) => top + r * laneGap + laneGap / 2;
  const body: string[] = [];

  body.push(`<text x="${left}" y="26" font-size="17" font-weight="bold">${esc(title)}</text>`);

  // Step guides: where each step is first posted; steps that start together share one guide.
  const guides = new Map<number, string[]>();
  for (const s of stepStarts(events)) {
    const key = Math.round(x(s.start) * 10) / 10;
    const text = s.what ? `step ${s.step}: ${s.what}` : `step ${s.step}`;
    push(guides, key, text);
  }
  body.push('<g class="step-guides">');
  for (const [gx, texts] of guides) {
    body.push(
      `<line class="step-guide" x1="${px(gx)}" y1="${top - 16}" x2="${px(gx)}" y2="${top + plotH}" stroke="#999" stroke-width="1" stroke-dasharray="5,4"/>`,
    );
    texts.forEach((t, i) => {
      body.push(
        `<text class="step-label" x="${px(gx + 4)}" y="${top - 20 - i * 13}" font-size="11" fill="#555">${esc(t)}</text>`,
      );
    });
  }
  body.push("</g>");

  // Lanes.
  body.push('<g class="lanes">');
  for (let r = 0; r < size; r++) {
    body.push(
      `<line class="lane" x1="${left}" y1="${px(y(r))}" x2="${left + plotW}" y2="${px(y(r))}" stroke="#333" stroke-width="1.5"/>`,
      `<text class="lane-label" x="${left - 12}" y="${px(y(r) + 4)}" font-size="13" text-anchor="end">rank ${r}</text>`,
    );
  }
  body.push("</g>");

  // Local operations: orange boxes for reductions, grey for copies and scales.
  body.push('<g class="locals">');
  for (const e of events) {
    if (e.kind === "send" || e.kind === "recv") continue;
    const fill = e.kind === "reduce" ? "#ff7f0e" : "#bbbbbb";
    const w = 9;
    body.push(
      `<rect class="${e.kind}" x="${px(x(e.end) - w / 2)}" y="${px(y(e.rank) - w / 2)}" width="${w}" height="${w}" fill="${fill}" stroke="#333" stroke-width="0.6"><title>${esc(`rank ${e.rank} ${e.kind} ${e.count} x ${e.dtype} (${bytesText(e.bytes)})`)}</title></rect>`,
    );
  }
  body.push("</g>");

  // Messages.
  const { messages } = pairMessages(events);
  body.push('<g class="messages">');
  for (const m of messages) {
    const k = stepOf(m.send.label);
    const color = PALETTE[(k ?? 0) % PALETTE.length] as string;
    const x1 = x(m.send.start);
    const y1 = y(m.send.rank);
    const x2 = x(m.recv.end);
    const y2 = y(m.recv.rank);
    const detail = stepDetail(m.send.label);
    const label = detail ? `${detail} · ${bytesText(m.send.bytes)}` : bytesText(m.send.bytes);
    // The label sits a third of the way along, where arrows into the same lane are still apart.
    const lx = x1 + (x2 - x1) * 0.35;
    const ly = y1 + (y2 - y1) * 0.35;
    const tip = `rank ${m.send.rank} -> rank ${m.recv.rank}: ${m.send.label ?? ""} ${m.send.count} x ${m.send.dtype}`;
    body.push(
      `<g class="msg"><title>${esc(tip)}</title>`,
      `<circle cx="${px(x1)}" cy="${px(y1)}" r="2.5" fill="${color}"/>`,
      `<line x1="${px(x1)}" y1="${px(y1)}" x2="${px(x2)}" y2="${px(y2)}" stroke="${color}" stroke-width="1.6" marker-end="url(#arrow-${(k ?? 0) % PALETTE.length})"/>`,
      `<text class="msg-label" x="${px(lx + 4)}" y="${px(ly - 3)}" font-size="10" fill="${color}" stroke="#fff" stroke-width="3" paint-order="stroke">${esc(label)}</text>`,
      "</g>",
    );
  }
  body.push("</g>");

  // Time axis.
  const axisY = top + plotH + 8;
  body.push('<g class="axis">', `<line x1="${left}" y1="${axisY}" x2="${left + plotW}" y2="${axisY}" stroke="#333"/>`);
  for (const t of axisTicks(t0, t1, unit)) {
    body.push(
      `<line x1="${px(x(t))}" y1="${axisY}" x2="${px(x(t))}" y2="${axisY + 5}" stroke="#333"/>`,
      `<text x="${px(x(t))}" y="${axisY + 18}" font-size="11" text-anchor="middle">${t}</text>`,
    );
  }
  const unitText = unit === "tick" ? "logical time (sim scheduler rounds)" : `time (${unit})`;
  body.push(
    `<text x="${left + plotW / 2}" y="${axisY + 36}" font-size="12" text-anchor="middle">${esc(unitText)}</text>`,
    "</g>",
  );

  // Legend.
  const ly = height - 16;
  body.push(
    '<g class="legend" font-size="11">',
    `<line x1="${left}" y1="${ly - 4}" x2="${left + 30}" y2="${ly - 4}" stroke="${PALETTE[0]}" stroke-width="1.6" marker-end="url(#arrow-0)"/>`,
    `<text x="${left + 36}" y="${ly}">message (step detail · bytes)</text>`,
    `<rect x="${left + 230}" y="${ly - 9}" width="9" height="9" fill="#ff7f0e" stroke="#333" stroke-width="0.6"/>`,
    `<text x="${left + 244}" y="${ly}">reduction</text>`,
    `<rect x="${left + 320}" y="${ly - 9}" width="9" height="9" fill="#bbbbbb" stroke="#333" stroke-width="0.6"/>`,
    `<text x="${left + 334}" y="${ly}">copy / scale</text>`,
    `<line x1="${left + 420}" y1="${ly - 12}" x2="${left + 420}" y2="${ly + 2}" stroke="#999" stroke-dasharray="5,4"/>`,
    `<text x="${left + 426}" y="${ly}">step begins</text>`,
    "</g>",
  );

  // One arrowhead per colour: context-stroke is not yet everywhere.
  const defs = PALETTE.map(
    (c, i) =>
      `<marker id="arrow-${i}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="${c}"/></marker>`,
  ).join("");
  return svgDocument(width, height, title, body, defs);
}

/** Up to about 12 round tick positions over [t0, t1]. */
function axisTicks(t0: number, t1: number, unit: string): number[] {
  const span = t1 - t0;
  let step = unit === "tick" ? 1 : 10 ** Math.floor(Math.log10(span / 5));
  while (span / step > 12) step *= step.toString().startsWith("2") ? 2.5 : 2;
  const out: number[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1 + 1e-9; t += step) out.push(Number(t.toPrecision(6)));
  return out;
}

/** The diagram in an HTML page (for browsers; the SVG inside is the same). */
export function traceHtml(events: readonly TraceEvent[], options: TraceSvgOptions = {}): string {
  const svg = traceSvg(events, options);
  return htmlPage(options.title ?? "cclab trace", svg);
}
