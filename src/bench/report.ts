/**
 * nccl-tests' output, so tools that read all_reduce_perf logs read cclab's too: '#' header
 * lines, one row per size (size, count, type, redop, root, then time/algbw/busbw/#wrong out of
 * place and in place), then "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth".
 * cclab adds, on the right, the engine's own collective's time and busbw, the hand-rolled
 * out-of-place time per call (min, median, p99, max, each call timed on its own as nccl-tests' -I;
 * where calls are not timed one by one, the rounds' min, median and max and no p99), the
 * built-in's median per call, and the algbw ratio by median and by mean (stats.ts says why
 * both). Comparing algorithms
 * (`--algorithm a,b`), a last column names each row's algorithm.
 * Each row is printed the moment its size is done, in nccl-tests' column widths (printf's: a wider
 * cell shifts the rest of its row).
 */
import { bytesText } from "../viz/svg.js";
import { floorsLine } from "./floors.js";
import { AVERAGE_TEXT, DEFAULT_AVERAGE, ROUNDS } from "./stats.js";
import type { BenchResult, BenchRow, Measurement } from "./types.js";

/** nccl-tests' time format: 2 decimals below 100 µs, 1 below 10 ms, none above. */
export function timeCell(us: number): string {
  if (us >= 10000) return us.toFixed(0);
  if (us >= 100) return us.toFixed(1);
  return us.toFixed(2);
}

const bw = (x: number) => x.toFixed(2);
/** Two decimals, or two significant digits for ratios below 0.1 (so 0.004 does not print as 0.00). */
export const ratioCell = (x: number) => (x >= 0.1 || x === 0 ? x.toFixed(2) : x.toPrecision(2));
const wrongCell = (w: number | null) => (w === null ? "N/A" : String(w));

/** Minimum widths as nccl-tests' printf formats (%12li %12li %8s %6s %6i, then %7s %6s %6s %6s per variant). */
const WIDTHS = [11, 12, 8, 6, 6, 7, 6, 6, 6, 7, 6, 6, 6, 7, 6, 7, 7, 7, 7, 7, 6, 6];

function variantCells(m: Measurement): string[] {
  return [timeCell(m.timeUs), bw(m.algbw), bw(m.busbw), wrongCell(m.wrong)];
}

function rowCells(r: BenchRow, withBuiltin: boolean): string[] {
  const cells = [
    String(r.size),
    String(r.count),
    r.type,
    r.redop,
    String(r.root),
    ...variantCells(r.outOfPlace),
    ...variantCells(r.inPlace),
  ];
  if (withBuiltin) {
    const b = r.builtin;
    const s = r.outOfPlace.perCall ?? r.outOfPlace.spread;
    cells.push(b ? timeCell(b.timeUs) : "N/A", b ? bw(b.busbw) : "N/A");
    cells.push(...(s ? [timeCell(s.min), timeCell(s.median)] : ["N/A", "N/A"]));
    cells.push(s && "p99" in s ? timeCell(s.p99) : "N/A", s ? timeCell(s.max) : "N/A");
    const bm = b?.perCall ?? b?.spread;
    cells.push(bm ? timeCell(bm.median) : "N/A");
    cells.push(r.ratio ? ratioCell(r.ratio.median) : "N/A", r.ratio ? ratioCell(r.ratio.mean) : "N/A");
  }
  return cells;
}

const SEP = "  ";

/** A line of cells, each right-aligned to at least nccl-tests' width (a wider cell shifts the rest, as printf does). */
function cellsLine(cells: readonly string[]): string {
  return cells
    .map((c, i) => c.padStart(WIDTHS[i] ?? 0))
    .join(SEP)
    .trimEnd();
}

/** What the table's columns depend on: the built-in's name (null: no built-in columns), the --algorithm given. */
export type TableShape = Pick<BenchResult, "builtinName" | "algorithm">;

/** Comparing algorithms (--algorithm a,b): a last column names each row's algorithm. */
const withAlgorithm = (t: TableShape) => t.algorithm.includes(",");

