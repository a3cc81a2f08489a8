/**
 * The static proof's own speed at large n, run by hand, never in npm test:
 *
 *   npx tsx test/perf/verify-scale.ts [--n 256,512,1024] [--only allreduce/ring,...] [--all]
 *                                     [--cases all|one] [--split] [--timeout 600]
 *
 * For each algorithm (allreduce/ring by default; --all: every registered one) at each n: the
 * proof of `cclab verify -n N` at that n (src/verify/matrix.ts casesAt: counts 0, n - 1, n + 3,
 * each root kind, in and out of place; --cases one: count n + 3 out of place only, alltoallv its
 * first split matrix; past 1,024 ranks, the proof by rotation's count n out of place, in this
 * one thread where `cclab verify` shares its ranks among workers), in a child process of its own with the heap verify's proof workers have (4 GiB, a 192 MiB young
 * generation; src/verify/proofs.ts), one call after another, timed wall-clock and in CPU seconds (the machine is
 * shared: CPU time is what the proof costs, wall time what it took under the load), with the
 * child's peak resident memory (getrusage maxRSS). With --split the child proves them as
 * `cclab verify` does, in worker threads (a call past 1,024 ranks shared out among them), and
 * the CPU time and peak memory are the whole process's. Prints a markdown table and the load
 * before and after.
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { checkAlgorithm } from "../../src/schedule/check.js";
import { allAlgorithms, findAlgorithm } from "../../src/schedule/registry.js";
import { ROTATION_FROM } from "../../src/schedule/rotation.js";
import { makeCall, specOf } from "../../src/specs/index.js";
import { casesAt, checkCases } from "../../src/verify/matrix.js";
import { PROOF_HEAP_MIB, proveInWorkers } from "../../src/verify/proofs.js";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

/** One algorithm at one n, in this (child) process: prints one JSON line. */
async function one(name: string, n: number, which: string, split: boolean): Promise<void> {
  const [collective, algorithm] = name.split("/") as [string, string];
  const alg = findAlgorithm(collective, algorithm, { op: "verify-scale" });
  // One call: count n + 3 out of place; an uncounted collective (alltoallv), the matrix's first
  // split matrix (lopsided, zeros in it).
  // Past 1,024 ranks (the proof by rotation), the matrix's first call: count n, out of place.
  const cases =
    which !== "one"
      ? casesAt(alg, n)
      : specOf(collective).counted && n < ROTATION_FROM
        ? [makeCall({ collective, size: n, count: n + 3, segment: 1 + (n % 3) }, alg)]
        : casesAt(alg, n).slice(0, 1);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const errors: string[] = [];
  if (split) {
    // As `cclab verify` proves them: in worker threads, a call past 1,024 ranks in shares.
    const src = { collective, algorithm, maxN: 1, sizes: [n], heapMiB: PROOF_HEAP_MIB };
    const all = checkCases(alg, 1, [n]);
    const indices = cases.map((c) => all.findIndex((x) => JSON.stringify(x) === JSON.stringify(c)));
    const out = await proveInWorkers(src, all, indices);
    if (out.missing) errors.push("the workers could not find the algorithm");
    errors.push(...(out.failure?.errors ?? []));
  } else {
    for (const c of cases) {
      errors.push(...checkAlgorithm(alg, c).errors);
      if (errors.length > 0) break;
    }
  }
  const cpu = process.cpuUsage(c0);
  console.log(
    JSON.stringify({
      cases: cases.length,
      seconds: (performance.now() - t0) / 1000,
      cpu: (cpu.user + cpu.system) / 1e6,
      mib: process.resourceUsage().maxRSS / 1024,
      error: errors[0]?.slice(0, 200) ?? "",
    }),
  );
}

async function main(): Promise<void> {
  if (process.argv[2] === "--one") {
    const [, , , name, n, which, split] = process.argv;
    await one(name as string, Number(n), which as string, split === "split");
    return;
  }
  const split = process.argv.includes("--split");
  const sizes = arg("--n", "256,512,1024").split(",").map(Number);
  const which = arg("--cases", "all");
  const timeout = Number(arg("--timeout", "600")) * 1000;
  const only = arg("--only", "allreduce/ring");
  const names = process.argv.includes("--all")
    ? allAlgorithms().map((a) => `${a.collective}/${a.name}`)
    : only.split(",");
  console.log(`# static proof speed (cases: ${which}${split ? ", in verify's workers" : ""}), load before ${load()}`);
  console.log("| algorithm | n | cases | result | wall s | CPU s | peak MiB |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const name of names) {
    for (const n of sizes) {
      const child = spawnSync(
        process.execPath,
        [
          "--max-old-space-size=4096",
          // The young generation verify's proof workers get (src/verify/proofs.ts: 192 MiB).
          "--max-semi-space-size=64",
          "--import",
          "tsx",
          new URL(import.meta.url).pathname,
          "--one",
          name,
          String(n),
          which,
          split ? "split" : "",
        ],
        { encoding: "utf8", maxBuffer: 1 << 24, timeout },
      );
      const line = child.stdout.trim().split("\n").pop() ?? "";
      let cells: string[];
      try {
        const r = JSON.parse(line) as { cases: number; seconds: number; cpu: number; mib: number; error: string };
        cells = [
          String(r.cases),
          r.error ? `FAILED: ${r.error}` : "ok",
          r.seconds.toFixed(1),
          r.cpu.toFixed(1),
          r.mib.toFixed(0),
        ];
      } catch {
        const why = child.signal
          ? `killed (${child.signal}${child.error ? `, past ${timeout / 1000} s` : ""})`
          : ((child.stderr.match(/(heap out of memory|Error[^\n]*)/) ?? ["failed"])[0] as string);
        cells = ["", why.slice(0, 160), "", "", ""];
      }
      console.log(`| ${name} | ${n} | ${cells.join(" | ")} |`);
    }
  }
  console.log(`load after: ${load()}`);
}

await main();
