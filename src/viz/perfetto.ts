/**
 * A cclab trace as Chrome/Perfetto Trace Event JSON (`--format perfetto`), which ui.perfetto.dev
 * and chrome://tracing open, so a cclab run can sit next to a PyTorch profiler trace.
 *
 * Layout: one process per rank ("rank 3", sorted by rank, like a profiler's process per rank),
 * whose threads are tracks: "transfers" (and "transfers 2", "3", ... where operations overlap:
 * non-blocking sends and a group's sends and receives run at once, and a thread's slices may not
 * overlap), and "local" for copies, reductions and scales. A complete slice ('X') per operation
 * with bytes, count, dtype, peer, step (explain's number) and label as args; a flow ('s' at the send, 'f' at its
 * receive, bound to the enclosing slice) from every send to the receive it matched; an instant
 * ('i') on each rank blocked in a deadlock. Times: real backends' microseconds as they are; sim's
 * logical ticks as 1 ms each (Trace Event times are microseconds), said in the process labels.
 */
import { maxOf } from "../core/extent.js";
import type { DeadlockRecord, TraceEvent } from "../trace.js";
import { pairMessages, stepOf } from "./diagram.js";
import type { EventNote } from "./notes.js";

export interface PerfettoOptions {
  /** What ran ('allreduce/ring on sim, n = 8'): the processes' label. */
  readonly title: string;
  /** 'tick' (sim) or 'µs'. */
  readonly unit: string;
  readonly size?: number;
  readonly deadlocks?: readonly DeadlockRecord[];
  /**
   * Per event, explain's step number and region (notes.ts): the step arg is then explain's number
   * and a transfer's region is its arg too. Without notes the step is the schedule's index from
   * the label, named 'schedule step' so it is not mistaken for explain's.
   */
  readonly notes?: readonly (EventNote | undefined)[];
}

export interface TraceEventJson {
  readonly name: string;
  readonly ph: string;
  readonly pid: number;
  readonly tid: number;
  readonly ts?: number;
  readonly dur?: number;
  readonly cat?: string;
  readonly id?: number;
  readonly bp?: string;
  readonly s?: string;
  readonly args?: Record<string, unknown>;
}

export interface PerfettoTrace {
  readonly traceEvents: TraceEventJson[];
  readonly displayTimeUnit: "ns" | "ms";
  readonly metadata: Record<string, unknown>;
}

/** Microseconds per sim tick in the output. */
export const TICK_US = 1000;
const LOCAL_TID = 999;

