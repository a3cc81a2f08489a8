/**
 * The step-through page's data, packed for the file and unpacked in the browser. A page for 64
 * ranks holds explain's table after every step (64 ranks x 64+ rows of '[0+1+...]' cells, a few
 * hundred steps per algorithm) and thousands of trace events: written out plainly that is
 * hundreds of megabytes. Packed, each step keeps only the cells that changed since the step
 * before, every string (cell text, operation text, label) is stored once, and events are rows
 * of numbers. `unpackView(packView(v))` gives back `v` exactly (a test holds it).
 */
import type { DType } from "../core/dtype.js";
import type { TraceEvent, TraceKind } from "../trace.js";
import type { LabelMode } from "./labels.js";
import type { PageView } from "./page-data.js";
import type { BufferRow, StepThrough, StepTransfer, StepView } from "./steps.js";

/** Strings stored once, referred to by index. */
class Strings {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();
  id(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(s);
      this.index.set(s, i);
    }
    return i;
  }
}

const KINDS: readonly TraceKind[] = ["send", "recv", "copy", "reduce", "scale"];

/** '[0+1+2+3+7]' -> '[0~3+7]': runs of three or more consecutive ranks shortened (cells at n = 64 are long). */
export function packCell(text: string): string {
  if (!/^\[\d+(\+\d+)*\]$/.test(text)) return text;
  const ns = text.slice(1, -1).split("+").map(Number);
  const out: string[] = [];
  for (let i = 0; i < ns.length; ) {
    let j = i;
    while (j + 1 < ns.length && (ns[j + 1] as number) === (ns[j] as number) + 1) j++;
    if (j - i >= 2) out.push(`${ns[i]}~${ns[j]}`);
    else for (let k = i; k <= j; k++) out.push(String(ns[k]));
    i = j + 1;
  }
  return `[${out.join("+")}]`;
}

export function unpackCell(text: string): string {
  if (!text.includes("~")) return text;
  return text.replace(/(\d+)~(\d+)/g, (_, a: string, b: string) => {
    const parts: number[] = [];
    for (let k = Number(a); k <= Number(b); k++) parts.push(k);
    return parts.join("+");
  });
}

export interface PackedSteps {
  readonly ranks: number;
  readonly call: StepThrough["call"];
  readonly errors: readonly string[];
  /** Per step: label, ops (string ids per rank), schedule indices, the row names if they differ from the step before, and changed cells as [row, rank, text id] triples. */
  readonly steps: readonly {
    readonly label: string;
    readonly ops: readonly number[];
    readonly indices: readonly (readonly number[])[];
    /** Per rank, its transfers as [schedule index, 0 send / 1 recv, peer, region id] runs. */
    readonly transfers: readonly (readonly number[])[];
    readonly rows?: readonly number[];
    readonly changes: readonly number[];
  }[];
}

export interface PackedView {
  readonly name: string;
  readonly title: string;
  readonly size: number;
  readonly unit: string;
  /** Every string the view uses. */
  readonly strings: readonly string[];
  /** Per event: rank, kind, peer (-1: none), count, dtype (string id), bytes, label (string id, -1: none), start, end. */
  readonly events: readonly (readonly number[])[];
  readonly eventSteps?: readonly (number | null)[];
  readonly steps?: PackedSteps;
  readonly deadlocks: PageView["deadlocks"];
  readonly network?: PageView["network"];
}

/** PageData as the page carries it: each view packed. */
export interface PackedPageData {
  readonly title: string;
  readonly labels: LabelMode;
  readonly views: readonly PackedView[];
  readonly selected: number;
}

