/**
 * The step-through page's browser code (bundled by esbuild into the page, see page.ts). It reads
 * the page's JSON, draws the time-space diagram with the same renderer as the static SVG
 * (render.ts) at every step, zoom or pan, and fills the side panel with what each rank does and
 * holds after the step (explain's table, carried as data); traced with --topology, the machine
 * beside it with the links the step's messages load coloured (each message routed as the network
 * model routes it, its bytes over the link's bandwidth, relative to the step's busiest). Keyboard: ← → step, Home/End, space
 * plays, 0 zooms to fit.
 */
import { select } from "d3-selection";
import { type D3ZoomEvent, zoom as d3zoom, type ZoomBehavior, type ZoomTransform, zoomIdentity } from "d3-zoom";
import type { TraceEvent } from "../../trace.js";
import { HEAT_UNUSED, heatColor } from "../chart.js";
import { type Diagram, type DrawnMessage, diagram } from "../diagram.js";
import type { LabelMode } from "../labels.js";
import { eventNotes } from "../notes.js";
import { type PackedPageData, type PackedView, unpackView } from "../page-codec.js";
import type { PageView } from "../page-data.js";
import { DIAGRAM_CSS, diagramScales, opBars, type RenderOptions, renderDiagram } from "../render.js";

const data = JSON.parse(byId("cclab-data").textContent ?? "{}") as PackedPageData;

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

