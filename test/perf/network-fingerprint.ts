/**
 * Every output of the network model for a grid of calls, one line each, to diff before and after
 * a change to src/model/network/ (run by hand, never in npm test):
 *
 *   npx tsx test/perf/network-fingerprint.ts [ALGORITHM-SUBSTRING] > after.txt
 *
 * The scale targets' algorithms on tori and the fat-tree at n = 16 to 1,024, engines auto and
 * phases, gamma 0 and 1e-5: each line has the modelled time to the last digit, the engine, the
 * critical rank, messages, operations, symmetry, a hash of the bytes per link and the note (or
 * the error), in one thread.
 */
import { createHash } from "node:crypto";
import { networkTime, parseTopology, placeRanks } from "../../src/model/network/index.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall } from "../../src/specs/index.js";

const MiB = 2 ** 20;
const T: [string, string][] = [
  ["allreduce", "ring"],
  ["allreduce", "segmented_ring"],
  ["allreduce", "double_binary_tree"],
  ["allreduce", "recursive_doubling"],
  ["allreduce", "rabenseifner"],
  ["allreduce", "swing_latency"],
  ["allreduce", "swing_bandwidth"],
  ["allreduce", "hierarchical"],
  ["allgather", "ring"],
  ["allgather", "bruck"],
  ["allgather", "pat"],
];
const cases: [string, number, number, string, number][] = [];
for (const e of ["auto", "phases"]) {
  for (const [spec, n, b] of [
    ["torus:4x4", 16, 65536],
    ["fattree", 64, 64 * MiB],
    ["torus:8x8", 64, 8 * MiB],
    ["torus:16x16", 256, 64 * MiB],
    ["fattree", 256, 16 * MiB],
    ["torus:32x32", 1024, 64 * MiB],
  ] as const) {
    for (const g of [0, 1e-5]) cases.push([spec, n, b, e, g]);
  }
}
const only = process.argv[2];
for (const [spec, n, bytes, engine, gamma] of cases) {
  for (const [c, name] of T) {
    if (only && !`${c}/${name}`.includes(only)) continue;
    if (n === 1024 && engine === "auto") continue;
    const a = findAlgorithm(c, name, { op: "model" });
    const count = c === "allgather" ? bytes / (n * 4) : bytes / 4;
    const call = makeCall({ collective: c, size: n, count }, a);
    const topology = parseTopology(spec, n, {});
    let line: string;
    try {
      const r = networkTime(a, call, {
        topology,
        placement: placeRanks(topology, n),
        engine: engine as never,
        gamma,
        threads: 1,
      });
      const h = createHash("sha1").update(Buffer.from(r.linkBytes.buffer)).digest("hex").slice(0, 10);
      line = `${r.time} ${r.engine} crit=${r.criticalRank} msgs=${r.messages} ops=${r.operations} sym=${JSON.stringify(r.symmetry)} lb=${h} | ${r.note ?? ""}`;
    } catch (e) {
      line = `ERROR ${(e as Error).message}`;
    }
    console.log(`${spec} n=${n} ${bytes} ${engine} g=${gamma} ${c}/${name}: ${line}`);
  }
}
