/**
 * `cclab explain`: an algorithm's step table, printed from its schedule (walked symbolically by
 * the interpreter), never written by hand: per communication step, what each rank posts and
 * what every rank's output and scratch hold afterwards, in [0+1] notation. Then, where dataflow
 * execution overlaps steps (a tree's down phase for one segment during the next one's up phase),
 * which steps run together in which round. The ring all-reduce header keeps its n = 4 table;
 * the other tables are golden files under test/golden/explain/ that a test keeps current.
 */
import { maxOf } from "../core/extent.js";
import { makeCall, specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import { compileAll, strideOf } from "./check.js";
import { type Algorithm, type BufferName, type LocalOp, regionText, type Step, type Transfer } from "./dsl.js";
import { interpret } from "./interpret.js";
import { type Plan, ScheduleError } from "./plan.js";
import { cellText } from "./results.js";
import { type Cell, SymbolicMemory } from "./symbolic.js";

/**
 * The call explain shows by default: the spec's explain call (one element per chunk) at n ranks,
 * one element per segment so that pipelining shows in the table.
 */
export function explainCall(alg: Algorithm, size: number): CollectiveCall {
  const spec = specOf(alg.collective);
  return makeCall(
    {
      collective: spec.name,
      size,
      segment: 1,
      ...spec.explainCall(size),
      // An algorithm written for whole units (an imported MSCCL program): one element per unit.
      ...(alg.domain ? { count: alg.domain.countMultiple ?? 1, root: alg.domain.roots?.[0] ?? 0 } : {}),
    },
    alg,
  );
}

/**
 * The call `cclab explain` and `cclab trace` run for their options: explain's own call (above)
 * unless a count is named; a named count without a segment gets the one default segment
 * (makeCall), so explain shows the segments the front API, bench and model plan for that call.
 */
export function explainCallFor(
  alg: Algorithm,
  size: number,
  given: { readonly count?: number; readonly root?: number; readonly inPlace?: boolean; readonly segment?: number },
): CollectiveCall {
  const base = explainCall(alg, size);
  if (given.count === undefined) return { ...base, ...defined(given) };
  return makeCall({ ...base, segment: undefined, ...defined(given) }, alg);
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const transferText = (t: Transfer): string =>
  t.kind === "send" ? `${regionText(t.region)}->${t.peer}` : `${regionText(t.region)}<-${t.peer}`;

function localText(l: LocalOp): string {
  switch (l.kind) {
    case "copy":
      return `${regionText(l.dst)}=${regionText(l.src)}`;
    case "reduce":
      return l.with
        ? `${regionText(l.dst)}=${regionText(l.with)}+${regionText(l.src)}`
        : `${regionText(l.dst)}+=${regionText(l.src)}`;
    case "scale":
      return `${regionText(l.dst)}=${regionText(l.src)}*${l.mul}/${l.div}`;
  }
}

/** The text of one step as explain prints it: 'recvReduceSend chunk 2: out[3]->1 tmp[0]<-3 out[2]+=tmp[0]'. */
export const stepText = (s: Step): string =>
  `${s.label}: ${[...s.transfers.map(transferText), ...s.local.map(localText)].join(" ")}`;

/** One row of explain's state table after a step: 'out[0]' and each rank's cell text ('' where the rank has none). */
export interface StateRow {
  readonly name: string;
  readonly cells: string[];
}

/** One step of explain's table: each rank's operations and every rank's buffers after them. */
export interface ExplainStep {
  /** 'step 0 (local)' or 'step k', as printed. */
  readonly title: string;
  /** Per rank, what it does in this step ('-' for nothing), as printed. */
  readonly ops: string[];
  /** Per rank, the plan's step indices (the executor's 'step i' labels) that make up this step. */
  readonly indices: number[][];
  readonly rows: StateRow[];
}

export interface Explanation {
  readonly call: CollectiveCall;
  /** Step k: each rank's k-th communication step and the local-only steps after it (step 0: those before any). */
  readonly steps: ExplainStep[];
  /** The checker's verdict on the walk ([] when it goes through). */
  readonly errors: readonly string[];
  /** Dataflow, each message one round: per round, per rank, the plan steps whose transfers complete then. */
  readonly dataflow: readonly (readonly (readonly number[])[])[];
  readonly plans: readonly Plan[];
}

/**
 * explain's table as data, walked symbolically in steps order (the interpreter with the symbolic
 * effect): what `explain` prints and the step-through page shows.
 */
export function explainSteps(alg: Algorithm, call: CollectiveCall): Explanation {
  const n = call.size;
  let plans: Plan[];
  try {
    plans = compileAll(alg, call);
  } catch (e) {
    if (e instanceof ScheduleError) return { call, steps: [], errors: [e.message], dataflow: [], plans: [] };
    throw e;
  }
  const stride = strideOf(plans);
  const errors: string[] = [];
  const sym = new SymbolicMemory(plans, stride, {
    fail: (r, op, m) => errors.push(`rank ${r}, step ${op.step}: ${m}`),
  });
  const snap = (r: number): Record<BufferName, Cell[]> => ({
    input: sym.view(r, "input"),
    output: sym.view(r, "output"),
    scratch: sym.view(r, "scratch"),
  });
  interface Round {
    steps: Step[];
    indices: number[];
    after: Record<BufferName, Cell[]>;
  }
  const perRank: Round[][] = plans.map((_, r) => [{ steps: [], indices: [], after: snap(r) }]);
  const left = plans.map((p) => {
    const m = new Map<number, number>();
    for (const op of p.ops) m.set(op.step, (m.get(op.step) ?? 0) + 1);
    return m;
  });
  const record = (r: number, s: number) => {
    const step = plans[r]?.steps[s] as Step;
    const rounds = perRank[r] as Round[];
    if (step.transfers.length > 0) rounds.push({ steps: [step], indices: [s], after: snap(r) });
    else {
      const last = rounds[rounds.length - 1] as Round;
      last.steps.push(step);
      last.indices.push(s);
      last.after = snap(r);
    }
  };
  const effects = sym.effects("steps");
  const out = interpret(
    plans,
    {
      ...effects,
      done: (at, t) => {
        effects.done?.(at, t);
        const m = left[at.rank] as Map<number, number>;
        const k = (m.get(at.op.step) as number) - 1;
        m.set(at.op.step, k);
        if (k === 0) record(at.rank, at.op.step);
      },
    },
    "steps",
  );
  if (!out.complete) errors.push("the schedule deadlocks (cclab verify gives the checker's message)");

  const total = maxOf(perRank.map((x) => x.length));
  const steps: ExplainStep[] = [];
  for (let k = 0; k < total; k++) {
    if (k === 0 && perRank.every((x) => (x[0] as Round).steps.length === 0)) continue;
    const state = (r: number) => {
      const rs = perRank[r] as Round[];
      return (rs[Math.min(k, rs.length - 1)] as Round).after;
    };
    steps.push({
      title: k === 0 ? "step 0 (local)" : `step ${k}`,
      ops: perRank.map((x) => {
        const ss = x[k]?.steps ?? [];
        return ss.length > 0 ? ss.map(stepText).join("; ") : "-";
      }),
      indices: perRank.map((x) => x[k]?.indices ?? []),
      rows: stateRows(n, stride, state),
    });
  }

  // Dataflow, each message one round and every ready one at once: which steps' transfers complete when.
  const dataflow: number[][][] = [];
  interpret(
    plans,
    {
      done: ({ rank, op }, t) => {
        if (op.kind !== "send" && op.kind !== "recv") return;
        const row = (dataflow[t - 1] ??= Array.from({ length: n }, () => []));
        const list = row[rank] as number[];
        if (!list.includes(op.step)) list.push(op.step);
      },
    },
    "dataflow",
  );
  return { call, steps, errors, dataflow: Array.from(dataflow, (x) => x ?? []), plans };
}

export function explain(alg: Algorithm, call: CollectiveCall = explainCall(alg, 4)): string {
  const e = explainSteps(alg, call);
  const n = call.size;
  const spec = specOf(call.collective);
  const lines: string[] = [];
  const root = spec.rooted ? `, root ${call.root}` : "";
  lines.push(
    `${alg.collective}/${alg.name}: n = ${n}, count = ${call.count}${root}, ${call.inPlace ? "in place" : "out of place"}, segment ${call.segment}`,
  );
  if (call.splits) lines.push(`splits[src][dst]: ${JSON.stringify(call.splits)}`);
  lines.push("cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written");
  if (e.errors.length > 0) lines.push("", "the checker rejects this schedule:", ...e.errors.map((x) => `  ${x}`));
  for (const step of e.steps) {
    lines.push("", step.title);
    step.ops.forEach((o, r) => {
      lines.push(`  rank ${r}  ${o}`);
    });
    lines.push(...stateTable(n, step.rows));
  }
  const commSteps = maxOf(
    e.plans.map((p) => new Set(p.ops.filter((o) => o.peer >= 0).map((o) => o.step)).size),
    0,
  );
  const sent = maxOf(
    e.plans.map((p) => p.ops.reduce((a, o) => a + (o.kind === "send" ? o.region.count : 0), 0)),
    0,
  );
  lines.push(
    "",
    `cost: ${alg.cost.steps.text} steps, ${alg.cost.sent.text} elements sent per rank; here ${commSteps} steps, at most ${sent} elements sent by a rank`,
  );
  const overlaps = overlapLines(e);
  if (overlaps.length > 0) {
    lines.push(
      `dataflow: ${e.dataflow.length} rounds deep (every ready message at once); steps that overlap:`,
      ...overlaps,
    );
  }
  return lines.join("\n");
}

/** Rounds in which one rank completes transfers of more than one step (dataflow overlap). */
function overlapLines(e: Explanation): string[] {
  const out: string[] = [];
  e.dataflow.forEach((row, t) => {
    row.forEach((steps, r) => {
      if (steps.length < 2) return;
      const names = steps.map((s) => `step ${s} (${e.plans[r]?.steps[s]?.label})`);
      out.push(`  round ${t + 1}  rank ${r}: ${names.join(" with ")}`);
    });
  });
  return out;
}

/** Rows of the state table: every output element, and scratch elements while some rank holds something there. */
function stateRows(n: number, stride: number, state: (r: number) => Record<BufferName, Cell[]>): StateRow[] {
  const rows: StateRow[] = [];
  for (const buf of ["output", "scratch"] as const) {
    const len = maxOf(Array.from({ length: n }, (_, r) => state(r)[buf].length));
    const bufRows: StateRow[] = [];
    for (let j = 0; j < len; j++) {
      const cells = Array.from({ length: n }, (_, r) => {
        const c = state(r)[buf][j];
        return c === undefined ? "" : cellText(c, stride);
      });
      bufRows.push({ name: `${buf === "output" ? "out" : "tmp"}[${j}]`, cells });
    }
    if (buf === "output" || bufRows.some((row) => row.cells.some((c) => c !== "" && c !== "."))) rows.push(...bufRows);
  }
  return rows;
}

function stateTable(n: number, rows: readonly StateRow[]): string[] {
  if (rows.length === 0) return [];
  const nameW = maxOf(rows.map((r) => r.name.length)) + 2;
  const cellW = maxOf(
    rows.flatMap((r) => r.cells.map((c) => c.length + 2)),
    8,
  );
  const pad = (s: string, w: number) => s + " ".repeat(Math.max(0, w - s.length));
  const head = `  ${pad("", nameW)}${Array.from({ length: n }, (_, r) => pad(`rank ${r}`, cellW)).join("")}`.trimEnd();
  return [
    head,
    ...rows.map((row) => `  ${pad(row.name, nameW)}${row.cells.map((c) => pad(c, cellW)).join("")}`.trimEnd()),
  ];
}
