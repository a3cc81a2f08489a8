/**
 * The playground's picture of a run: the time-space diagram of the step-through page (the same
 * diagram() and renderDiagram() as src/viz/client/main.ts) with its step slider, what each rank
 * does and holds after the step where an algorithm ran (explain's table), and for a deadlock its
 * wait-for cycle with every blocked operation named (src/viz/deadlock.ts's picture).
 */
import type { Viz } from "@viz-js/viz";
import { blockedText, deadlockDot, deadlockSvg } from "../../viz/deadlock.js";
import { type Diagram, type DrawnMessage, diagram } from "../../viz/diagram.js";
import { DIAGRAM_CSS, type RenderOptions, renderDiagram } from "../../viz/render.js";
import { stepOfIndex } from "../../viz/steps.js";
import type { Traced } from "./protocol.js";

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

export function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
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
    const of = stepOfIndex(st);
    const stepOfEvent = new Map(
      t.events.map((e) => {
        const i = /\bstep (\d+)\b/.exec(e.label ?? "")?.[1];
        return [e, i === undefined ? undefined : of[e.rank]?.get(Number(i))] as const;
      }),
    );
    const d = diagram(t.events, {
      size: t.size,
      unit: "tick",
      deadlocks: t.deadlocks,
      stepFor: (e) => stepOfEvent.get(e),
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
  byId("verdict").innerHTML =
    bad.length > 0
      ? `<div class="failure"><h2>the static checker rejects this call</h2><pre>${esc(bad.join("\n"))}</pre></div>`
      : "";
  show(step ?? (t.steps ? 0 : current.positions.length - 1));
}

export function show(p: number): void {
  if (!current) return;
  pos = Math.max(0, Math.min(current.positions.length - 1, p));
  byId<HTMLInputElement>("step").value = String(pos);
  byId("step-text").textContent = `${current.captions[pos] ?? ""} (${pos + 1} of ${current.positions.length})`;
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
  svg.innerHTML = `<defs>${r.defs}<style>${DIAGRAM_CSS}</style></defs><rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>${r.body.join("")}`;
}

function side(): void {
  const el = byId("side");
  const st = current?.traced.steps;
  if (!current || !st) {
    el.innerHTML = "";
    return;
  }
  const step = st.steps[pos];
  const prev = st.steps[pos - 1];
  if (!step) {
    el.innerHTML = "";
    return;
  }
  const n = current.traced.size;
  const out: string[] = [`<h2>${esc(step.label)}: what each rank does</h2><ol class="ops" id="ops">`];
  step.ops.forEach((o, r) => {
    out.push(`<li data-rank="${r}">rank ${r}  ${esc(o)}</li>`);
  });
  out.push(
    `</ol><h2>what each rank holds after ${esc(step.label)}</h2><table class="cells" id="cells"><thead><tr><th></th>`,
  );
  for (let r = 0; r < n; r++) out.push(`<th>rank ${r}</th>`);
  out.push("</tr></thead><tbody>");
  for (const row of step.rows) {
    const before = prev?.rows.find((x) => x.name === row.name);
    out.push(`<tr><th>${esc(row.name)}</th>`);
    row.cells.forEach((c, r) => {
      const changed = before && before.cells[r] !== c;
      out.push(`<td${changed ? ' class="changed"' : ""}>${esc(c)}</td>`);
    });
    out.push("</tr>");
  }
  out.push("</tbody></table>");
  if (st.errors.length > 0)
    out.push(`<h2>the checker rejects this schedule</h2><pre>${esc(st.errors.join("\n"))}</pre>`);
  el.innerHTML = out.join("");
}

function drawDeadlocks(t: Traced): void {
  const out: string[] = [];
  for (const dl of t.deadlocks) {
    const cyc = dl.cycle;
    const title =
      cyc.length > 0
        ? `deadlock at round ${dl.at}: wait-for cycle ${[...cyc, cyc[0]].map((r) => `rank ${r}`).join(" → ")}`
        : `deadlock at round ${dl.at}: blocked ranks`;
    const svg = deadlockSvg(dl);
    out.push(`<h2 class="deadlock-title">${esc(title)}</h2>`);
    out.push(
      `<ul class="blocked">${dl.blocked.map((b) => `<li>rank ${b.rank} blocked in ${esc(blockedText(b))}</li>`).join("")}</ul>`,
    );
    out.push(
      `<div class="graph" data-layout="circle">${svg.slice(Math.max(0, svg.indexOf("<svg")))}</div><pre>${esc(dl.message)}</pre>`,
    );
  }
  byId("deadlock").innerHTML = out.join("");
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
      const svg = viz.renderString(deadlockDot(dl), { format: "svg", engine: "dot" });
      box.innerHTML = svg.slice(Math.max(0, svg.indexOf("<svg")));
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
  byId("deadlock").innerHTML = "";
}
