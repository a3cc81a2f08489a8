/**
 * The phases engine's memory per operation walked and per message copy solved, measured (the
 * figures behind PHASES_BYTES_PER_OPERATION and PHASES_BYTES_PER_COPY in
 * src/model/network/policy.ts; docs/network.md gives them), run by hand, never in npm test:
 *
 *   npx tsx test/perf/model-memory.ts
 *
 * Each call runs in a child process of its own: the modules loaded and a small call made first,
 * then the peak resident memory (getrusage maxRSS) before and after the call (one thread solving);
 * the difference is set against the estimate (phasesMemory) of the operations the walk copied,
 * the message copies its rounds solved and those of its largest round (copiesOf, counted by
 * walking the call again after the peak was read). Resident memory counts the heap and the typed
 * arrays beside it, so the figures are an upper bound on the heap.
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { networkTime, parseTopology, placeRanks } from "../../src/model/network/index.js";
import { copiesOf, phasesMemory } from "../../src/model/network/phases-memory.js";
import { walkCall } from "../../src/model/network/rounds.js";
import { probeSymmetry } from "../../src/model/network/symmetry.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall } from "../../src/specs/index.js";

/** collective/algorithm, n, count, topology: calls dominated by copies (all-to-all, one element a pair) or by the walk (a one-segment ring of n - 1 elements: no symmetry). */
const CALLS: readonly [string, number, number, string][] = [
  ["alltoall/pairwise", 256, 1, "fattree"],
  ["alltoall/pairwise", 512, 1, "fattree"],
  ["allreduce/ring", 256, 255, "torus:16x16"],
  ["allreduce/ring", 512, 511, "torus:32x16"],
];

function one(name: string, n: number, count: number, topo: string): void {
  const [collective, algorithm] = name.split("/") as [string, string];
  const alg = findAlgorithm(collective, algorithm, { op: "model" });
  const topology = parseTopology(topo, n);
  const params = { topology, placement: placeRanks(topology, n), engine: "phases" as const, threads: 1 };
  // Modules loaded and warm: a small call first.
  networkTime(alg, makeCall({ collective: collective as never, size: 8, count: 8 }, alg), {
    ...params,
    topology: parseTopology("torus:4x2", 8),
    placement: placeRanks(parseTopology("torus:4x2", 8), 8),
  });
  const before = process.resourceUsage().maxRSS;
  const call = makeCall({ collective: collective as never, size: n, count }, alg);
  const t0 = performance.now();
  const r = networkTime(alg, call, params);
  const seconds = (performance.now() - t0) / 1000;
  const peak = process.resourceUsage().maxRSS;
  const probe = probeSymmetry(alg, call);
  const form = r.symmetry ? "quotient" : "every-rank";
  const w = walkCall(alg, call, 4, probe, form);
  console.log(JSON.stringify({ bytes: (peak - before) * 1024, operations: w.operations, ...copiesOf(w, n), seconds }));
}

function main(): void {
  if (process.argv[2] === "--one") {
    const [, , , name, n, count, topo] = process.argv;
    one(name as string, Number(n), Number(count), topo as string);
    return;
  }
  console.log(
    `# phases engine memory; load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  console.log(
    "| call | n | count | topology | operations | copies | largest round | peak RSS added MiB | estimate MiB | s |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const [name, n, count, topo] of CALLS) {
    const child = spawnSync(
      process.execPath,
      ["--import", "tsx", new URL(import.meta.url).pathname, "--one", name, String(n), String(count), topo],
      { encoding: "utf8", maxBuffer: 1 << 24, timeout: 600_000 },
    );
    const line = child.stdout.trim().split("\n").pop() ?? "";
    try {
      const r = JSON.parse(line) as {
        bytes: number;
        operations: number;
        copies: number;
        solving: number;
        seconds: number;
      };
      const est = phasesMemory(r.operations, r.copies, r.solving).bytes;
      console.log(
        `| ${name} | ${n} | ${count} | ${topo} | ${r.operations} | ${r.copies} | ${r.solving} | ${(r.bytes / 2 ** 20).toFixed(1)} | ${(est / 2 ** 20).toFixed(1)} | ${r.seconds.toFixed(1)} |`,
      );
    } catch {
      console.log(`| ${name} | ${n} | ${count} | ${topo} | failed: ${child.stderr.slice(-300).replace(/\n/g, " ")} |`);
    }
  }
  console.log(
    `load after: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
}

main();
