/**
 * `cclab explain`: the step table of an algorithm, printed from its schedule (run symbolically
 * by the checker), never written by hand. Each algorithm file's header carries the n = 4 table;
 * src/tools/headers.ts writes it there and a test keeps the two identical.
 */
import { type Cell, type CheckReport, cellText, checkAlgorithm } from "./check.js";
import { type CallArgs, regionText } from "./context.js";
import type { Algorithm, BufferName, LocalOp, Step, Transfer } from "./types.js";

/** The call explain shows by default: one element per chunk, so each cell is one rank's share. */
export function explainArgs(alg: Algorithm, size: number): CallArgs {
  switch (alg.collective) {
    case "broadcast":
    case "reduce":
    case "allreduce":
      return { size, count: size, root: 0, segment: 1 };
    case "alltoallv":
      return {
        size,
        count: 0,
        sendCounts: Array.from({ length: size }, (_, s) => Array.from({ length: size }, (_, d) => (s + 2 * d) % 3)),
        segment: 1,
      };
    case "barrier":
      return { size, count: 0, segment: 1 };
    default:
      return { size, count: 1, root: 0, segment: 1 };
  }
}

function transferText(t: Transfer): string {
  return t.kind === "send" ? `${regionText(t.region)}->${t.peer}` : `${regionText(t.region)}<-${t.peer}`;
}

function localText(l: LocalOp): string {
  return l.kind === "copy" ? `${regionText(l.dst)}=${regionText(l.src)}` : `${regionText(l.dst)}+=${regionText(l.src)}`;
}

interface Round {
  steps: Step[];
  /** The schedule's step indices in this round. */
  indices: number[];
  after: Record<BufferName, Cell[]>;
}

/** Groups one rank's steps into rounds: round k is its k-th communication step and the local-only steps after it. */
function rounds(report: CheckReport, rank: number): Round[] {
  const recs = report.records?.[rank] ?? [];
  const init = report.initial?.[rank] as Record<BufferName, Cell[]>;
  const out: Round[] = [{ steps: [], indices: [], after: init }];
  recs.forEach((rec, i) => {
    if (rec.step.transfers.length > 0) out.push({ steps: [rec.step], indices: [i], after: rec.after ?? init });
    else {
      const last = out[out.length - 1] as Round;
      last.steps.push(rec.step);
      last.indices.push(i);
      last.after = rec.after ?? init;
    }
  });
  return out;
}

/** One row of explain's state table after a step: 'out[0]' and each rank's cell text ('' where the rank has none). */
export interface StateRow {
  readonly name: string;
  readonly cells: string[];
}

/** One step of explain's table: each rank's operations and its buffers after them. */
export interface ExplainStep {
  /** 'step 0 (local)' or 'step k', as printed. */
  readonly title: string;
  /** Per rank, what it does in this step ('-' for nothing), as printed. */
  readonly ops: string[];
  /** Per rank, the schedule's step indices (the executor's 'step i' labels) that make up this step. */
  readonly indices: number[][];
  readonly rows: StateRow[];
}

/**
 * explain's table as data: what `explain` prints, step by step (step 0, the local one, only when
 * some rank does something before its first transfer), for pictures that show it.
 */
export function explainSteps(alg: Algorithm, args: CallArgs): { report: CheckReport; steps: ExplainStep[] } {
  const report = checkAlgorithm(alg, args, { snapshots: true, skipCost: true });
  const n = args.size;
  const perRank = Array.from({ length: n }, (_, r) => rounds(report, r));
  const total = Math.max(...perRank.map((r) => r.length));
  const steps: ExplainStep[] = [];
  for (let k = 0; k < total; k++) {
    if (k === 0 && perRank.every((r) => (r[0] as Round).steps.length === 0)) continue;
    const ops = perRank.map((rs) => {
      const rd = rs[k];
      const texts = rd
        ? rd.steps.map((s) => `${s.label}: ${[...s.transfers.map(transferText), ...s.local.map(localText)].join(" ")}`)
        : [];
      return texts.length > 0 ? texts.join("; ") : "-";
    });
    const state = (r: number): Record<BufferName, Cell[]> => {
      const rs = perRank[r] as Round[];
      return (rs[Math.min(k, rs.length - 1)] as Round).after;
    };
    steps.push({
      title: k === 0 ? "step 0 (local)" : `step ${k}`,
      ops,
      indices: perRank.map((rs) => rs[k]?.indices ?? []),
      rows: stateRows(n, report.stride, state),
    });
  }
  return { report, steps };
}

export function explain(alg: Algorithm, args: CallArgs = explainArgs(alg, 4)): string {
  const { report, steps } = explainSteps(alg, args);
  const n = args.size;
  const lines: string[] = [];
  const mode = `${args.inPlace ? "in place" : "out of place"}`;
  const rootText = args.root !== undefined ? `, root ${args.root}` : "";
  lines.push(
    `${alg.collective}/${alg.name}: n = ${n}, count = ${args.count}${rootText}, ${mode}, segment ${args.segment ?? "default"}`,
  );
  if (alg.collective === "alltoallv") {
    lines.push(`sendCounts[src][dst]: ${JSON.stringify(args.sendCounts)}`);
  }
  lines.push("cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written");
  if (report.errors.length > 0) {
    lines.push("", "the checker rejects this schedule:", ...report.errors.map((e) => `  ${e}`));
  }
  for (const step of steps) {
    lines.push("", step.title);
    step.ops.forEach((o, r) => {
      lines.push(`  rank ${r}  ${o}`);
    });
    lines.push(...stateTable(n, step.rows));
  }
  const formulas = `cost: ${alg.cost.stepsFormula} steps, ${alg.cost.bytesFormula} bytes sent per rank`;
  lines.push("", `${formulas}; here ${report.steps} steps, at most ${report.sentElements} elements sent by a rank`);
  return lines.join("\n");
}

function stateRows(n: number, stride: number, state: (r: number) => Record<BufferName, Cell[]>): StateRow[] {
  const rows: StateRow[] = [];
  for (const buf of ["output", "scratch"] as const) {
    const len = Math.max(...Array.from({ length: n }, (_, r) => state(r)[buf].length));
    const bufRows: StateRow[] = [];
    for (let j = 0; j < len; j++) {
      const cells = Array.from({ length: n }, (_, r) => {
        const c = state(r)[buf][j];
        return c === undefined ? "" : cellText(c, stride);
      });
      bufRows.push({ name: `${buf === "output" ? "out" : "tmp"}[${j}]`, cells });
    }
    // Scratch rows are shown only while some rank holds something there.
    if (buf === "output" || bufRows.some((row) => row.cells.some((c) => c !== "" && c !== "."))) rows.push(...bufRows);
  }
  return rows;
}

function stateTable(n: number, rows: readonly StateRow[]): string[] {
  if (rows.length === 0) return [];
  const nameW = Math.max(...rows.map((r) => r.name.length)) + 2;
  const cellW = Math.max(8, ...rows.flatMap((r) => r.cells.map((c) => c.length + 2)));
  const pad = (s: string, w: number) => s + " ".repeat(Math.max(0, w - s.length));
  const head = `  ${pad("", nameW)}${Array.from({ length: n }, (_, r) => pad(`rank ${r}`, cellW)).join("")}`.trimEnd();
  return [
    head,
    ...rows.map((row) => `  ${pad(row.name, nameW)}${row.cells.map((c) => pad(c, cellW)).join("")}`.trimEnd()),
  ];
}
