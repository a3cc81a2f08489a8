/**
 * Every registered algorithm modelled at many ranks with a bounded heap, run by hand, never in npm
 * test (a few of its rows are in test/model-memory.test.ts and test/faults):
 *
 *   npx tsx test/perf/model-sweep.ts [--n 4096] [--topologies fattree,torus:64x64]
 *                                    [--sizes min,64M] [--heap 2048] [--timeout 120]
 *                                    [--only allreduce/ring,...]
 *
 * For each collective and algorithm, topology and size: `cclab model <collective> --algorithm <a>
 * -n N --bytes B --topology T` in a child process of its own with `--max-old-space-size=<heap>`,
 * its verdict (ran, refused with the model's reason, or died: out of heap, a signal, past the
 * timeout), its wall time and its peak resident memory (the child's getrusage maxRSS). `min` is
 * the smallest call: one element per rank (all-to-all: one per rank pair), nccl-tests' bytes.
 * Prints a markdown table and the machine's load; exits 1 if any call died or ran past the timeout.
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { main as cclab } from "../../src/cli/main.js";
import { allAlgorithms } from "../../src/schedule/registry.js";
import { specOf } from "../../src/specs/index.js";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** The smallest call's bytes (nccl-tests' convention, float32): one element per rank, or per rank pair for all-to-all. */
function minBytes(collective: string, n: number): string {
  return String(specOf(collective).perRank ? 4 * n : 4);
}

/** One call, in this (child) process: the CLI's own entry, then a last line with the peak RSS. */
async function one(args: string[]): Promise<void> {
  const rc = await cclab(["node", "cclab", "model", ...args, "--no-progress"]);
  console.log(`@@ rc=${rc} maxrss=${process.resourceUsage().maxRSS}`);
  process.exitCode = rc;
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

async function sweep(): Promise<void> {
  const n = Number(arg("--n", "4096"));
  const topologies = arg("--topologies", "fattree,torus:64x64").split(",");
  const sizes = arg("--sizes", "min,64M").split(",");
  const heap = Number(arg("--heap", "2048"));
  const timeout = Number(arg("--timeout", "120"));
  const only = arg("--only", "")
    .split(",")
    .filter((s) => s !== "");
  const algs = allAlgorithms()
    .map((a) => `${a.collective}/${a.name}`)
    .filter((name) => only.length === 0 || only.includes(name));
  console.log(`# cclab model at n = ${n}, heap ${heap} MiB, timeout ${timeout} s; load ${load()}`);
  console.log("| collective | algorithm | topology | bytes | verdict | wall s | peak RSS MiB |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  let bad = 0;
  for (const size of sizes) {
    for (const topology of topologies) {
      for (const name of algs) {
        const [collective, algorithm] = name.split("/") as [string, string];
        const bytes = size === "min" ? minBytes(collective, n) : size;
        const t0 = performance.now();
        const child = spawnSync(
          process.execPath,
          [
            `--max-old-space-size=${heap}`,
            "--import",
            "tsx",
            new URL(import.meta.url).pathname,
            "--one",
            collective,
            "--algorithm",
            algorithm,
            "-n",
            String(n),
            "--bytes",
            bytes,
            "--topology",
            topology,
          ],
          { encoding: "utf8", maxBuffer: 1 << 26, timeout: timeout * 1000, killSignal: "SIGKILL" },
        );
        const wall = (performance.now() - t0) / 1000;
        const out = `${child.stdout}\n${child.stderr}`;
        const done = /@@ rc=(\d+) maxrss=(\d+)/.exec(out);
        let verdict: string;
        if (child.error && /ETIMEDOUT/.test(String(child.error))) verdict = `TIMEOUT past ${timeout} s`;
        else if (/heap out of memory/i.test(out)) verdict = "DIED: heap out of memory";
        else if (done && done[1] === "0") verdict = "ran";
        else if (done) {
          const why = /model: argument[^\n]*/.exec(out)?.[0] ?? /Error[^\n]*/.exec(out)?.[0] ?? "exit 1";
          verdict = `refused: ${why.replace(/\|/g, "/")}`;
        } else verdict = `DIED: ${child.signal ?? `exit ${child.status}`}`;
        if (verdict.startsWith("DIED") || verdict.startsWith("TIMEOUT")) bad++;
        const rss = done ? (Number(done[2]) / 1024).toFixed(0) : "-";
        console.log(
          `| ${collective} | ${algorithm} | ${topology} | ${bytes} | ${verdict} | ${wall.toFixed(1)} | ${rss} |`,
        );
      }
    }
  }
  console.log(`\n${bad} died or timed out; load after: ${load()}`);
  process.exitCode = bad > 0 ? 1 : 0;
}

if (process.argv[2] === "--one") await one(process.argv.slice(3));
else await sweep();
