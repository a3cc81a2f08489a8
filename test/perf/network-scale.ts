/**
 * The network model's own speed (issue 22's scale targets), run by hand, never in npm test:
 *
 *   npx tsx test/perf/network-scale.ts [--n 1024,16384] [--bytes 64M] [--topologies torus,fattree]
 *                                      [--only allreduce/ring,...] [--engine auto|phases|exact]
 *
 * For every algorithm the targets name, on a 2-D torus (the squarest torus with n hosts) and on
 * a two-level fat-tree (16 hosts a leaf), at each n: `cclab model`'s computation in a child
 * process of its own, timed wall-clock, with the child's peak resident memory (getrusage
 * maxRSS). Prints a markdown table and the machine's load. Sizes are nccl-tests' (bench's):
 * all-reduce S bytes in all; all-gather S bytes of output (S/n per rank).
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { shapeOf } from "../../src/bench/metrics.js";
import { networkTime } from "../../src/model/network/index.js";
import { parseTopology, placeRanks } from "../../src/model/network/topology.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall } from "../../src/specs/index.js";

const ALGORITHMS = [
  "allreduce/ring",
  "allreduce/segmented_ring",
  "allreduce/double_binary_tree",
  "allreduce/recursive_doubling",
  "allreduce/rabenseifner",
  "allreduce/swing_latency",
  "allreduce/swing_bandwidth",
  "allreduce/hierarchical",
  "allgather/ring",
  "allgather/bruck",
  "allgather/pat",
];

/** The squarest 2-D torus with n hosts. */
function torusFor(n: number): string {
  let a = Math.floor(Math.sqrt(n));
  while (n % a !== 0) a--;
  return `torus:${n / a}x${a}`;
}

const topologyFor = (family: string, n: number): string => (family === "torus" ? torusFor(n) : family);

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

function bytesOf(text: string): number {
  const m = /^(\d+)([KMG]?)$/i.exec(text);
  if (!m) throw new Error(`--bytes: expected e.g. 64M, got ${text}`);
  return Number(m[1]) * 1024 ** " KMG".indexOf((m[2] || " ").toUpperCase());
}

/** One run, in this (child) process: prints one JSON line. */
function one(name: string, n: number, bytes: number, topo: string, engine: string): void {
  const [collective, algorithm] = name.split("/") as [string, string];
  const alg = findAlgorithm(collective, algorithm, { op: "model" });
  const t0 = performance.now();
  const { count } = shapeOf(collective as never, n, bytes, "float32");
  const call = makeCall({ collective, size: n, count }, alg);
  const topology = parseTopology(topo, n, {});
  const r = networkTime(alg, call, { topology, placement: placeRanks(topology, n), engine: engine as never });
  const seconds = (performance.now() - t0) / 1000;
  const mib = process.resourceUsage().maxRSS / 1024;
  console.log(JSON.stringify({ time: r.time, engine: r.engine, note: r.note ?? "", seconds, mib }));
}

function main(): void {
  if (process.argv[2] === "--one") {
    const [, , , name, n, bytes, topo, engine] = process.argv;
    one(name as string, Number(n), Number(bytes), topo as string, engine as string);
    return;
  }
  const sizes = arg("--n", "1024,16384").split(",").map(Number);
  const bytes = bytesOf(arg("--bytes", "64M"));
  const families = arg("--topologies", "torus,fattree").split(",");
  const only = arg("--only", "");
  const engine = arg("--engine", "auto");
  const algs = only ? only.split(",") : ALGORITHMS;
  console.log(
    `# network model speed: ${bytes / 2 ** 20} MiB, engine ${engine}, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  console.log("| algorithm | topology | n | modelled time | engine | wall s | peak MiB |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const name of algs) {
    for (const family of families) {
      for (const n of sizes) {
        const topo = topologyFor(family, n);
        const child = spawnSync(
          process.execPath,
          ["--import", "tsx", new URL(import.meta.url).pathname, "--one", name, String(n), String(bytes), topo, engine],
          { encoding: "utf8", maxBuffer: 1 << 24, timeout: 600_000 },
        );
        const line = child.stdout.trim().split("\n").pop() ?? "";
        let cells: string[];
        try {
          const r = JSON.parse(line) as { time: number; engine: string; note: string; seconds: number; mib: number };
          cells = [`${(r.time / 1000).toFixed(3)} ms`, r.engine, r.seconds.toFixed(2), r.mib.toFixed(0)];
        } catch {
          const why = (child.stderr.match(/(InvalidArgumentError|Error)[^\n]*/) ?? [child.signal ?? "failed"])[0];
          cells = [`failed: ${String(why).slice(0, 160)}`, "", "", ""];
        }
        console.log(`| ${name} | ${topo} | ${n} | ${cells.join(" | ")} |`);
      }
    }
  }
  console.log(
    `load after: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
}

main();
