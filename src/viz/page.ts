/**
 * The step-through page (`cclab trace … -o x.html`, `cclab run --trace x.html`): one
 * self-contained HTML file, no network, with the time-space diagram and, beside it, what every
 * rank holds after each step (the table `cclab explain` prints), a step slider, play, keyboard
 * arrows, hover on a message to see its send and receive, zoom and pan (d3-zoom), the labels
 * switch (none, auto, all), a switch between the algorithms of the collective, and for a run
 * that deadlocked, the wait-for graph (laid out by Graphviz here, carried as SVG), and, traced with
 * --topology, the machine beside the diagram with the links the current step loads coloured.
 *
 * The browser code is src/viz/client/main.ts, bundled with d3-zoom by esbuild when the page is
 * written and inlined; it draws with the same renderer as the static SVG (render.ts).
 */
import { fileURLToPath } from "node:url";
import type { DeadlockRecord, TraceEvent } from "../trace.js";
import { deadlockDot } from "./deadlock.js";
import { dotToSvg } from "./graphviz.js";
import type { PageNetwork } from "./network.js";
import { eventNotes } from "./notes.js";
import { type PackedPageData, packView } from "./page-codec.js";
import type { PageData, PageView } from "./page-data.js";
import type { StepThrough } from "./steps.js";
import { esc } from "./svg.js";

export interface ViewInput {
  readonly name: string;
  readonly title: string;
  readonly size: number;
  readonly unit: string;
  readonly events: readonly TraceEvent[];
  /** explain's steps for the traced call, when the trace is one algorithm's run. */
  readonly steps?: StepThrough;
  readonly deadlocks?: readonly DeadlockRecord[];
  /** The machine's picture and routes (cclab trace --topology): the page colours the links each step loads. */
  readonly network?: PageNetwork;
}

/** A view of a trace: events tied to explain's step numbers, deadlocks drawn by Graphviz. */
export async function pageView(v: ViewInput): Promise<PageView> {
  let eventSteps: (number | null)[] | undefined;
  if (v.steps) eventSteps = eventNotes(v.steps, v.events).map((n) => n?.step ?? null);
  const deadlocks = await Promise.all(
    (v.deadlocks ?? []).map(async (record) => ({ record, svg: stripXmlProlog(await dotToSvg(deadlockDot(record))) })),
  );
  return {
    name: v.name,
    title: v.title,
    size: v.size,
    unit: v.unit,
    events: v.events,
    eventSteps,
    steps: v.steps,
    deadlocks,
    ...(v.network ? { network: v.network } : {}),
  };
}

/** Graphviz writes an XML prolog and DOCTYPE; inline SVG in HTML wants only the <svg> element. */
function stripXmlProlog(svg: string): string {
  const i = svg.indexOf("<svg");
  return i >= 0 ? svg.slice(i) : svg;
}

/**
 * A browser script: `entry` and what it imports, bundled and minified into one IIFE by esbuild
 * (the step-through page's client here, the playground's page and worker in src/playground).
 */
export async function browserBundle(
  entry: string,
  extra: { readonly plugins?: import("esbuild").Plugin[]; readonly define?: Record<string, string> } = {},
): Promise<string> {
  const esbuild = await import("esbuild");
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    write: false,
    legalComments: "none",
    logLevel: "silent",
    ...extra,
  });
  return out.outputFiles[0]?.text ?? "";
}

let bundle: Promise<string> | undefined;

/** The page's script: client/main.ts and d3-zoom, bundled and minified (once per process). */
export function clientScript(): Promise<string> {
  bundle ??= browserBundle(fileURLToPath(new URL("./client/main.ts", import.meta.url)));
  return bundle;
}