// Text widths measured with the page's own font, so labels are placed by what the browser draws.
const ctx = document.createElement("canvas").getContext("2d");
const widths = new Map<string, number>();
function measure(text: string, size: number): number {
  const key = `${size}|${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    if (ctx) {
      ctx.font = `${size}px Helvetica, Arial, sans-serif`;
      w = ctx.measureText(text).width + 1;
    } else w = text.length * size * 0.62;
    widths.set(key, w);
  }
  return w;
}

/** One view, ready to draw: its diagram, and what each slider position means. */
interface Prepared {
  readonly view: PageView;
  readonly d: Diagram;
  /** Slider position -> the step (or time phase) it shows. */
  readonly positions: readonly number[];
  /** Position -> its name in the caption. */
  readonly captions: readonly string[];
  readonly phaseOf?: (m: DrawnMessage) => number | undefined;
  /** Every phase a message has (for the fading rule). */
  readonly phases: readonly number[];
}

function prepare(view: PageView): Prepared {
  const p = prepareView(view);
  const of = p.phaseOf ?? ((m: DrawnMessage) => m.step);
  const phases = new Set<number>();
  for (const m of p.d.messages) {
    const k = of(m);
    if (k !== undefined) phases.add(k);
  }
  return { ...p, phases: [...phases].sort((a, b) => a - b) };
}

function prepareView(view: PageView): Omit<Prepared, "phases"> {
  const stepOfEvent = new Map(view.events.map((e, i) => [e, view.eventSteps?.[i] ?? undefined]));
  const d = diagram(view.events, {
    size: view.size,
    unit: view.unit,
    deadlocks: view.deadlocks.map((x) => x.record),
    // explain's step numbers and each message's regions, from the table's own transfers.
    ...(view.steps
      ? { notes: eventNotes(view.steps, view.events) }
      : view.eventSteps
        ? { stepFor: (e: TraceEvent) => stepOfEvent.get(e) ?? undefined }
        : {}),
  });
  if (view.steps) {
    const positions = view.steps.steps.map((s, k) => Number(/^step (\d+)/.exec(s.label)?.[1] ?? k));
    return { view, d, positions, captions: view.steps.steps.map((s) => s.label) };
  }
  // A program's trace: step through time, by the moments messages arrive (at most 60 stops).
  const ends = [...new Set(d.messages.map((m) => m.recv.end))].sort((a, b) => a - b);
  const stops =
    ends.length <= 60
      ? ends
      : Array.from({ length: 60 }, (_, i) => ends[Math.floor(((i + 1) * ends.length) / 60) - 1] as number);
  const phaseOf = (m: DrawnMessage) => {
    const i = stops.findIndex((t) => m.recv.end <= t);
    return i < 0 ? stops.length - 1 : i;
  };
  const unit = view.unit === "tick" ? "" : ` ${view.unit}`;
  return {
    view,
    d,
    positions: stops.map((_, i) => i),
    captions: stops.map((t) => `up to t = ${Number(t.toPrecision(6))}${unit}`),
    phaseOf,
  };
}

const prepared = new Map<number, Prepared>();
function viewAt(i: number): Prepared {
  let p = prepared.get(i);
  if (!p) {
    p = prepare(unpackView(data.views[i] as PackedView));
    prepared.set(i, p);
  }
  return p;
}

const state = {
  view: Math.min(Math.max(0, data.selected), data.views.length - 1),
  pos: 0,
  labels: data.labels as LabelMode,
  zoom: zoomIdentity as ZoomTransform,
  timer: undefined as number | undefined,
};

const svg = byId("diagram") as unknown as SVGSVGElement;
const phaseStyle = document.head.appendChild(document.createElement("style"));
const slider = byId<HTMLInputElement>("step");
const margins = { left: 84, top: 100, right: 24, bottom: 64 };
let zoomer: ZoomBehavior<SVGSVGElement, unknown> | undefined;

function size(p: Prepared): { width: number; height: number } {
  const width = Math.max(600, Math.floor(byId("diagram-box").clientWidth || 900));
  const height = Math.max(380, Math.min(720, p.view.size * 64 + margins.top + margins.bottom));
  return { width, height };
}

let frame = 0;
function schedule(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    draw();
  });
}

function renderOptions(p: Prepared): RenderOptions {
  const { width, height } = size(p);
  const z = state.zoom;
  return {
    width,
    height,
    ...margins,
    labels: state.labels,
    measure,
    // d3-zoom's transform is over SVG coordinates; the renderer's is over the plot's.
    zoom: { k: z.k, x: z.x + (z.k - 1) * margins.left, y: z.y + (z.k - 1) * margins.top },
    current: p.positions[state.pos],
    lean: true,
    ...(p.phaseOf ? { phaseOf: p.phaseOf } : {}),
  };
}

/** What the whole diagram was last drawn for: a step alone redraws only the parts that move with it. */
let drawnFor = "";

function draw(): void {
  const p = viewAt(state.view);
  const { width, height } = size(p);
  const o0 = renderOptions(p);
  const key = JSON.stringify([state.view, width, height, o0.zoom, o0.labels]);
  const locals = svg.querySelector("g.locals");
  const labels = svg.querySelector("g.msg-labels");
  const partial = key === drawnFor && locals !== null && labels !== null;
  const o = { ...o0, partsOnly: partial };
  const r = renderDiagram(p.d, o);
  if (partial && locals && labels) {
    locals.outerHTML = r.parts.locals;
    labels.outerHTML = r.parts["msg-labels"];
  } else {
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.innerHTML = `<defs>${r.defs}<style>${DIAGRAM_CSS}</style></defs><rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>${r.body.join("")}`;
    drawnFor = key;
  }
  // Messages fade and stand out by their phase (data-p), through one style rule.
  const cur = o.current;
  svg.dataset.current = cur === undefined ? "" : String(cur);
  const later = cur === undefined ? [] : p.phases.filter((k) => k > cur);
  phaseStyle.textContent =
    (later.length > 0 ? `${later.map((k) => `#diagram .msg[data-p="${k}"]`).join(",")}{opacity:.13}` : "") +
    (cur === undefined ? "" : `#diagram .msg[data-p="${cur}"] line.arrow{stroke-width:2.6}`);
  byId("status").textContent =
    state.labels === "none"
      ? "labels off: hover a message for its text"
      : `${r.shown} message labels shown${r.hidden > 0 ? `, ${r.hidden} left to hover text (zoom in for more)` : ""}`;
}

function setupZoom(): void {
  const p = viewAt(state.view);
  const { width, height } = size(p);
  const box: [[number, number], [number, number]] = [
    [margins.left, margins.top],
    [width - margins.right, height - margins.bottom],
  ];
  zoomer = d3zoom<SVGSVGElement, unknown>()
    .scaleExtent([1, Math.max(8, p.view.size)])
    .extent(box)
    .translateExtent(box)
    .on("zoom", (ev: D3ZoomEvent<SVGSVGElement, unknown>) => {
      state.zoom = ev.transform;
      schedule();
    });
  select(svg).call(zoomer).call(zoomer.transform, zoomIdentity);
}

