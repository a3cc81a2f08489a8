/**
 * What a trace says, as a time-space diagram's data (no drawing): each send paired with the
 * receive it matched, the algorithm step of each event, where each step's messages are and what
 * it does, the local operations and the deadlocks. Computed once per trace; render.ts draws any
 * view of it. Reads only TraceEvents, so every backend's trace serves; given explain's notes on
 * the events (notes.ts), steps are numbered as explain numbers them and each message is labelled
 * with the regions it moves in explain's words ('in[3]→out[3]'), else by the executor's labels.
 */
import { maxOf, minOf } from "../core/extent.js";
import type { DeadlockRecord, TraceEvent } from "../trace.js";
import type { EventNote } from "./notes.js";
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

/**
 * Where each algorithm step is drawn, with what it does: at the earliest post of its messages'
 * sends (where its first arrow starts), so the marker sits with the step's arrows and not at a
 * receive posted long before; a step with no message at the earliest post of its events.
 */
export function stepStarts(
  events: readonly TraceEvent[],
  stepFor: StepFor = labelStep,
): { step: number; start: number; what: string }[] {
  const byStep = new Map<number, { start: number; sendStart: number; details: string[] }>();
  for (const e of events) {
    const k = stepFor(e);
    if (k === undefined) continue;
    const s = byStep.get(k) ?? { start: e.start, sendStart: Number.POSITIVE_INFINITY, details: [] };
    byStep.set(k, s);
    s.start = Math.min(s.start, e.start);
    s.details.push(stepDetail(e.label));
  }
  for (const m of pairMessages(events).messages) {
    const s = byStep.get(stepFor(m.send) ?? Number.NaN);
    if (s) s.sendStart = Math.min(s.sendStart, m.send.start);
  }
  return [...byStep.entries()]
    .sort(([a], [b]) => a - b)
    .map(([step, s]) => ({
      step,
      start: Number.isFinite(s.sendStart) ? s.sendStart : s.start,
      what: commonDetail(s.details),
    }));
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
  /**
   * Per event (same order), explain's step number and region (notes.ts's eventNotes): steps are
   * then numbered as explain's table and messages labelled with what they move. Overrides stepFor.
   */
  readonly notes?: readonly (EventNote | undefined)[];
}

export function diagram(events: readonly TraceEvent[], o: DiagramInput = {}): Diagram {
  const noteOf = new Map<TraceEvent, EventNote>();
  o.notes?.forEach((n, i) => {
    const e = events[i];
    if (n && e) noteOf.set(e, n);
  });
  const stepFor: StepFor = o.notes ? (e) => noteOf.get(e)?.step : (o.stepFor ?? labelStep);
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
    const bytes = bytesText(m.send.bytes);
    const from = noteOf.get(m.send)?.region;
    const into = noteOf.get(m.recv)?.region;
    if (from !== undefined && into !== undefined) {
      // What the data is, in explain's words: the sender's region and the receiver's (one name where they are the same).
      const moves = from === into ? from : `${from}→${into}`;
      const at = step === undefined ? "" : `step ${step}: `;
      return {
        ...m,
        step,
        text: `${moves} · ${bytes}`,
        short: moves,
        detail: moves,
        tip: `${at}rank ${m.send.rank} ${from} -> rank ${m.recv.rank} ${into}, ${m.send.count} x ${m.send.dtype} (${bytes})`,
      };
    }
    const detail = stepDetail(m.send.label);
    // The header says 'step 3: recvReduceSend'; the label adds only what differs ('chunk 2').
    const common = step === undefined ? "" : (what.get(step) ?? "");
    const rest = common && detail.startsWith(common) ? detail.slice(common.length).trim() : detail;
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