const CSS = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 Helvetica,Arial,sans-serif;color:#111;background:#fff}
header{padding:10px 16px 6px;border-bottom:1px solid #ddd}
h1{font-size:18px;margin:0 0 6px}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
.controls button{font-size:15px;min-width:34px;padding:2px 8px}
.controls label{display:flex;gap:4px;align-items:center}
#step{width:260px}
#step-text{font-weight:bold;min-width:15em}
#status{color:#555;font-size:12px}
main{display:flex;flex-wrap:wrap;gap:12px;padding:10px 16px;align-items:flex-start}
#diagram-box{flex:1 1 760px;min-width:640px;border:1px solid #ddd;position:relative}
#diagram{display:block;width:100%;cursor:grab;user-select:none}
#diagram:active{cursor:grabbing}
#side{flex:1 1 420px;min-width:360px;max-width:100%;overflow:auto}
main.stacked #diagram-box,main.stacked #side{flex-basis:100%}
#net-box{flex:0 1 440px;min-width:300px;border:1px solid #ddd;padding:4px 6px}
#net-box[hidden]{display:none}
#net-box svg{display:block;width:100%;height:auto;max-height:460px}
#net-box h2{font-size:15px;margin:2px 0}
#net-caption{font-size:12px;color:#333}
main.net #diagram-box,main.stacked.net #diagram-box{flex:1 1 560px;min-width:480px}
#side h2,#deadlocks h2{font-size:15px;margin:4px 0}
table.cells{border-collapse:collapse;font:12px/1.25 Menlo,Consolas,"DejaVu Sans Mono",monospace}
table.cells th{background:#f4f4f4;font-weight:normal;padding:2px 5px;border:1px solid #ddd;white-space:nowrap}
table.cells td{padding:2px 5px 7px;border:1px solid #ddd;vertical-align:top;max-width:10em;overflow-wrap:anywhere;position:relative}
table.cells td.changed{outline:2px solid #d62728;outline-offset:-2px}
table.cells td.complete{background:#eaf6ea}
table.cells td .strip{position:absolute;left:2px;right:2px;bottom:2px;height:4px}
table.cells tr.hl td,table.cells td.hl{background:#fff3c4}
ol.ops{font:12px/1.35 Menlo,Consolas,"DejaVu Sans Mono",monospace;padding-left:0;list-style:none;margin:4px 0 10px}
ol.ops li.idle{color:#999}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:#333;margin:6px 0}
.legend i{display:inline-block;width:12px;height:12px;vertical-align:-2px;margin-right:4px;border:1px solid #333}
#deadlocks{padding:0 16px 16px}
#deadlocks .graph svg{max-width:100%;height:auto}
#deadlocks pre{font-size:12px;background:#fafafa;border:1px solid #eee;padding:8px;overflow:auto}
.errors{color:#b00}
`;

/** The whole page: skeleton, styles, data and script in one file. */
export async function stepPageHtml(data: PageData): Promise<string> {
  const script = await clientScript();
  // '<' escaped so no string in the data can close the script element.
  const packed: PackedPageData = { ...data, views: data.views.map(packView) };
  const json = JSON.stringify(packed).replace(/</g, "\\u003c");
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    `<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${esc(data.title)}</title>`,
    `<style>${CSS}</style></head>`,
    "<body>",
    "<header>",
    `<h1 id="title">${esc(data.title)}</h1>`,
    '<div class="controls">',
    '<label>algorithm <select id="alg"></select></label>',
    '<button id="first" title="first step (Home)">«</button>',
    '<button id="prev" title="previous step (←)">‹</button>',
    '<button id="play" title="play / pause (space)">▶</button>',
    '<button id="next" title="next step (→)">›</button>',
    '<button id="last" title="last step (End)">»</button>',
    '<input id="step" type="range" min="0" max="0" value="0" aria-label="step">',
    '<span id="step-text"></span>',
    '<label>labels <select id="labels"><option>none</option><option>auto</option><option>all</option></select></label>',
    '<button id="reset" title="zoom to fit (0)">fit</button>',
    '<span id="status"></span>',
    "</div>",
    "</header>",
    '<main id="main">',
    '<div id="diagram-box"><svg id="diagram" xmlns="http://www.w3.org/2000/svg" font-family="Helvetica, Arial, sans-serif"></svg></div>',
    '<div id="net-box" hidden></div>',
    '<div id="side"></div>',
    "</main>",
    '<section id="deadlocks"></section>',
    `<script id="cclab-data" type="application/json">${json}</script>`,
    `<script>${script}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
