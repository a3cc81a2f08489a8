/**
 * `cclab verify --backend mpi`: the differential tests against MPI's own collectives. For each
 * world size (2, 3, 4, 5; or -n / $CCLAB_MPI_NP, e.g. "3" or "2,4"; or options.np where a caller
 * passes one) one mpirun launch runs mpi-worker.ts on every rank, which checks every
 * selected algorithm on fast-check cases from one seed against the built-in collective (see
 * differential.ts for the oracle per collective and the tolerance). Output streams through as
 * the ranks print it; the summary names every failure with the command that replays it.
 * Returns 0 only if every algorithm agreed at every size; 2 where MPI cannot run here.
 */
import { spawn, spawnSync } from "node:child_process";
import { mpiAvailable, mpirunCommand } from "../backends/mpi/index.js";
import { nodeArgv, ownModule } from "../runtime/user-module.js";
import type { Algorithm } from "../schedule/dsl.js";
import { type Machine, topologyEnv } from "../tools/topology-shape.js";
import { selectAlgorithms } from "./load.js";
import { printReport, type VerifyOptions, type VerifyReport } from "./report.js";

export const DEFAULT_SIZES: readonly number[] = [2, 3, 4, 5];

/** The world sizes to run: options.np, else $CCLAB_MPI_NP (comma-separated), else 2..5. */
export function mpiSizes(o: { np?: number | string }, env = process.env): number[] {
  const given = o.np ?? env.CCLAB_MPI_NP;
  if (given === undefined || given === "") return [...DEFAULT_SIZES];
  const sizes = String(given)
    .split(",")
    .map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`CCLAB_MPI_NP / -n: expected positive integers like "3" or "2,4", got '${String(given)}'`);
  }
  return sizes;
}

/** node (+ tsx from the clone) + the worker, as each rank's command line. */
function workerArgv(args: string[]): string[] {
  return nodeArgv(ownModule("./mpi-worker.ts", import.meta.url), args);
}

interface Launch {
  readonly np: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly lines: string[];
  /** Set when the watchdog stopped a launch that printed nothing for too long. */
  readonly hung?: string;
}

/**
 * One mpirun; its lines are echoed as they come and kept for the summary. A wait inside the
 * hand-rolled algorithm times out in the worker (CCLAB_TIMEOUT), but a rank stuck inside one of
 * MPI's blocking built-ins cannot; so a launch silent for idleMs is stopped (SIGTERM to mpirun)
 * and reported as a hang of the algorithm after the last one that reported.
 */
function launch(np: number, args: string[], idleMs: number, json = false, machine?: Machine): Promise<Launch> {
  const { cmd, args: mpiArgs } = mpirunCommand(np, workerArgv(args));
  return new Promise((resolve) => {
    const lines: string[] = [];
    let hung: string | undefined;
    // --topology reaches every rank as CCLAB_TOPOLOGY and CCLAB_PLACEMENT (mpi-worker.ts binds to it).
    const env = { ...process.env, ...topologyEnv(machine) };
    const child = spawn(cmd, mpiArgs, { stdio: ["ignore", "pipe", "pipe"], env });
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        hung = `no output for ${Math.round(idleMs / 1000)} s; stopped mpirun`;
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }, idleMs);
    };
    arm();
    const take = (sink: NodeJS.WriteStream) => {
      let rest = "";
      return (chunk: Buffer) => {
        arm();
        const parts = (rest + chunk.toString("utf8")).split("\n");
        rest = parts.pop() ?? "";
        for (const l of parts) {
          lines.push(l);
          sink.write(`${l}\n`);
        }
      };
    };
    // With --json, stdout carries only the report: the ranks' lines (progress) go to stderr.
    child.stdout.on("data", take(json ? process.stderr : process.stdout));
    child.stderr.on("data", take(process.stderr));
    child.on("error", (e) => {
      clearTimeout(timer);
      lines.push(`FAIL np=${np}: could not start mpirun: ${e.message}`);
      resolve({ np, code: null, signal: null, lines });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ np, code, signal, lines, hung });
    });
  });
}

/** The replay command for one algorithm at one size (the worker prints the same). */
export function replayCommand(
  alg: Algorithm,
  np: number,
  seed: number,
  runs: number,
  file?: string,
  machine?: Machine,
): string {
  const f = file ? ` --algorithm-file ${file}` : "";
  const t = machine
    ? ` --topology ${machine.topology}${machine.placement !== undefined ? ` --placement ${machine.placement}` : ""}`
    : "";
  return `cclab verify --backend mpi -n ${np}${t} --collective ${alg.collective} --algorithm ${alg.name}${f} --seed ${seed} --runs ${runs}`;
}

