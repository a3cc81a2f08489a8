/**
 * What a trace says, as a time-space diagram's data (no drawing): each send paired with the
 * receive it matched, the algorithm step of each event (from the executor's labels), where each
 * step begins and what it does, the local operations and the deadlocks. Computed once per trace;
 * render.ts draws any view of it. Reads only TraceEvents, so every backend's trace serves.
 */
import { maxOf, minOf } from "../core/extent.js";
import type { DeadlockRecord, TraceEvent } from "../trace.js";
import { bytesText } from "./svg.js";

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

/** Which step an event belongs to: by default the executor's 'step i' in its label. */
export type StepFor = (e: TraceEvent) => number | undefined;
const labelStep: StepFor = (e) => stepOf(e.label);

/** The first post of each algorithm step, over all ranks, with what the step does. */
export function stepStarts(
  events: readonly TraceEvent[],
  stepFor: StepFor = labelStep,
): { step: number; start: number; what: string }[] {
  const byStep = new Map<number, { start: number; details: string[] }>();
  for (const e of events) {
    const k = stepFor(e);
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

/** A message as drawn: its step, its label text and its hover text. */
export interface DrawnMessage extends Message {
  readonly step: number | undefined;
  /** What the label says: the step detail beyond what the step header already says, and the bytes. */
  readonly text: string;
  /** A shorter label for tight spots. */
  readonly short: string;
  /** The detail alone ('' where the step header says it all). */
  readonly detail: string;
  readonly tip: string;
}

/** Everything the renderer needs from a trace, computed once (the page keeps it across zooms). */
export interface Diagram {
  readonly size: number;
  readonly unit: string;
  readonly t0: number;
  readonly t1: number;
  readonly messages: readonly DrawnMessage[];
  readonly locals: readonly TraceEvent[];
  readonly guides: readonly { step: number; start: number; what: string }[];
  readonly deadlocks: readonly DeadlockRecord[];
}

export interface DiagramInput {
  readonly size?: number;
  /** The unit of start/end: 'tick' for sim's logical time, 'µs' for real backends. */
  readonly unit?: string;
  /** Which step each event belongs to (default: the executor's step in its label). */
  readonly stepFor?: StepFor;
  /** Deadlocks the run hit (sim records them in its Trace). */
  readonly deadlocks?: readonly DeadlockRecord[];
}

export function diagram(events: readonly TraceEvent[], o: DiagramInput = {}): Diagram {
  const stepFor = o.stepFor ?? labelStep;
  const size =
    o.size ??
    maxOf(
      events.map((e) => Math.max(e.rank, e.peer ?? 0)),
      0,
    ) + 1;
  const deadlocks = o.deadlocks ?? [];
  const t0 = minOf(
    events.map((e) => e.start),
    0,
  );
  const t1 = Math.max(
    maxOf(
      events.map((e) => e.end),
      t0 + 1,
    ),
    maxOf(deadlocks.map((d) => d.at + 1)),
  );
  const guides = stepStarts(events, stepFor);
  const what = new Map(guides.map((g) => [g.step, g.what]));
  const messages = pairMessages(events).messages.map((m): DrawnMessage => {
    const step = stepFor(m.send);
    const detail = stepDetail(m.send.label);
    // The header says 'step 3: recvReduceSend'; the label adds only what differs ('chunk 2').
    const common = step === undefined ? "" : (what.get(step) ?? "");
    const rest = common && detail.startsWith(common) ? detail.slice(common.length).trim() : detail;
    const bytes = bytesText(m.send.bytes);
    return {
      ...m,
      step,
      text: rest ? `${rest} · ${bytes}` : bytes,
      short: rest || bytes,
      detail: rest,
      tip: `rank ${m.send.rank} -> rank ${m.recv.rank}: ${m.send.label ?? ""} ${m.send.count} x ${m.send.dtype} (${bytes})`,
    };
  });
  const locals = events.filter((e) => e.kind !== "send" && e.kind !== "recv");
  return { size, unit: o.unit ?? "tick", t0, t1, messages, locals, guides, deadlocks };
}