function resetZoom(): void {
  if (zoomer) select(svg).call(zoomer.transform, zoomIdentity);
}

/** [0+1+3] -> the ranks contributing, for the cell's colour strip. */
function contributors(text: string): number[] {
  const m = /^\[(.*)\]$/.exec(text);
  if (!m?.[1]) return [];
  return m[1].split("+").map((t) => Number(t.split(":")[0]));
}

function rankColor(r: number): string {
  return `hsl(${(r * 137.508) % 360},62%,48%)`;
}

function strip(ranks: number[], n: number): string {
  if (ranks.length === 0) return "";
  // Many ranks: one bar, as long as the share of ranks that contributed (a slot each would be too fine to see).
  if (n > 16) {
    const share = ((new Set(ranks).size / n) * 100).toFixed(1);
    return `<span class="strip" style="right:auto;width:calc((100% - 4px) * ${share} / 100);background:#2ca02c"></span>`;
  }
  const has = new Set(ranks);
  const stops: string[] = [];
  for (let r = 0; r < n; r++) {
    const c = has.has(r) ? rankColor(r) : "transparent";
    stops.push(`${c} ${((r / n) * 100).toFixed(2)}% ${(((r + 1) / n) * 100).toFixed(2)}%`);
  }
  return `<span class="strip" style="background:linear-gradient(90deg,${stops.join(",")})"></span>`;
}

function sidePanel(): void {
  const p = viewAt(state.view);
  const side = byId("side");
  const st = p.view.steps;
  const n = p.view.size;
  const out: string[] = [];
  if (st) {
    const step = st.steps[state.pos];
    const prev = st.steps[state.pos - 1];
    if (!step) {
      side.innerHTML = "";
      return;
    }
    out.push(`<h2 id="ops-title">${esc(step.label)}: what each rank does</h2><ol class="ops" id="ops">`);
    step.ops.forEach((o, r) => {
      out.push(`<li class="${o === "-" ? "idle" : ""}" data-rank="${r}">rank ${r}  ${esc(o)}</li>`);
    });
    out.push(`</ol><h2 id="cells-title">what each rank holds after ${esc(step.label)}</h2>`);
    out.push('<table class="cells" id="cells"><thead><tr><th></th>');
    for (let r = 0; r < n; r++) out.push(`<th>rank ${r}</th>`);
    out.push("</tr></thead><tbody>");
    for (const row of step.rows) {
      const before = prev?.rows.find((x) => x.name === row.name);
      out.push(`<tr data-row="${esc(row.name)}"><th>${esc(row.name)}</th>`);
      row.cells.forEach((c, r) => {
        const who = contributors(c);
        const cls = [
          before && before.cells[r] !== c ? "changed" : "",
          who.length > 1 && new Set(who).size === n ? "complete" : "",
        ]
          .filter(Boolean)
          .join(" ");
        // <wbr> after each '+' lets long cells wrap; the cell's text stays exactly explain's.
        out.push(
          `<td data-rank="${r}"${cls ? ` class="${cls}"` : ""} >${esc(c).replace(/\+/g, "+<wbr>")}${strip(who, n)}</td>`,
        );
      });
      out.push("</tr>");
    }
    out.push("</tbody></table>");
    out.push(
      '<div class="legend"><span><i style="background:#eaf6ea"></i>holds every rank\'s contribution</span>' +
        '<span><i style="border:2px solid #d62728"></i>changed in this step</span>' +
        "<span>strip: one slot per rank, coloured where that rank contributed</span></div>",
    );
    if (st.errors.length > 0)
      out.push(
        `<div class="errors"><h2>the checker rejects this schedule</h2><pre>${esc(st.errors.join("\n"))}</pre></div>`,
      );
  } else {
    // A program's trace: per rank, what it sent and received up to this point.
    const cur = p.positions[state.pos] ?? 0;
    const sent = new Array<number>(n).fill(0);
    const recvd = new Array<number>(n).fill(0);
    const msgs = new Array<number>(n).fill(0);
    for (const m of p.d.messages) {
      if ((p.phaseOf?.(m) ?? 0) > cur) continue;
      sent[m.send.rank] = (sent[m.send.rank] ?? 0) + m.send.bytes;
      recvd[m.recv.rank] = (recvd[m.recv.rank] ?? 0) + m.recv.bytes;
      msgs[m.send.rank] = (msgs[m.send.rank] ?? 0) + 1;
    }
    out.push(`<h2>${esc(p.captions[state.pos] ?? "")}: bytes moved so far</h2>`);
    out.push(
      '<table class="cells" id="totals"><thead><tr><th></th><th>messages sent</th><th>bytes sent</th><th>bytes received</th></tr></thead><tbody>',
    );
    for (let r = 0; r < n; r++)
      out.push(`<tr><th>rank ${r}</th><td>${msgs[r]}</td><td>${sent[r]}</td><td>${recvd[r]}</td></tr>`);
    out.push("</tbody></table>");
  }
  side.innerHTML = out.join("");
}