export async function verifyMpi(o: VerifyOptions & { np?: number | string }): Promise<number> {
  const avail = mpiAvailable();
  if (!avail.ok) {
    console.error(`cclab verify --backend mpi: the mpi backend is not available here: ${avail.reason}`);
    console.error(`  to get it: ${avail.hint}`);
    return 2;
  }
  if (spawnSync("mpirun", ["--version"]).status !== 0) {
    console.error(
      "cclab verify --backend mpi: mpirun is not on PATH (the native addon has MPI, the launcher is missing)",
    );
    console.error("  to get it: apt-get install openmpi-bin (or mpich)");
    return 2;
  }
  let sizes: number[];
  let algs: Algorithm[];
  try {
    sizes = mpiSizes(o);
    algs = await selectAlgorithms(o);
  } catch (e) {
    console.error(`cclab verify --backend mpi: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  const envTimeout = Number(process.env.CCLAB_TIMEOUT);
  const waitS = Number.isFinite(envTimeout) && envTimeout > 0 ? envTimeout : 60;
  // Silence longer than two worker timeouts plus the slowest plausible algorithm means a hang.
  const idleMs = (2 * waitS + 60 + o.runs * 0.5) * 1000;
  const seed = o.seed ?? Math.floor(Math.random() * 2 ** 31);
  const runs = o.runs;
  const args = ["--seed", String(seed), "--runs", String(runs)];
  if (o.collective) args.push("--collective", o.collective);
  if (o.algorithm) args.push("--algorithm", o.algorithm);
  if (o.algorithmFile) args.push("--algorithm-file", o.algorithmFile);
  const log = o.json ? () => {} : (line: string) => console.log(line);
  log(
    `cclab verify --backend mpi: hand-rolled algorithms vs MPI's built-in collectives under mpirun, np = ${sizes.join(", ")}${o.machine ? ` on ${o.machine.topology}` : ""}; ${runs} cases per algorithm (seed ${seed})`,
  );
  const t0 = performance.now();
  const results: Launch[] = [];
  for (const np of sizes) results.push(await launch(np, args, idleMs, o.json, o.machine));

  const summary: string[] = [];
  let bad = 0;
  for (const r of results) {
    const ok = r.lines.filter((l) => l.startsWith(`ok np=${r.np} `)).length;
    const fails = r.lines.filter((l) => l.startsWith("FAIL "));
    const exit = r.signal ? `signal ${r.signal}` : `exit ${r.code}`;
    if (r.code !== 0 || fails.length > 0) {
      bad++;
      summary.push(`np=${r.np}: FAILED (${ok} algorithms ok, ${fails.length} failed, mpirun ${exit})`);
      r.lines.forEach((l, i) => {
        if (!l.startsWith("FAIL ")) return;
        summary.push(`  ${l}`);
        const next = r.lines.slice(i + 1).find((x) => x.startsWith("replay: "));
        if (next) summary.push(`    ${next}`);
      });
      if (r.hung || (fails.length === 0 && ok < algs.length)) {
        // Rank 0 reports the algorithms in order, so the first unreported one is where it stopped.
        const reported = new Set(r.lines.filter((l) => /^(ok|FAIL) np=/.test(l)).map((l) => l.split(" ")[2]));
        const stuck = algs.find((a) => !reported.has(`${a.collective}/${a.name}:`));
        const where = stuck ? ` during ${stuck.collective}/${stuck.name}` : "";
        summary.push(
          `  FAIL np=${r.np}: ${r.hung ?? `mpirun ended with ${exit} before every algorithm reported`}${where}`,
        );
        if (stuck) summary.push(`    replay: ${replayCommand(stuck, r.np, seed, runs, o.algorithmFile, o.machine)}`);
      }
    } else {
      summary.push(`np=${r.np}: ${ok} ${ok === 1 ? "algorithm agrees" : "algorithms agree"} with MPI's built-in`);
    }
  }
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  if (o.json) {
    printReport(
      mpiReport(algs, results, {
        seed,
        runs,
        seconds: (performance.now() - t0) / 1000,
        file: o.algorithmFile,
        machine: o.machine,
      }),
    );
    return bad === 0 ? 0 : 1;
  }
  console.log(`\n${summary.join("\n")}`);
  console.log(
    bad === 0
      ? `\nall sizes passed in ${secs} s (seed ${seed})`
      : `\n${bad} of ${results.length} sizes failed in ${secs} s (seed ${seed})`,
  );
  return bad === 0 ? 0 : 1;
}

/** verify --json for mpi: per algorithm, the sizes it agreed on and its first failure, from the ranks' report lines. */
function mpiReport(
  algs: readonly Algorithm[],
  results: readonly Launch[],
  o: { seed: number; runs: number; seconds: number; file: string | undefined; machine: Machine | undefined },
): VerifyReport {
  const rows = algs.map((alg) => {
    const name = `${alg.collective}/${alg.name}:`;
    const ran: number[] = [];
    let failure: string | undefined;
    let replay: string | undefined;
    for (const r of results) {
      const ok = r.lines.some((l) => l.startsWith(`ok np=${r.np} ${name}`));
      const fail = r.lines.find((l) => l.startsWith(`FAIL np=${r.np} ${name}`));
      if (ok || fail) ran.push(r.np);
      if (!ok && !failure) {
        failure =
          fail ?? `np=${r.np}: mpirun ended (${r.signal ? `signal ${r.signal}` : `exit ${r.code}`}) before it reported`;
        replay = replayCommand(alg, r.np, o.seed, o.runs, o.file, o.machine);
      }
    }
    return {
      collective: alg.collective,
      algorithm: alg.name,
      nranks: ran,
      cases: ran.length * o.runs,
      ok: failure === undefined,
      ...(failure ? { failure, replay } : {}),
    };
  });
  return {
    tool: "cclab verify",
    backend: "mpi",
    seed: o.seed,
    runs: o.runs,
    ok: rows.every((r) => r.ok),
    seconds: o.seconds,
    results: rows,
  };
}
