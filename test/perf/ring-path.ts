/**
 * Which files one all-reduce runs through, from allReduce() (src/collectives/api.ts) to the
 * native MPI call: 2 ranks, float32 sum of 1,024 elements, algorithm 'ring', the MPI backend.
 * Not a test: run it by hand (it launches mpirun itself) and say the commit with it.
 *   npx tsx test/perf/ring-path.ts [--call first|repeat]
 *
 * TypeScript: each rank runs under NODE_V8_COVERAGE; once everything is imported and MPI is up,
 * v8.takeCoverage() writes and resets the counts, the call runs, and a second takeCoverage()
 * holds only what the call ran. A file under src/ or algorithms/ counts if any of its functions
 * ran (count > 0) on either rank. `--call first` (default) times the first call, which looks the
 * algorithm up and compiles its plan; `--call repeat` a second call of the same shape.
 *
 * Native: the translation units whose functions the call runs (mpi.cc: runBind, runProgress,
 * localReduce; reduce.cc: ReduceByCode, the kernel localReduce calls) and the files of native/
 * they include, transitively: what a reader follows from runProgress. mpi_engine.h (the addon's
 * registration hook) is listed apart: it is compiled in, but no call runs through it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";

const root = fileURLToPath(new URL("../../", import.meta.url));

interface FunctionCoverage {
  readonly functionName: string;
  readonly ranges: readonly { readonly count: number }[];
}
interface ScriptCoverage {
  readonly url: string;
  readonly functions: readonly FunctionCoverage[];
}

/** One rank's part: MPI up, then one ring all-reduce between two takeCoverage() calls. */
async function rank(call: string): Promise<void> {
  const { initMpi } = await import("../../src/backends/mpi/index.js");
  const { allReduce } = await import("../../src/collectives/api.js");
  const comm = await initMpi();
  const buf = new Float32Array(1024).fill(comm.rank + 1);
  if (call === "repeat") await allReduce(comm, buf, { algorithm: "ring" });
  await comm.builtin.barrier();
  v8.takeCoverage();
  await allReduce(comm, buf, { algorithm: "ring" });
  v8.takeCoverage();
  const want = call === "repeat" ? 2 * 3 ** (comm.size - 1) : 3;
  if (buf[0] !== want && call === "first") throw new Error(`rank ${comm.rank}: sum ${buf[0]}, expected ${want}`);
  comm.destroy();
}

/** The files of native/ that `file` includes with quotes, transitively, `file` first. */
function nativeIncludes(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(join(root, "native", file), "utf8");
  for (const m of text.matchAll(/^#include "([^"]+)"/gm)) nativeIncludes(m[1] as string, seen);
  return seen;
}

/** Files under src/ and algorithms/ whose functions ran in the last coverage file of each rank. */
function ranFiles(dir: string): string[] {
  // coverage-<pid>-<time>-<thread>.json, in the main thread (0; thread 1 is tsx's loader): per
  // rank, the first takeCoverage()'s file, the call's, then the exit's.
  const byPid = new Map<string, { readonly file: string; readonly time: number }[]>();
  for (const f of readdirSync(dir)) {
    const m = /^coverage-(\d+)-(\d+)-0\.json$/.exec(f);
    if (!m) continue;
    const list = byPid.get(m[1] as string) ?? [];
    list.push({ file: f, time: Number(m[2]) });
    byPid.set(m[1] as string, list);
  }
  if (byPid.size !== 2) throw new Error(`expected coverage from 2 ranks in ${dir}, found ${byPid.size}`);
  const calls = [...byPid.values()].map((list) => {
    const sorted = list.sort((a, b) => a.time - b.time);
    if (sorted.length !== 3) throw new Error(`expected 3 coverage files a rank in ${dir}, found ${sorted.length}`);
    return (sorted[1] as { file: string }).file;
  });
  const files = new Set<string>();
  for (const f of calls) {
    const { result } = JSON.parse(readFileSync(join(dir, f), "utf8")) as { result: ScriptCoverage[] };
    for (const s of result) {
      if (!s.url.startsWith("file://")) continue;
      const path = relative(root, fileURLToPath(s.url));
      if (!/^(src|algorithms)\//.test(path)) continue;
      if (s.functions.some((fn) => (fn.ranges[0]?.count ?? 0) > 0)) files.add(path);
    }
  }
  return [...files].sort();
}

const callArg = process.argv.indexOf("--call");
const call = callArg > 0 ? (process.argv[callArg + 1] ?? "") : "first";
if (call !== "first" && call !== "repeat") throw new Error(`--call: 'first' or 'repeat', got '${call}'`);
if (process.env.CCLAB_RING_PATH_RANK) {
  await rank(call);
} else {
  const { mpirunCommand } = await import("../../src/backends/mpi/index.js");
  const dir = mkdtempSync(join(tmpdir(), "cclab-ring-path-"));
  try {
    const script = fileURLToPath(import.meta.url);
    const { cmd, args } = mpirunCommand(2, ["node", "--import", "tsx", script, "--call", call], {
      exportEnv: ["NODE_V8_COVERAGE", "CCLAB_RING_PATH_RANK"],
    });
    const r = spawnSync(cmd, args, {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, NODE_V8_COVERAGE: dir, CCLAB_RING_PATH_RANK: "1" },
    });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited with ${r.status}`);
    const ts = ranFiles(dir);
    const native = [...nativeIncludes("reduce.cc", nativeIncludes("mpi.cc"))];
    const onPath = native.filter((f) => f !== "mpi_engine.h");
    console.log(`TypeScript files that ran code (${call} call): ${ts.length}`);
    for (const f of ts) console.log(`  ${f}`);
    console.log(`native files: mpi.cc, reduce.cc and what they include: ${onPath.length}`);
    for (const f of onPath) console.log(`  native/${f}`);
    console.log(`  (not counted: native/mpi_engine.h, the addon's registration hook)`);
    console.log(`in all: ${ts.length + onPath.length}`);
  } finally {
    if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  }
}
