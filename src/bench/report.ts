/**
 * nccl-tests' output, so tools that read all_reduce_perf logs read cclab's too: '#' header
 * lines, one row per size (size, count, type, redop, root, then time/algbw/busbw/#wrong out of
 * place and in place), then "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth".
 * cclab adds, on the right, the engine's own collective's time and busbw, the spread of the
 * hand-rolled out-of-place time over the timing rounds (min, median, max; the built-in's median)
 * and the algbw ratio by median and by mean (stats.ts says why both). Comparing algorithms
 * (`--algorithm a,b`), a last column names each row's algorithm.
 * The table is laid out by cli-table3 without borders.
 */
import Table from "cli-table3";
import { bytesText } from "../viz/svg.js";
import { floorsLine } from "./floors.js";
import { ROUNDS } from "./stats.js";
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

const EMPTY_CHARS = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "  ",
};

/** Minimum widths as nccl-tests' printf formats (%12li %12li %8s %6s %6i, then %7s %6s %6s %6s per variant). */
const WIDTHS = [11, 12, 8, 6, 6, 7, 6, 6, 6, 7, 6, 6, 6, 7, 6, 7, 7, 7, 7, 6, 6];

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
    const s = r.outOfPlace.spread;
    cells.push(b ? timeCell(b.timeUs) : "N/A", b ? bw(b.busbw) : "N/A");
    cells.push(...(s ? [timeCell(s.min), timeCell(s.median), timeCell(s.max)] : ["N/A", "N/A", "N/A"]));
    cells.push(b?.spread ? timeCell(b.spread.median) : "N/A");
    cells.push(r.ratio ? ratioCell(r.ratio.median) : "N/A", r.ratio ? ratioCell(r.ratio.mean) : "N/A");
  }
  return cells;
}

/** The header and rows, as lines ('#' before header lines, ' ' before rows, as nccl-tests). */
export function tableLines(result: BenchResult): string[] {
  const withBuiltin = result.builtinName !== null;
  const withAlgorithm = result.algorithm.includes(",");
  const pad = (cells: string[]) => cells.map((c, i) => c.padStart(WIDTHS[i] ?? 0));
  const table = new Table({
    chars: EMPTY_CHARS,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0, compact: true },
    colAligns: WIDTHS.map(() => "right" as const),
  });
  const group = (content: string, colSpan: number) => ({ content, colSpan, hAlign: "center" as const });
  table.push([
    group("", 5),
    group("out-of-place", 4),
    group("in-place", 4),
    ...(withBuiltin
      ? [
          group(`${result.builtinName} (built-in)`, 2),
          group("out-of-place rounds", 3),
          group("built-in", 1),
          group("ratio", 2),
        ]
      : []),
    ...(withAlgorithm ? [group("", 1)] : []),
  ]);
  const names = ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"];
  names.push("time", "algbw", "busbw", "#wrong");
  if (withBuiltin) names.push("time", "busbw", "min", "median", "max", "median", "median", "mean");
  if (withAlgorithm) names.push("algorithm");
  table.push(pad(names));
  const units = ["(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""];
  if (withBuiltin) units.push("(us)", "(GB/s)", "(us)", "(us)", "(us)", "(us)", "(algbw)", "(algbw)");
  if (withAlgorithm) units.push("");
  table.push(pad(units));
  for (const r of result.rows) table.push(pad([...rowCells(r, withBuiltin), ...(withAlgorithm ? [r.algorithm] : [])]));
  const lines = table
    .toString()
    .split("\n")
    .map((l) => l.trimEnd());
  return lines.map((l, i) => (i < 3 ? `#${l}` : ` ${l}`));
}

function modelText(result: BenchResult): string {
  const m = result.model;
  if (!m) return "";
  const gbps = m.beta > 0 ? ` (${Number((1 / m.beta / 1e3).toPrecision(3))} GB/s)` : "";
  return `alpha ${m.alpha} us, beta ${Number(m.beta.toPrecision(3))} us/B${gbps}, gamma ${m.gamma} us/B`;
}

/** Everything bench prints, in order. */
export function reportLines(result: BenchResult, sizes: { min: number; max: number; factor: number }): string[] {
  const out: string[] = [];
  const alg = result.algorithm;
  out.push(
    `# cclab bench: ${result.collective} (${alg}) on ${result.nranks} ranks, backend ${result.backend}, ${result.dtype} ${result.op}, root ${result.root}`,
    `# minBytes ${sizes.min} maxBytes ${sizes.max} step: ${sizes.factor}(factor) warmup iters: ${result.warmupIters} iters: ${result.iters} validation: 1`,
  );
  if (result.timing === "model") {
    out.push(
      `# sim: times from the alpha-beta model, not measured (${modelText(result)}); each size up to ${bytesText(result.simMaxBytes ?? 0)} is executed once on the simulator to count #wrong, larger sizes are modelled only (#wrong N/A)`,
    );
  } else {
    out.push(
      `# time: wall clock per call, nccl-tests' mean over ${result.iters} calls timed in ${Math.min(ROUNDS, result.iters)} rounds of back-to-back calls after a barrier (each round's time the maximum over ranks), rounds interleaving out of place, in place and built-in; at least ${result.warmupIters} warm-up calls each (200 up to 256 KiB, for the JIT)`,
      `# rounds: the out-of-place rounds' min, median and max per call; built-in: ${result.builtinName} on the same buffers in the same run, out of place (its median)`,
      "# ratio = hand-rolled out-of-place algbw / built-in algbw, from the rounds' medians (steady against a rare stall) and from the means (nccl-tests')",
    );
  }
  if (result.floors) out.push(floorsLine(result.floors));
  const algs = [...new Set(result.rows.map((r) => r.algorithm))];
  if (alg === "auto" && algs.length)
    out.push(`# auto chose: ${algs.join(", ")} (see the JSON rows for which size took which)`);
  out.push("#", ...tableLines(result));
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
      `# Peak memory per rank at ${bytesText(m.messageBytes)}: hand-rolled ${bytesText(Math.round(m.handRolledPeakBytes))} over the pre-buffer RSS = ${m.handRolledRatio.toFixed(2)}x the message (${bytesText(m.bufferBytes)} of it the benchmark's send/recv buffers); with the built-in too ${m.builtinRatio.toFixed(2)}x${m.messageBytes < 16 * 1024 * 1024 ? " (below 16 MiB the runtime's own growth dominates these ratios)" : ""}`,
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
