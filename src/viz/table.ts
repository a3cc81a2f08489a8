/**
 * The text form of a trace: bytes each rank sent in each algorithm step, their totals, and the
 * algorithm's own byte formula beside them, so `cclab trace` without -o shows whether the run
 * sent what the header claims.
 */
import { maxOf } from "../core/extent.js";
import type { TraceEvent } from "../trace.js";
import { commonDetail, stepDetail, stepOf } from "./diagram.js";
import type { EventNote } from "./notes.js";

export interface FormulaBytes {
  /** The algorithm's formula text, e.g. '2(n-1)/n · count · s'. */
  readonly text: string;
  /** Its value: the most bytes a rank sends (cost.sentElements × element size); NaN where it varies. */
  readonly maxBytes: number;
}

/**
 * Step rows (bytes sent per rank), a total row, and the formula comparison. With explain's notes
 * on the events (notes.ts), steps are numbered as explain numbers them; else by the schedule
 * index in each event's label.
 */
export function traceTable(
  events: readonly TraceEvent[],
  size: number,
  formula?: FormulaBytes,
  notes?: readonly (EventNote | undefined)[],
): string {
  const steps = new Map<number, { sent: number[]; details: string[] }>();
  const total = new Array<number>(size).fill(0);
  for (const [i, e] of events.entries()) {
    if (e.kind !== "send") continue;
    const k = (notes ? notes[i]?.step : stepOf(e.label)) ?? -1;
    let row = steps.get(k);
    if (!row) {
      row = { sent: new Array<number>(size).fill(0), details: [] };
      steps.set(k, row);
    }
    row.sent[e.rank] = (row.sent[e.rank] ?? 0) + e.bytes;
    row.details.push(stepDetail(e.label));
    total[e.rank] = (total[e.rank] ?? 0) + e.bytes;
  }
  const head = ["step", "what", ...Array.from({ length: size }, (_, r) => `rank ${r}`)];
  const rows: string[][] = [...steps.entries()]
    .sort(([a], [b]) => a - b)
    .map(([k, row]) => [k < 0 ? "-" : String(k), commonDetail(row.details), ...row.sent.map(String)]);
  rows.push(["total", "", ...total.map(String)]);
  const widths = head.map((h, i) =>
    maxOf(
      rows.map((r) => (r[i] ?? "").length),
      h.length,
    ),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join("  ")
      .trimEnd();
  const out = ["bytes sent per rank, per step (from the trace)", line(head), ...rows.map(line)];
  if (formula) {
    const traced = maxOf(total, 0);
    const verdict = Number.isNaN(formula.maxBytes)
      ? "the formula varies with the call"
      : traced === formula.maxBytes
        ? "matches"
        : `DIFFERS (formula ${formula.maxBytes})`;
    out.push(
      "",
      `formula: ${formula.text} bytes per rank = ${Number.isNaN(formula.maxBytes) ? "varies" : formula.maxBytes} (the busiest rank)`,
      `trace:   busiest rank sent ${traced} bytes: ${verdict}`,
    );
  }
  return out.join("\n");
}
