/**
 * Trace events tied to explain's table, with nothing but types imported (the page's browser code
 * uses it): each send or receive gets the step number explain prints and the region it moves in
 * explain's words, from the step-through data (steps.ts).
 */
import type { TraceEvent } from "../trace.js";
import type { StepThrough, StepTransfer } from "./step-data.js";

/**
 * For each rank, the page's step number of each schedule index: trace events carry the schedule
 * index ('step i'), the page numbers steps as explain does.
 */
export function stepOfIndex(st: StepThrough): Map<number, number>[] {
  const out = Array.from({ length: st.ranks }, () => new Map<number, number>());
  st.steps.forEach((s, k) => {
    const step = Number(/^step (\d+)/.exec(s.label)?.[1] ?? k);
    s.indices.forEach((idx, r) => {
      for (const i of idx) out[r]?.set(i, step);
    });
  });
  return out;
}

/** What explain says about one traced send or receive: its step (explain's number) and the region it moves. */
export interface EventNote {
  readonly step: number;
  /** 'in[3]': the region sent, or received into (undefined where the trace and the schedule disagree). */
  readonly region?: string;
}

/**
 * Ties each traced transfer to explain's table: its step number as explain prints it and the
 * region it moves, in explain's words. An event names its schedule step ('step i' in its label);
 * within a step, the k-th event of a kind to a peer is the step's k-th transfer of that kind to
 * that peer (every backend posts a step's transfers in order). Where the counts disagree (a trace
 * of another call), the event keeps its step but gets no region rather than a wrong one.
 * Local operations get their step alone; events outside the schedule get undefined.
 */
export function eventNotes(st: StepThrough, events: readonly TraceEvent[]): (EventNote | undefined)[] {
  const of = stepOfIndex(st);
  // Per rank and schedule index, the transfers in order, and their explain step.
  const byIndex = new Map<string, StepTransfer[]>();
  st.steps.forEach((s) => {
    s.transfers.forEach((ts, r) => {
      for (const t of ts) {
        const key = `${r}:${t.index}:${t.kind}:${t.peer}`;
        const list = byIndex.get(key);
        if (list) list.push(t);
        else byIndex.set(key, [t]);
      }
    });
  });
  const seen = new Map<string, number>();
  const counts = new Map<string, number>();
  const keys = events.map((e) => {
    const i = /\bstep (\d+)\b/.exec(e.label ?? "")?.[1];
    if (i === undefined) return undefined;
    if ((e.kind !== "send" && e.kind !== "recv") || e.peer === undefined) return { index: Number(i) };
    const key = `${e.rank}:${i}:${e.kind}:${e.peer}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return { key, index: Number(i) };
  });
  const out: (EventNote | undefined)[] = new Array(events.length).fill(undefined);
  // In post order (as pairMessages takes them), the trace's order breaking ties.
  const order = events.map((e, n) => ({ e, n })).sort((a, b) => a.e.start - b.e.start || a.n - b.n);
  for (const { e, n } of order) {
    const k = keys[n];
    if (!k) continue;
    const step = of[e.rank]?.get(k.index);
    if (step === undefined) continue;
    if (k.key === undefined) {
      out[n] = { step };
      continue;
    }
    const ts = byIndex.get(k.key) ?? [];
    const j = seen.get(k.key) ?? 0;
    seen.set(k.key, j + 1);
    const region = counts.get(k.key) === ts.length ? ts[j]?.region : undefined;
    out[n] = region === undefined ? { step } : { step, region };
  }
  return out;
}