/** The table's three header lines ('#' first, as nccl-tests): the column groups, the names, the units. */
export function tableHeadLines(t: TableShape): string[] {
  const builtinName = t.builtinName;
  const withBuiltin = builtinName !== null;
  const groups: [string, number][] = [
    ["", 5],
    ["out-of-place", 4],
    ["in-place", 4],
  ];
  if (withBuiltin) {
    groups.push([`${builtinName} (built-in)`, 2], ["out-of-place per call", 4], ["built-in", 1], ["ratio", 2]);
  }
  let col = 0;
  const spans = groups.map(([label, span]) => {
    const width = WIDTHS.slice(col, col + span).reduce((a, w) => a + w, 0) + SEP.length * (span - 1);
    col += span;
    const left = Math.max(0, Math.floor((width - label.length) / 2));
    return (" ".repeat(left) + label).padEnd(width);
  });
  const names = ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"];
  names.push("time", "algbw", "busbw", "#wrong");
  if (withBuiltin) names.push("time", "busbw", "min", "median", "p99", "max", "median", "median", "mean");
  const units = ["(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""];
  if (withBuiltin) units.push("(us)", "(GB/s)", "(us)", "(us)", "(us)", "(us)", "(us)", "(algbw)", "(algbw)");
  const nameLine = `#${cellsLine(names)}${withAlgorithm(t) ? `${SEP}algorithm` : ""}`;
  return [`#${spans.join(SEP).trimEnd()}`, nameLine, `#${cellsLine(units)}`];
}

/** One size's row, as nccl-tests prints it the moment the size is done (' ' first). */
export function rowLine(r: BenchRow, t: TableShape): string {
  // The algorithm's name last and left-aligned: names differ in length, the numbers stay in line.
  return ` ${cellsLine(rowCells(r, t.builtinName !== null))}${withAlgorithm(t) ? `${SEP}${r.algorithm}` : ""}`;
}

function modelText(result: BenchResult): string {
  const m = result.model;
  if (!m) return "";
  const gbps = m.beta > 0 ? ` (${Number((1 / m.beta / 1e3).toPrecision(3))} GB/s)` : "";
  return `alpha ${m.alpha} us, beta ${Number(m.beta.toPrecision(3))} us/B${gbps}, gamma ${m.gamma} us/B`;
}

/** What bench prints before the first size is done: the run, the timing method, the floors, the table's header. */
export function headLines(result: BenchResult, sizes: { min: number; max: number; factor: number }): string[] {
  const out: string[] = [];
  const alg = result.algorithm;
  out.push(
    `# cclab bench: ${result.collective} (${alg}) on ${result.nranks} ranks, backend ${result.backend}${result.topology ? ` on ${result.topology}` : ""}, ${result.dtype} ${result.op}, root ${result.root}`,
    `# minBytes ${sizes.min} maxBytes ${sizes.max} step: ${sizes.factor}(factor) warmup iters: ${result.warmupIters} iters: ${result.iters} validation: 1`,
  );
  if (result.timing === "model" && result.network) {
    out.push(
      `# sim: times from the network model on ${result.network.topology}, not measured (engine ${result.network.engine}, gamma ${result.model?.gamma ?? 0} us/B); each size up to ${bytesText(result.simMaxBytes ?? 0)} is executed once on the simulator to count #wrong, larger sizes are modelled only (#wrong N/A)`,
      ...result.network.description.map((l) => `#   ${l}`),
    );
  } else if (result.timing === "model") {
    out.push(
      `# sim: times from the alpha-beta model, not measured (${modelText(result)}); each size up to ${bytesText(result.simMaxBytes ?? 0)} is executed once on the simulator to count #wrong, larger sizes are modelled only (#wrong N/A)`,
    );
  } else {
    const a = result.average ?? DEFAULT_AVERAGE;
    const across = `${AVERAGE_TEXT[a]}, as nccl-tests' -a ${a}`;
    out.push(
      `# time: wall clock per call, nccl-tests' mean over ${result.iters} calls timed in ${Math.min(ROUNDS, result.iters)} rounds of back-to-back calls after a barrier (each round's time ${across}), rounds interleaving out of place, in place and built-in; at least ${result.warmupIters} warm-up calls each (10000 up to 64 KiB, above it as many as move 256 MiB, for the JIT; at most as many as fit in 2 s a variant), through the timing loop itself`,
      result.backend === "mpi"
        ? `# per call: every out-of-place call timed on its own (as nccl-tests' -I), each call's time ${across}: min, median, p99, max; built-in: ${result.builtinName} on the same buffers in the same run, out of place (its median per call); --json has every call's time for sizes up to 1 MiB`
        : `# per call: the out-of-place rounds' min, median and max per call (calls are stream-ordered, so not timed one by one; no p99); built-in: ${result.builtinName} on the same buffers in the same run, out of place (its median)`,
      "# ratio = hand-rolled out-of-place algbw / built-in algbw, from the medians (steady against a rare stall) and from the means (nccl-tests')",
    );
  }
  if (result.floors) out.push(floorsLine(result.floors));
  out.push("#", ...tableHeadLines(result));
  return out;
}

/** What bench prints after the last row: the totals, the built-in's errors, the memory figure. */
export function tailLines(result: BenchResult): string[] {
  const out: string[] = [];
  const algs = [...new Set(result.rows.map((r) => r.algorithm))];
  if (result.algorithm === "auto" && algs.length)
    out.push(`# auto chose: ${algs.join(", ")} (see the JSON rows for which size took which)`);
  out.push(
    `# Out of bounds values : ${result.outOfBounds} ${result.outOfBounds === 0 ? "OK" : "FAILED"}`,
    `# Avg bus bandwidth    : ${Number(result.avgBusBw.toFixed(4))}`,
  );
  if (result.builtinWrong > 0) {
    out.push(`# WARNING: the built-in ${result.builtinName} produced ${result.builtinWrong} wrong elements`);
  }
  const m = result.memory;
  if (m) {
    out.push(
      `# Peak memory per rank at ${bytesText(m.messageBytes)}: hand-rolled${algs.length > 1 ? ` (the ${algs.length} algorithms' plans and scratch together)` : ""} ${bytesText(Math.round(m.handRolledPeakBytes))} over the pre-buffer RSS = ${m.handRolledRatio.toFixed(2)}x the message (${bytesText(m.bufferBytes)} of it the benchmark's send/recv buffers); with the built-in too ${m.builtinRatio.toFixed(2)}x${m.messageBytes < 16 * 1024 * 1024 ? " (below 16 MiB the runtime's own growth dominates these ratios)" : ""}`,
    );
  }
  out.push("#");
  return out;
}

/** nccl-tests' average: the mean busbw over every out-of-place and in-place result. */
export function averageBusBw(rows: readonly BenchRow[]): number {
  const all = rows.flatMap((r) => [r.outOfPlace.busbw, r.inPlace.busbw]);
  return all.length ? all.reduce((a, b) => a + b, 0) / all.length : 0;
}

export function outOfBounds(rows: readonly BenchRow[]): number {
  return rows.reduce((a, r) => a + (r.outOfPlace.wrong ?? 0) + (r.inPlace.wrong ?? 0), 0);
}

export function builtinWrong(rows: readonly BenchRow[]): number {
  return rows.reduce((a, r) => a + (r.builtin?.wrong ?? 0), 0);
}
