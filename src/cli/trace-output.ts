/**
 * Writing a trace out: as cclab's time-space SVG, the step-through page, cclab's own JSON events,
 * Perfetto's Trace Event JSON, or a deadlock's wait-for graph (dot). Reads TraceEvents only; the
 * runs that record them are src/cli/trace.ts's.
 */
import { writeFileSync } from "node:fs";
import { InvalidArgumentError } from "../core/errors.js";
import type { DeadlockRecord, TraceEvent } from "../trace.js";
import { deadlockDot } from "../viz/deadlock.js";
import type { LabelMode } from "../viz/labels.js";
import type { EventNote } from "../viz/notes.js";
import { pageView, stepPageHtml } from "../viz/page.js";
import type { PageView } from "../viz/page-data.js";
import { toPerfetto } from "../viz/perfetto.js";
import { traceSvg } from "../viz/trace.js";

/** With --json, stdout holds only the JSON document: 'wrote' lines go to stderr. */
let jsonOut = false;

/** With --json, say "wrote" on stderr. */
export function wroteToStderr(on: boolean): void {
  jsonOut = on;
}

export function write(file: string, text: string): void {
  writeFileSync(file, text);
  (jsonOut ? console.error : console.log)(`wrote ${file}`);
}

export const OUTPUT_FORMATS = ["svg", "html", "json", "perfetto", "dot"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The format to write: --format if given, else the file's extension (.json is cclab's own events). */
export function outputFormat(file: string, format: string | undefined, allowed: readonly OutputFormat[]): OutputFormat {
  const ext = /\.([a-z]+)$/i.exec(file)?.[1]?.toLowerCase();
  const f = format ?? ext;
  if (!f || !(allowed as readonly string[]).includes(f)) {
    const how = format ? `--format ${format}` : `-o ${file}`;
    const want = allowed.map((a) => (a === "perfetto" ? "--format perfetto (a .json)" : `.${a}`)).join(", ");
    throw new InvalidArgumentError({ op: "trace", arg: format ? "--format" : "--output" }, `${how}: write ${want}`);
  }
  return f as OutputFormat;
}

/** What a trace output needs besides its events: where they came from, and for the page, its views. */
export interface TraceOutput {
  readonly title: string;
  readonly size: number;
  readonly unit: string;
  readonly events: readonly TraceEvent[];
  readonly deadlocks?: readonly DeadlockRecord[];
  readonly labels?: LabelMode;
  /** Per event, explain's step number and region (SVG and Perfetto number steps as explain does). */
  readonly notes?: readonly (EventNote | undefined)[];
  /** The page's name for these events (the algorithm switch shows it). */
  readonly name?: string;
  /** The page's views (default: one, of these events). */
  readonly views?: () => Promise<PageView[]>;
}

/** Writes a trace as SVG, the step-through page, cclab's JSON events or Perfetto's Trace Event JSON. */
export async function writeTrace(file: string, format: OutputFormat, t: TraceOutput): Promise<void> {
  const deadlocks = t.deadlocks ?? [];
  if (format === "svg") {
    const notes = t.notes ? { notes: t.notes } : {};
    write(
      file,
      traceSvg(t.events, { title: t.title, size: t.size, unit: t.unit, labels: t.labels, deadlocks, ...notes }),
    );
  } else if (format === "json") {
    write(file, `${JSON.stringify(t.events, null, 1)}\n`);
  } else if (format === "perfetto") {
    const notes = t.notes ? { notes: t.notes } : {};
    const trace = toPerfetto(t.events, { title: t.title, unit: t.unit, size: t.size, deadlocks, ...notes });
    write(file, `${JSON.stringify(trace)}\n`);
  } else if (format === "html") {
    const views = t.views
      ? await t.views()
      : [
          await pageView({
            name: t.name ?? "trace",
            title: t.title,
            size: t.size,
            unit: t.unit,
            events: t.events,
            deadlocks,
          }),
        ];
    write(file, await stepPageHtml({ title: t.title, labels: t.labels ?? "auto", views, selected: 0 }));
  } else {
    const last = deadlocks[deadlocks.length - 1];
    if (!last) {
      throw new InvalidArgumentError(
        { op: "trace", arg: "--output" },
        "a .dot is a deadlock's wait-for graph, and this run did not deadlock",
      );
    }
    write(file, deadlockDot(last));
  }
}
