/**
 * The model held to real runs: for every row of `cclab bench --backend mpi` JSON outputs, the
 * alpha-beta model's prediction with this machine's measured parameters (a machine file from
 * `cclab calibrate`) beside the measured per-call median, and the error. Not a test; prints a
 * Markdown table and the median and worst error. docs/bench/model-vs-bench.sh runs the whole
 * thing (calibrate, bench at n = 2 and 4, this).
 *   npx tsx test/perf/model-vs-bench.ts machine.json bench-n2.json [bench-n4.json ...]
 */
import { readFileSync } from "node:fs";
import type { BenchResult } from "../../src/bench/types.js";
import { readMachineFile } from "../../src/model/calibrate.js";
import { modelTime } from "../../src/schedule/model.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall } from "../../src/specs/index.js";

const [machineFile, ...benchFiles] = process.argv.slice(2);
if (!machineFile || benchFiles.length === 0) {
  console.error("usage: model-vs-bench.ts machine.json bench.json [bench.json ...]");
  process.exit(2);
}
const m = readMachineFile(machineFile);
const f = m.measured.floors;
console.log(
  `machine: alpha ${m.alpha.toFixed(3)} us (ping-pong ${f.pingPongUs.toFixed(2)} + cclab ${m.measured.overheadUs}), Sendrecv ${f.sendrecvGBps.toFixed(2)} GB/s, float32 sum ${f.sumFloat32GBps.toFixed(2)} GB/s (load ${m.measured.load.join(" ")})\n`,
);
console.log("| algorithm | n | size | predicted (µs) | measured median (µs) | error |");
console.log("|---|---|---|---|---|---|");
const errors: { e: number; what: string }[] = [];
for (const file of benchFiles) {
  const b = JSON.parse(readFileSync(file, "utf8")) as BenchResult;
  for (const row of b.rows) {
    const alg = findAlgorithm(b.collective, row.algorithm, { op: "model-vs-bench" });
    const call = makeCall({ collective: b.collective, size: b.nranks, count: row.count, dtype: row.type }, alg);
    const predicted = modelTime(alg, call, { alpha: m.alpha, beta: m.beta, gamma: m.gamma }).time;
    const measured = row.outOfPlace.perCall?.median ?? row.outOfPlace.timeUs;
    const e = (predicted - measured) / measured;
    errors.push({ e: Math.abs(e), what: `${row.algorithm} n = ${b.nranks} ${row.size} B` });
    console.log(
      `| ${row.algorithm} | ${b.nranks} | ${row.size} | ${predicted.toFixed(1)} | ${measured.toFixed(1)} | ${(e * 100).toFixed(0)}% |`,
    );
  }
}
errors.sort((a, b) => a.e - b.e);
const median = errors[Math.floor(errors.length / 2)] as { e: number };
const worst = errors[errors.length - 1] as { e: number; what: string };
console.log(
  `\n${errors.length} rows: median |error| ${(median.e * 100).toFixed(0)}%, worst ${(worst.e * 100).toFixed(0)}% (${worst.what})`,
);
