/**
 * The model held to real runs: for every row of `cclab bench --backend mpi` JSON outputs, the
 * alpha-beta model's prediction with this machine's measured parameters (a machine file from
 * `cclab calibrate`) beside the measured per-call median, and the error. Two predictions: the
 * machine's parameters by buffer size (beta, gamma and copy at the call's size, the model
 * `cclab model --machine` uses), and, for comparison, one beta and gamma measured at the largest
 * size with copies free (the model before the size-dependent terms). Not a test; prints a
 * Markdown table and the median and worst error of each. docs/bench/model-vs-bench.sh runs the
 * whole thing (calibrate, bench at n = 2 and 4, this). A bench's text output (.txt) is read too,
 * so a run cut short still gives the rows it printed.
 *   npx tsx test/perf/model-vs-bench.ts machine.json bench-n2.json [bench-n4.json ...]
 */
import { readFileSync } from "node:fs";
import type { BenchResult } from "../../src/bench/types.js";
import type { DType } from "../../src/core/dtype.js";
import { machineParams, readMachineFile } from "../../src/model/calibrate.js";
import { modelTime } from "../../src/schedule/model.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall } from "../../src/specs/index.js";

const [machineFile, ...benchFiles] = process.argv.slice(2);
if (!machineFile || benchFiles.length === 0) {
  console.error("usage: model-vs-bench.ts machine.json bench.json [bench.json ...]");
  process.exit(2);
}
const m = readMachineFile(machineFile);
const bySize = machineParams(m);
const flat = { alpha: m.alpha, beta: m.beta, gamma: m.gamma };
const gbps = (usPerByte: number) => (1 / usPerByte / 1e3).toFixed(2);
console.log(
  `machine: alpha ${m.alpha.toFixed(3)} us; at the largest size: Sendrecv ${gbps(m.beta)} GB/s, float32 sum ${gbps(m.gamma)} GB/s${m.copy ? `, memcpy ${gbps(m.copy)} GB/s` : ""}${m.measured ? ` (load ${m.measured.load.join(" ")} on ${m.measured.cores} cores)` : ""}`,
);
for (const q of m.bySize ?? [])
  console.log(
    `  ${q.bytes} B: Sendrecv beyond latency ${gbps(q.beta)} GB/s, sum ${gbps(q.gamma)} GB/s, memcpy ${gbps(q.copy)} GB/s`,
  );
console.log(
  "\n| algorithm | n | size | predicted (µs) | measured median (µs) | error | one beta, no copy (µs) | its error |",
);
console.log("|---|---|---|---|---|---|---|---|");
interface Row {
  e: number;
  flat: number;
  what: string;
}
const rows: Row[] = [];

interface Measured {
  readonly collective: string;
  readonly nranks: number;
  readonly rows: { algorithm: string; count: number; size: number; type: DType; median: number }[];
}

function benchJson(file: string): Measured {
  const b = JSON.parse(readFileSync(file, "utf8")) as BenchResult;
  return {
    collective: b.collective,
    nranks: b.nranks,
    rows: b.rows.map((r) => ({ ...r, median: r.outOfPlace.perCall?.median ?? r.outOfPlace.timeUs })),
  };
}

/** The rows `cclab bench --backend mpi` printed: size, count, type ... out-of-place per-call median (17th column) ... algorithm. */
function fromText(text: string, file: string): Measured {
  const head = /^# cclab bench: (\w+) \(.*\) on (\d+) ranks, backend mpi/m.exec(text);
  if (!head)
    throw new Error(`${file}: not cclab bench --backend mpi's output (no '# cclab bench: ... on N ranks' line)`);
  const rows = text
    .split("\n")
    .filter((l) => /^\s+\d+\s+\d+\s+\w+/.test(l))
    .map((l) => {
      const c = l.trim().split(/\s+/);
      const row = {
        size: Number(c[0]),
        count: Number(c[1]),
        type: c[2] as DType,
        median: Number(c[16]),
        algorithm: c[c.length - 1] as string,
      };
      if (c.length !== 23 || !Number.isFinite(row.median))
        throw new Error(`${file}: a row of ${c.length} columns, not 23: '${l.trim()}'`);
      return row;
    });
  return { collective: head[1] as string, nranks: Number(head[2]), rows };
}
for (const file of benchFiles) {
  const b = file.endsWith(".txt") ? fromText(readFileSync(file, "utf8"), file) : benchJson(file);
  for (const row of b.rows) {
    const alg = findAlgorithm(b.collective, row.algorithm, { op: "model-vs-bench" });
    const call = makeCall({ collective: b.collective, size: b.nranks, count: row.count, dtype: row.type }, alg);
    const predicted = modelTime(alg, call, bySize).time;
    const old = modelTime(alg, call, flat).time;
    const measured = row.median;
    const e = (predicted - measured) / measured;
    const eFlat = (old - measured) / measured;
    rows.push({ e, flat: eFlat, what: `${row.algorithm} n = ${b.nranks} ${row.size} B` });
    const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
    console.log(
      `| ${row.algorithm} | ${b.nranks} | ${row.size} | ${predicted.toFixed(1)} | ${measured.toFixed(1)} | ${pct(e)} | ${old.toFixed(1)} | ${pct(eFlat)} |`,
    );
  }
}
/** Median and worst |error| of the rows `keep` picks, by `key`. */
function summary(label: string, keep: (r: Row) => boolean, key: "e" | "flat"): string {
  const xs = rows.filter(keep).sort((a, b) => Math.abs(a[key]) - Math.abs(b[key]));
  if (xs.length === 0) return `${label}: no rows`;
  const med = Math.abs((xs[Math.floor(xs.length / 2)] as Row)[key]);
  const worst = xs[xs.length - 1] as Row;
  return `${label}: ${xs.length} rows, median |error| ${(med * 100).toFixed(0)}%, worst ${(Math.abs(worst[key]) * 100).toFixed(0)}% (${worst.what})`;
}
console.log("");
for (const [label, key] of [
  ["by size", "e"],
  ["one beta, no copy", "flat"],
] as const) {
  console.log(summary(`${label}, all`, () => true, key));
  for (const n of [2, 4]) console.log(summary(`${label}, n = ${n}`, (r) => r.what.includes(` n = ${n} `), key));
}
