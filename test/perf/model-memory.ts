/**
 * The network model's memory per operation walked and per message copy solved, measured (the
 * figures behind EXACT_BYTES_PER_OPERATION, PHASES_BYTES_PER_OPERATION and PHASES_BYTES_PER_COPY
 * in src/model/network/policy.ts; docs/network.md gives them), run by hand, never in npm test:
 *
 *   npx tsx test/perf/model-memory.ts            # the phases engine
 *   npx tsx test/perf/model-memory.ts --exact    # the exact engine
 *
 * Each call runs in a child process of its own: the modules loaded and a small call made first,
 * then the peak resident memory (getrusage maxRSS) before and after the call (one thread solving);
 * for the phases engine the difference is set against the estimate (phasesMemory) of the
 * operations the walk copied, the message copies its rounds solved and those of its largest
 * round (copiesOf, counted by walking the call again after the peak was read); for the exact
 * engine it is divided by the operations walked (exactMemory's bytes an operation). Resident
 * memory counts the heap and the typed arrays beside it, and garbage not yet collected, so the
 * figures are an upper bound on the heap.
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { networkTime, networkTimeExact, parseTopology, placeRanks } from "../../src/model/network/index.js";
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

/** collective/algorithm, n, bytes (nccl-tests'), topology: the exact engine's calls, the all-to-all the figure was first set on, a pipeline and ring all-reduces (many operations a rank). */
const EXACT_CALLS: readonly [string, number, number, string][] = [
  ["alltoall/pairwise", 128, 64 * 2 ** 20, "fattree"],
  ["allreduce/double_binary_tree", 256, 16 * 2 ** 20, "fattree"],
  ["allreduce/ring", 256, 16 * 2 ** 20, "fattree"],
  ["allreduce/ring", 512, 16 * 2 ** 20, "fattree"],
];

function oneExact(name: string, n: number, bytes: number, topo: string): void {
  const [collective, algorithm] = name.split("/") as [string, string];
  const alg = findAlgorithm(collective, algorithm, { op: "model" });
  const count = collective === "alltoall" ? bytes / 4 / n : bytes / 4;
  const small = parseTopology("fattree", 8);
  networkTimeExact(alg, makeCall({ collective: collective as never, size: 8, count: 8 }, alg), {
    topology: small,
    placement: placeRanks(small, 8),
  });
  const before = process.resourceUsage().maxRSS;
  const topology = parseTopology(topo, n);
  const t0 = performance.now();
  const r = networkTimeExact(alg, makeCall({ collective: collective as never, size: n, count }, alg), {
    topology,
    placement: placeRanks(topology, n),
    solveWork: Number.POSITIVE_INFINITY,
  });
  const seconds = (performance.now() - t0) / 1000;
  const peak = process.resourceUsage().maxRSS;
  console.log(JSON.stringify({ bytes: (peak - before) * 1024, operations: r.operations, seconds }));
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

/** What a child reports: the peak resident memory its call added, the operations walked, the seconds, and (phases) the copies solved and the largest round's. */
interface Measured {
  bytes: number;
  operations: number;
  seconds: number;
  copies: number;
  solving: number;
}

/** This script in a child process with `args`: its stderr's tail, and its last line of output as JSON (undefined if none). */
function run(args: string[]): [string, Measured | undefined] {
  const child = spawnSync(process.execPath, ["--import", "tsx", new URL(import.meta.url).pathname, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
    timeout: 600_000,
  });
  const line = child.stdout.trim().split("\n").pop() ?? "";
  try {
    return [child.stderr.slice(-300), JSON.parse(line) as Measured];
  } catch {
    return [child.stderr.slice(-300), undefined];
  }
}

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

/**
 * Each call measured in a child process (`mode`: --one or --one-exact) and printed as a row of a
 * markdown table: the call, then `row`'s cells of what it measured, or why the child failed.
 */
function table(
  title: string,
  calls: readonly [string, number, number, string][],
  mode: string,
  head: readonly string[],
  row: (r: Measured) => readonly (string | number)[],
): void {
  console.log(`# ${title}; load ${load()}`);
  console.log(`| call | n | ${head.join(" | ")} |`);
  console.log(`|${" --- |".repeat(head.length + 2)}`);
  for (const [name, n, size, topo] of calls) {
    const [child, r] = run([mode, name, String(n), String(size), topo]);
    const cells = r ? row(r) : [`failed: ${child.replace(/\n/g, " ")}`];
    console.log(`| ${name} | ${n} | ${size} | ${topo} | ${cells.join(" | ")} |`);
  }
  console.log(`load after: ${load()}`);
}

const MiB = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

function main(): void {
  const [, , mode, name, n, count, topo] = process.argv;
  if (mode === "--one" || mode === "--one-exact") {
    (mode === "--one" ? one : oneExact)(name as string, Number(n), Number(count), topo as string);
  } else if (mode === "--exact") {
    table(
      "exact engine memory",
      EXACT_CALLS,
      "--one-exact",
      ["bytes", "topology", "operations", "peak RSS added MiB", "B an operation", "s"],
      (r) => [r.operations, MiB(r.bytes), (r.bytes / r.operations).toFixed(0), r.seconds.toFixed(1)],
    );
  } else {
    table(
      "phases engine memory",
      CALLS,
      "--one",
      ["count", "topology", "operations", "copies", "largest round", "peak RSS added MiB", "estimate MiB", "s"],
      (r) => [
        r.operations,
        r.copies,
        r.solving,
        MiB(r.bytes),
        MiB(phasesMemory(r.operations, r.copies, r.solving).bytes),
        r.seconds.toFixed(1),
      ],
    );
  }
}

main();