/** The machine beside the diagram: the links the current step's messages cross, coloured by their load. */
function networkPanel(): void {
  const p = viewAt(state.view);
  const net = p.view.network;
  const box = byId("net-box");
  byId("main").classList.toggle("net", net !== undefined);
  if (!net) {
    box.hidden = true;
    box.innerHTML = "";
    delete box.dataset.view;
    return;
  }
  if (box.dataset.view !== String(state.view)) {
    box.innerHTML = `<h2>links this step loads</h2>${net.svg}<div id="net-caption"></div><div class="legend" title="${esc(net.caption)}"><span><i style="background:${heatColor(0)}"></i>least busy</span><span><i style="background:${heatColor(1)}"></i>busiest: bytes / bandwidth</span><span><i style="background:${HEAT_UNUSED}"></i>idle</span></div>`;
    box.dataset.view = String(state.view);
    box.hidden = false;
  }
  const cur = p.positions[state.pos];
  const of = p.phaseOf ?? ((m: DrawnMessage) => m.step);
  // Per link: the time its share of the step's bytes keeps it busy (bytes x share / bandwidth).
  const load = new Map<number, number>();
  let messages = 0;
  for (const m of p.d.messages) {
    if (cur === undefined || of(m) !== cur) continue;
    messages++;
    const r = net.routes[`${m.send.rank}>${m.recv.rank}`] ?? [];
    for (let i = 0; i < r.length; i += 2) {
      const l = r[i] as number;
      load.set(l, (load.get(l) ?? 0) + m.send.bytes * (r[i + 1] as number));
    }
  }
  const byShape = new Map<number, number>();
  let max = 0;
  let hottest = -1;
  for (const [l, v] of load) {
    if (v > max) {
      max = v;
      hottest = l;
    }
    const s = net.shapeOf[l] ?? -1;
    if (s >= 0 && v > (byShape.get(s) ?? 0)) byShape.set(s, v);
  }
  for (const el of box.querySelectorAll("[data-s]")) {
    const v = byShape.get(Number(el.getAttribute("data-s"))) ?? 0;
    el.setAttribute(el.tagName === "line" ? "stroke" : "fill", v > 0 ? heatColor(v / max) : HEAT_UNUSED);
    el.classList.toggle("loaded", v > 0);
  }
  box.dataset.links = String(load.size);
  byId("net-caption").textContent =
    messages === 0
      ? `${p.captions[state.pos] ?? ""}: no messages`
      : `${p.captions[state.pos] ?? ""}: ${messages} messages on ${load.size} links; busiest ${net.linkNames[hottest] ?? "?"}`;
}

function deadlockPanel(): void {
  const p = viewAt(state.view);
  const out: string[] = [];
  for (const dl of p.view.deadlocks) {
    const cyc = dl.record.cycle;
    const title =
      cyc.length > 0
        ? `deadlock at round ${dl.record.at}: wait-for cycle ${[...cyc, cyc[0]].map((r) => `rank ${r}`).join(" → ")}`
        : `deadlock at round ${dl.record.at}: blocked ranks`;
    out.push(`<h2>${esc(title)}</h2><div class="graph">${dl.svg}</div><pre>${esc(dl.record.message)}</pre>`);
  }
  byId("deadlocks").innerHTML = out.join("");
}

function show(pos: number): void {
  const p = viewAt(state.view);
  state.pos = Math.max(0, Math.min(p.positions.length - 1, pos));
  slider.value = String(state.pos);
  // A run that stopped before any message arrived (a deadlock at round 0) has nothing to step through.
  byId("step-text").textContent =
    p.positions.length === 0
      ? "no message arrived: nothing to step through"
      : `${p.captions[state.pos] ?? ""} (${state.pos + 1} of ${p.positions.length})`;
  sidePanel();
  networkPanel();
  schedule();
}

