/**
 * The playground's picture of a run: the time-space diagram of the step-through page (the same
 * diagram() and renderDiagram() as src/viz/client/main.ts) with its step slider, what each rank
 * does and holds after the step where an algorithm ran (explain's table), and for a deadlock its
 * wait-for cycle with every blocked operation named (src/viz/deadlock.ts's picture).
 */
import type { Viz } from "@viz-js/viz";
import { blockedText, deadlockDot, deadlockSvg } from "../../viz/deadlock.js";
import { type Diagram, type DrawnMessage, diagram } from "../../viz/diagram.js";
import { eventNotes } from "../../viz/notes.js";
import { DIAGRAM_CSS, type RenderOptions, renderDiagram } from "../../viz/render.js";
import { fill, h, svgContent, svgInto } from "./dom.js";
import type { Traced } from "./protocol.js";

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

const ctx = document.createElement("canvas").getContext("2d");
function measure(text: string, size: number): number {
  if (!ctx) return text.length * size * 0.62;
  ctx.font = `${size}px Helvetica, Arial, sans-serif`;
  return ctx.measureText(text).width + 1;
}

interface Prepared {
  readonly traced: Traced;
  readonly d: Diagram;
  readonly positions: readonly number[];
  readonly captions: readonly string[];
  readonly phaseOf?: (m: DrawnMessage) => number | undefined;
}

function prepare(t: Traced): Prepared {
  const st = t.steps;
  if (st) {
    // explain's step numbers and regions on each traced message (as the step-through page).
    const d = diagram(t.events, {
      size: t.size,
      unit: "tick",
      deadlocks: t.deadlocks,
      notes: eventNotes(st, t.events),
    });
    const positions = st.steps.map((s, k) => Number(/^step (\d+)/.exec(s.label)?.[1] ?? k));
    return { traced: t, d, positions, captions: st.steps.map((s) => s.label) };
  }
  const d = diagram(t.events, { size: t.size, unit: "tick", deadlocks: t.deadlocks });
  // A program: step through time, by the moments messages arrive (at most 60 stops).
  const ends = [...new Set(d.messages.map((m) => m.recv.end))].sort((a, b) => a - b);
  const stops =
    ends.length <= 60
      ? ends
      : Array.from({ length: 60 }, (_, i) => ends[Math.floor(((i + 1) * ends.length) / 60) - 1] as number);
  const phaseOf = (m: DrawnMessage) => {
    const i = stops.findIndex((t) => m.recv.end <= t);
    return i < 0 ? stops.length - 1 : i;
  };
  if (stops.length === 0) return { traced: t, d, positions: [0], captions: ["no messages"], phaseOf };
  return {
    traced: t,
    d,
    positions: stops.map((_, i) => i),
    captions: stops.map((x) => `up to t = ${x}`),
    phaseOf,
  };
}

let current: Prepared | undefined;
let pos = 0;
/** Called when the step changes (the share link carries it). */
export let onStep: (step: number) => void = () => {};
export function setOnStep(f: (step: number) => void): void {
  onStep = f;
}

export function stepIndex(): number {
  return pos;
}

/** Shows a traced run; `step` (a slider position) defaults to the first step of an algorithm, the end of a program. */
export function showTraced(t: Traced, step?: number): void {
  current = prepare(t);
  byId("trace-out").classList.remove("hidden");
  byId("trace-title").textContent = t.title;
  const slider = byId<HTMLInputElement>("step");
  slider.max = String(Math.max(0, current.positions.length - 1));
  drawDeadlocks(t);
  const bad = t.checkErrors ?? [];
  fill(
    byId("verdict"),
    bad.length > 0 &&
      h("div", { class: "failure" }, h("h2", {}, "the static checker rejects this call"), h("pre", {}, bad.join("\n"))),
  );
  show(step ?? (t.steps ? 0 : current.positions.length - 1));
}

export function show(p: number): void {
  if (!current) return;
  pos = Math.max(0, Math.min(current.positions.length - 1, p));
  byId<HTMLInputElement>("step").value = String(pos);
  byId("step-text").textContent =
    current.positions.length === 0
      ? "no message arrived: nothing to step through"
      : `${current.captions[pos] ?? ""} (${pos + 1} of ${current.positions.length})`;
  draw();
  side();
  onStep(pos);
}

export function move(delta: number): void {
  show(pos + delta);
}

function draw(): void {
  if (!current) return;
  const svg = byId("diagram") as unknown as SVGSVGElement;
  const width = Math.max(560, Math.floor(byId("right").clientWidth - 30));
  const margins = { left: 84, top: 100, right: 24, bottom: 64 };
  const height = Math.max(300, Math.min(640, current.traced.size * 56 + margins.top + margins.bottom));
  const o: RenderOptions = {
    width,
    height,
    ...margins,
    labels: "auto",
    measure,
    current: current.positions[pos],
    ...(current.phaseOf ? { phaseOf: current.phaseOf } : {}),
  };
  const r = renderDiagram(current.d, o);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("height", String(height));
  svgContent(
    svg,
    `<defs>${r.defs}<style>${DIAGRAM_CSS}</style></defs><rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>${r.body.join("")}`,
  );
}