export function packView(v: PageView): PackedView {
  const strings = new Strings();
  const events = v.events.map((e) => [
    e.rank,
    KINDS.indexOf(e.kind),
    e.peer ?? -1,
    e.count,
    strings.id(e.dtype),
    e.bytes,
    e.label === undefined ? -1 : strings.id(e.label),
    e.start,
    e.end,
  ]);
  let steps: PackedSteps | undefined;
  if (v.steps) {
    let prevNames: string[] = [];
    let prev = new Map<string, readonly string[]>();
    steps = {
      ranks: v.steps.ranks,
      call: v.steps.call,
      errors: v.steps.errors,
      steps: v.steps.steps.map((s) => {
        const names = s.rows.map((r) => r.name);
        const sameRows = names.length === prevNames.length && names.every((n, i) => n === prevNames[i]);
        const changes: number[] = [];
        s.rows.forEach((row, i) => {
          const before = prev.get(row.name);
          row.cells.forEach((c, r) => {
            if (before?.[r] !== c) changes.push(i, r, strings.id(packCell(c)));
          });
        });
        prevNames = names;
        prev = new Map(s.rows.map((r) => [r.name, r.cells]));
        return {
          label: s.label,
          ops: s.ops.map((o) => strings.id(o)),
          indices: s.indices,
          transfers: s.transfers.map((ts) =>
            ts.flatMap((t) => [t.index, t.kind === "send" ? 0 : 1, t.peer, strings.id(t.region)]),
          ),
          ...(sameRows ? {} : { rows: names.map((n) => strings.id(n)) }),
          changes,
        };
      }),
    };
  }
  return {
    name: v.name,
    title: v.title,
    size: v.size,
    unit: v.unit,
    strings: strings.list,
    events,
    ...(v.eventSteps ? { eventSteps: v.eventSteps } : {}),
    ...(steps ? { steps } : {}),
    deadlocks: v.deadlocks,
    ...(v.network ? { network: v.network } : {}),
  };
}

export function unpackView(p: PackedView): PageView {
  const str = (i: number) => p.strings[i] as string;
  const events = p.events.map((row): TraceEvent => {
    const [rank, kind, peer, count, dtype, bytes, label, start, end] = row as number[];
    return {
      rank: rank as number,
      kind: KINDS[kind as number] as TraceKind,
      ...((peer as number) >= 0 ? { peer } : {}),
      count: count as number,
      dtype: str(dtype as number) as DType,
      bytes: bytes as number,
      ...((label as number) >= 0 ? { label: str(label as number) } : {}),
      start: start as number,
      end: end as number,
    };
  });
  let steps: StepThrough | undefined;
  if (p.steps) {
    let names: string[] = [];
    let cells = new Map<string, string[]>();
    const out: StepView[] = p.steps.steps.map((s) => {
      if (s.rows) names = s.rows.map(str);
      const next = new Map<string, string[]>();
      for (const n of names) next.set(n, [...(cells.get(n) ?? new Array<string>(p.steps?.ranks ?? 0).fill(""))]);
      for (let i = 0; i < s.changes.length; i += 3) {
        const row = next.get(names[s.changes[i] as number] as string) as string[];
        row[s.changes[i + 1] as number] = unpackCell(str(s.changes[i + 2] as number));
      }
      cells = next;
      const rows: BufferRow[] = names.map((name) => ({ name, cells: [...(next.get(name) as string[])] }));
      const transfers = s.transfers.map((flat) => {
        const ts: StepTransfer[] = [];
        for (let i = 0; i < flat.length; i += 4)
          ts.push({
            index: flat[i] as number,
            kind: flat[i + 1] === 0 ? "send" : "recv",
            peer: flat[i + 2] as number,
            region: str(flat[i + 3] as number),
          });
        return ts;
      });
      return { label: s.label, ops: s.ops.map(str), indices: s.indices, transfers, rows };
    });
    steps = { ranks: p.steps.ranks, call: p.steps.call, errors: p.steps.errors, steps: out };
  }
  return {
    name: p.name,
    title: p.title,
    size: p.size,
    unit: p.unit,
    events,
    ...(p.eventSteps ? { eventSteps: p.eventSteps } : {}),
    ...(steps ? { steps } : {}),
    deadlocks: p.deadlocks,
    ...(p.network ? { network: p.network } : {}),
  };
}
