/**
 * A trace's time-space (Lamport) diagram as a standalone SVG document (`cclab trace`): the
 * diagram's data (diagram.ts) drawn by the same renderer the step-through page uses (render.ts),
 * at a size chosen for the trace, widened where every label is asked for. Writes no file itself.
 */
import type { TraceEvent } from "../trace.js";
import { type DiagramInput, diagram } from "./diagram.js";
import type { LabelMode } from "./labels.js";
import { DIAGRAM_CSS, renderDiagram } from "./render.js";
import { svgDocument } from "./svg.js";

export interface TraceSvgOptions extends DiagramInput {
  /** Shown at the top and in <title>. */
  readonly title?: string;
  /** Message labels: none, where they fit (auto, the default), or all (the picture widens until they fit). */
  readonly labels?: LabelMode;
}

/** Lane spacing of the static picture: roomy for a few ranks, tighter for many. */
function laneGapFor(size: number): number {
  return size <= 8 ? 84 : size <= 16 ? 56 : size <= 32 ? 36 : 24;
}

/** The time-space diagram as a standalone SVG document. */
export function traceSvg(events: readonly TraceEvent[], options: TraceSvgOptions = {}): string {
  const d = diagram(events, options);
  const title = options.title ?? `time-space diagram, ${d.size} ranks`;
  const span = d.t1 - d.t0;
  const margins = { left: 96, top: 100, right: 70, bottom: 84 };
  let plotW = d.unit === "tick" ? Math.min(2400, Math.max(720, span * 160)) : 1100;
  const plotH = laneGapFor(d.size) * d.size;
  const render = () =>
    renderDiagram(d, {
      ...margins,
      width: margins.left + plotW + margins.right,
      height: margins.top + plotH + margins.bottom,
      title,
      labels: options.labels,
      legend: true,
    });
  let r = render();
  // 'all': widen the time axis until every label has a place (at most 8 times as wide).
  for (let i = 0; options.labels === "all" && r.hidden > 0 && i < 3; i++) {
    plotW *= 2;
    r = render();
  }
  const width = margins.left + plotW + margins.right;
  const height = margins.top + plotH + margins.bottom;
  return svgDocument(width, height, title, r.body, `${r.defs}<style>${DIAGRAM_CSS}</style>`);
}