function side(): void {
  const el = byId("side");
  const st = current?.traced.steps;
  const step = st?.steps[pos];
  if (!current || !st || !step) {
    fill(el);
    return;
  }
  const prev = st.steps[pos - 1];
  const n = current.traced.size;
  const ranks = Array.from({ length: n }, (_, r) => h("th", {}, `rank ${r}`));
  const rows = step.rows.map((row) => {
    const before = prev?.rows.find((x) => x.name === row.name);
    return h(
      "tr",
      {},
      h("th", {}, row.name),
      ...row.cells.map((c, r) => h("td", before && before.cells[r] !== c ? { class: "changed" } : {}, c)),
    );
  });
  fill(
    el,
    h("h2", {}, `${step.label}: what each rank does`),
    h(
      "ol",
      { class: "ops", id: "ops" },
      ...step.ops.map((o, r) => h("li", { "data-rank": String(r) }, `rank ${r}  ${o}`)),
    ),
    h("h2", {}, `what each rank holds after ${step.label}`),
    h(
      "table",
      { class: "cells", id: "cells" },
      h("thead", {}, h("tr", {}, h("th", {}), ...ranks)),
      h("tbody", {}, ...rows),
    ),
    st.errors.length > 0 && h("h2", {}, "the checker rejects this schedule"),
    st.errors.length > 0 && h("pre", {}, st.errors.join("\n")),
  );
}

function drawDeadlocks(t: Traced): void {
  const out: HTMLElement[] = [];
  for (const dl of t.deadlocks) {
    const cyc = dl.cycle;
    const title =
      cyc.length > 0
        ? `deadlock at round ${dl.at}: wait-for cycle ${[...cyc, cyc[0]].map((r) => `rank ${r}`).join(" → ")}`
        : `deadlock at round ${dl.at}: blocked ranks`;
    const graph = h("div", { class: "graph", "data-layout": "circle" });
    try {
      svgInto(graph, deadlockSvg(dl));
    } catch (e) {
      graph.textContent = e instanceof Error ? e.message : String(e);
    }
    out.push(
      h("h2", { class: "deadlock-title" }, title),
      h(
        "ul",
        { class: "blocked" },
        ...dl.blocked.map((b) => h("li", {}, `rank ${b.rank} blocked in ${blockedText(b)}`)),
      ),
      graph,
      h("pre", {}, dl.message),
    );
  }
  fill(byId("deadlock"), ...out);
  if (t.deadlocks.length > 0) void layOut(t);
}

let graphviz: Promise<Viz> | undefined;

/** Graphviz, its script added to the page the first time a deadlock is drawn (a classic script: file:// allows it). */
function loadGraphviz(): Promise<Viz> {
  graphviz ??= new Promise<Viz>((resolve, reject) => {
    const s = document.createElement("script");
    s.src = "assets/graphviz.js";
    s.onload = () => {
      const make = (globalThis as unknown as { CCLAB_GRAPHVIZ?: () => Promise<Viz> }).CCLAB_GRAPHVIZ;
      if (make) make().then(resolve, reject);
      else reject(new Error("assets/graphviz.js defined no CCLAB_GRAPHVIZ"));
    };
    s.onerror = () => reject(new Error("assets/graphviz.js did not load"));
    document.head.appendChild(s);
  });
  return graphviz;
}

/**
 * Redraws each wait-for graph with Graphviz's dot layout, as the step-through page does (any
 * number of blocked ranks, no overlapping boxes). Until it loads, and if it cannot, the circle
 * drawn above stays.
 */
async function layOut(t: Traced): Promise<void> {
  try {
    const viz = await loadGraphviz();
    const boxes = byId("deadlock").querySelectorAll<HTMLElement>(".graph");
    t.deadlocks.forEach((dl, i) => {
      const box = boxes[i];
      if (!box?.isConnected) return;
      svgInto(box, viz.renderString(deadlockDot(dl), { format: "svg", engine: "dot" }));
      box.dataset.layout = "graphviz";
    });
  } catch (e) {
    for (const box of byId("deadlock").querySelectorAll<HTMLElement>(".graph")) {
      box.title = `Graphviz did not load (${e instanceof Error ? e.message : String(e)}): a circle layout instead`;
    }
  }
}

export function hideTrace(): void {
  current = undefined;
  byId("trace-out").classList.add("hidden");
  fill(byId("deadlock"));
}