function selectView(i: number): void {
  state.view = i;
  const p = viewAt(i);
  byId("title").textContent = p.view.title;
  document.title = p.view.title;
  slider.max = String(Math.max(0, p.positions.length - 1));
  // More than 8 ranks: the table needs the page's width, under the diagram.
  byId("main").classList.toggle("stacked", p.view.size > 8);
  setupZoom();
  deadlockPanel();
  // An algorithm starts at its first step; a program's trace shows everything.
  show(p.view.steps ? 0 : p.positions.length - 1);
}

function play(): void {
  const btn = byId("play");
  if (state.timer !== undefined) {
    clearInterval(state.timer);
    state.timer = undefined;
    btn.textContent = "▶";
    return;
  }
  const p = viewAt(state.view);
  if (state.pos >= p.positions.length - 1) show(0);
  btn.textContent = "❚❚";
  state.timer = window.setInterval(() => {
    if (state.pos >= viewAt(state.view).positions.length - 1) play();
    else show(state.pos + 1);
  }, 1000);
}

const algSelect = byId<HTMLSelectElement>("alg");
algSelect.innerHTML = data.views.map((v, i) => `<option value="${i}">${esc(v.name)}</option>`).join("");
algSelect.value = String(state.view);
algSelect.disabled = data.views.length < 2;
algSelect.addEventListener("change", () => selectView(Number(algSelect.value)));
const labelSelect = byId<HTMLSelectElement>("labels");
labelSelect.value = state.labels;
labelSelect.addEventListener("change", () => {
  state.labels = labelSelect.value as LabelMode;
  schedule();
});
slider.addEventListener("input", () => show(Number(slider.value)));
byId("first").addEventListener("click", () => show(0));
byId("prev").addEventListener("click", () => show(state.pos - 1));
byId("next").addEventListener("click", () => show(state.pos + 1));
byId("last").addEventListener("click", () => show(Number.MAX_SAFE_INTEGER));
byId("play").addEventListener("click", play);
byId("reset").addEventListener("click", resetZoom);
document.addEventListener("keydown", (e) => {
  const t = e.target as HTMLElement | null;
  // The slider moves itself with the arrow keys (and says so with an input event); selects keep theirs.
  if (t && (t === slider || t.tagName === "SELECT")) return;
  if (e.key === "ArrowRight") show(state.pos + 1);
  else if (e.key === "ArrowLeft") show(state.pos - 1);
  else if (e.key === "Home") show(0);
  else if (e.key === "End") show(Number.MAX_SAFE_INTEGER);
  else if (e.key === " ") play();
  else if (e.key === "0") resetZoom();
  else return;
  e.preventDefault();
});
// Hover on a message: its sender's and receiver's columns light up in the table too.
svg.addEventListener("mouseover", (e) => {
  const g = (e.target as Element).closest(".msg");
  for (const el of document.querySelectorAll(".cells .hl")) el.classList.remove("hl");
  svg.querySelector("#hover-bars")?.remove();
  if (!g) return;
  // The hovered message's send and receive, as bars on their lanes.
  const p = viewAt(state.view);
  const m = p.d.messages[Number(g.getAttribute("data-i"))];
  if (m) {
    const { X, Y } = diagramScales(p.d, renderOptions(p));
    g.insertAdjacentHTML("afterbegin", `<g id="hover-bars">${opBars(m, X, Y)}</g>`);
    // Its hover text, made when first asked for (thousands of titles would slow every redraw).
    if (!g.querySelector("title")) g.insertAdjacentHTML("afterbegin", `<title>${esc(m.tip)}</title>`);
  }
  for (const r of [g.getAttribute("data-from"), g.getAttribute("data-to")])
    for (const td of document.querySelectorAll(`#cells td[data-rank="${r}"]`)) td.classList.add("hl");
});
svg.addEventListener("mouseleave", () => {
  for (const el of document.querySelectorAll(".cells .hl")) el.classList.remove("hl");
});
window.addEventListener("resize", () => {
  setupZoom();
  schedule();
});
selectView(state.view);