/** The trace in Trace Event format. */
export function toPerfetto(events: readonly TraceEvent[], o: PerfettoOptions): PerfettoTrace {
  const sim = o.unit === "tick";
  const scale = sim ? TICK_US : 1;
  // A slice needs a width for its flow to bind to it: sim's same-tick operations get 1 µs.
  const minDur = sim ? 1 : 0.001;
  const size =
    o.size ??
    maxOf(
      events.map((e) => Math.max(e.rank, e.peer ?? -1)),
      0,
    ) + 1;
  const ts = (t: number) => Math.round(t * scale * 1000) / 1000;

  // Each transfer on its rank's first thread where it overlaps nothing.
  const slices = events.map((e, i) => {
    const start = ts(e.start);
    return { e, i, start, dur: Math.max(ts(e.end) - start, minDur), tid: 0 };
  });
  const lanes: number[][] = Array.from({ length: size }, () => []);
  const order = [...slices].sort((a, b) => a.start - b.start || b.dur - a.dur || a.i - b.i);
  for (const s of order) {
    if (s.e.kind !== "send" && s.e.kind !== "recv") {
      s.tid = LOCAL_TID;
      continue;
    }
    const ends = lanes[s.e.rank] as number[];
    let lane = ends.findIndex((end) => end <= s.start);
    if (lane < 0) lane = ends.push(0) - 1;
    ends[lane] = s.start + s.dur;
    s.tid = lane + 1;
  }

  const out: TraceEventJson[] = [];
  const label = sim ? `${o.title} (sim: 1 ms = one scheduler round)` : o.title;
  for (let r = 0; r < size; r++) {
    out.push(
      { name: "process_name", ph: "M", pid: r, tid: 0, args: { name: `rank ${r}` } },
      { name: "process_sort_index", ph: "M", pid: r, tid: 0, args: { sort_index: r } },
      { name: "process_labels", ph: "M", pid: r, tid: 0, args: { labels: label } },
    );
    const used = new Set(slices.filter((s) => s.e.rank === r).map((s) => s.tid));
    if ((o.deadlocks ?? []).some((d) => d.blocked.some((b) => b.rank === r))) used.add(1);
    for (const tid of [...used].sort((a, b) => a - b)) {
      const name = tid === LOCAL_TID ? "local (copy, reduce, scale)" : tid === 1 ? "transfers" : `transfers ${tid}`;
      out.push(
        { name: "thread_name", ph: "M", pid: r, tid, args: { name } },
        { name: "thread_sort_index", ph: "M", pid: r, tid, args: { sort_index: tid } },
      );
    }
  }

  const timed: TraceEventJson[] = [];
  for (const s of slices) {
    const e = s.e;
    const name = e.kind === "send" ? `send → ${e.peer}` : e.kind === "recv" ? `recv ← ${e.peer}` : e.kind;
    const note = o.notes?.[s.i];
    const index = stepOf(e.label);
    const step = o.notes
      ? { ...(note ? { step: note.step } : {}), ...(note?.region ? { region: note.region } : {}) }
      : index !== undefined
        ? { "schedule step": index }
        : {};
    timed.push({
      name,
      cat: `cclab,${e.kind}`,
      ph: "X",
      pid: e.rank,
      tid: s.tid,
      ts: s.start,
      dur: s.dur,
      args: {
        bytes: e.bytes,
        count: e.count,
        dtype: e.dtype,
        ...(e.peer !== undefined ? { peer: e.peer } : {}),
        ...step,
        ...(e.label !== undefined ? { label: e.label } : {}),
      },
    });
  }

  // Flows: leave the send just after it starts, arrive in the receive just before it ends.
  const sliceOf = new Map(slices.map((s) => [s.e, s]));
  pairMessages(events).messages.forEach((m, id) => {
    const s = sliceOf.get(m.send);
    const r = sliceOf.get(m.recv);
    if (!s || !r) return;
    const eps = (d: number) => Math.min(d / 2, minDur / 2);
    const bytes = { bytes: m.send.bytes };
    timed.push(
      {
        name: "message",
        cat: "cclab.flow",
        ph: "s",
        id,
        pid: s.e.rank,
        tid: s.tid,
        ts: s.start + eps(s.dur),
        args: bytes,
      },
      {
        name: "message",
        cat: "cclab.flow",
        ph: "f",
        bp: "e",
        id,
        pid: r.e.rank,
        tid: r.tid,
        ts: r.start + r.dur - eps(r.dur),
        args: bytes,
      },
    );
  });

  for (const d of o.deadlocks ?? []) {
    for (const b of d.blocked) {
      timed.push({
        name: `deadlock: blocked in ${b.kind} ${b.kind === "send" ? "to" : "from"} ${b.peer}`,
        cat: "cclab,deadlock",
        ph: "i",
        s: "p",
        pid: b.rank,
        tid: 1,
        ts: ts(d.at),
        args: {
          peer: b.peer,
          count: b.count,
          dtype: b.dtype,
          cycle: d.cycle.join(" -> "),
          ...(b.label ? { label: b.label } : {}),
        },
      });
    }
  }
  // In time order (per thread too), a slice before what starts inside it.
  timed.sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0) || (b.dur ?? 0) - (a.dur ?? 0));
  return {
    traceEvents: [...out, ...timed],
    displayTimeUnit: sim ? "ms" : "ns",
    metadata: { source: "cclab", title: o.title, unit: sim ? `1 ms = 1 sim tick` : "µs" },
  };
}
