/**
 * The SimGrid agreement table of docs/simulators.md: a fixed set of algorithms on four machines,
 * timed by cclab's exact engine and by SimGrid (src/export/simgrid.ts), with the difference. Not
 * a test (test/simgrid.test.ts is); prints a Markdown table.
 *   npx tsx test/perf/simgrid-agreement.ts [bytes = 1M]
 */
import { parseBytes } from "../../src/bench/metrics.js";
import { exportCall, programOf } from "../../src/export/program.js";
import { SIMGRID_MISSING, simgridPython, simgridTime } from "../../src/export/simgrid.js";
import { networkTimeExact, parseTopology, placeRanks } from "../../src/model/network/index.js";
import { findAlgorithm } from "../../src/schedule/registry.js";

if (!simgridPython()) {
  console.error(SIMGRID_MISSING);
  process.exit(2);
}
const bytes = parseBytes(process.argv[2] ?? "1M");
const machines: [string, number][] = [
  ["ring", 16],
  ["torus:4x4", 16],
  ["fattree:k=4,over=2", 16],
  ["rail:2x8", 16],
];
const algorithms: [string, string][] = [
  ["allreduce", "ring"],
  ["allreduce", "recursive_doubling"],
  ["allreduce", "double_binary_tree"],
  ["allreduce", "swing_bandwidth"],
  ["allreduce", "hierarchical"],
  ["allgather", "pat"],
  ["reducescatter", "ring"],
  ["alltoall", "pairwise"],
  ["broadcast", "binomial"],
];
console.log(`| algorithm | machine | cclab exact (µs) | SimGrid (µs) | difference |`);
console.log(`|---|---|---|---|---|`);
let worst = 0;
for (const [c, a] of algorithms) {
  for (const [spec, n] of machines) {
    const alg = findAlgorithm(c, a, { op: "simgrid-agreement" });
    const topology = parseTopology(spec, n);
    const placement = placeRanks(topology, n);
    const { call } = exportCall(alg, n, bytes);
    const ours = networkTimeExact(alg, call, { topology, placement }).time;
    const theirs = simgridTime(programOf(alg, call), topology, placement).timeUs;
    const rel = Math.abs(theirs - ours) / ours;
    worst = Math.max(worst, rel);
    console.log(
      `| ${c}/${a} | ${spec} | ${ours.toFixed(3)} | ${theirs.toFixed(3)} | ${(rel * 100).toExponential(1)} % |`,
    );
  }
}
console.log(`\nlargest difference: ${(worst * 100).toExponential(2)} % (${bytes} bytes, nccl-tests' bytes, 16 ranks)`);
