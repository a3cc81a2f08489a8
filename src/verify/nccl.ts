/**
 * `cclab verify --backend nccl`: the differential tests against NCCL's own collectives on GPUs.
 * For each world size (2..max(4, GPUs), at most 8; or -n / $CCLAB_NCCL_NP, e.g. "2,3" or "4") one
 * `cclab run --backend nccl` launch runs nccl-worker.ts on every rank, which checks every
 * selected algorithm on differential.ts's cases against ncclAllReduce & co. and the sequential
 * oracle, bit for bit. More ranks than GPUs share them through per-rank NCCL_HOSTID (env.ts).
 * $CCLAB_NCCL_ALGO (e.g. "Ring,Tree") repeats every size once per NCCL_ALGO value.
 *
 * Where the backend cannot run (addon without CUDA, no libnccl.so.2, no GPU) it prints every
 * reason with how to fix it and returns 2; 1 if any algorithm disagreed; 0 otherwise.
 */
import Table from "cli-table3";
import { type NcclDiagnosis, ncclDiagnose } from "../backends/nccl/index.js";
import type { DType } from "../core/dtype.js";
import { launch } from "../runtime/launch.js";
import { ownModule } from "../runtime/user-module.js";
import type { Machine } from "../tools/topology-shape.js";
import { RESULT_TAG, type WorkerOptions } from "./nccl-worker.js";
import { printReport, type VerifyOptions } from "./report.js";

export const WORKER = ownModule("./nccl-worker.ts", import.meta.url);

/** World sizes: `np` (verify's -n), else $CCLAB_NCCL_NP (comma-separated), else 2..max(4, devices) capped at 8. */
export function ncclSizes(devices: number, env: NodeJS.ProcessEnv = process.env, np?: string): number[] {
  const given = np || env.CCLAB_NCCL_NP;
  if (given) {
    const sizes = given.split(",").map((s) => Number(s.trim()));
    if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
      throw new Error(`-n / CCLAB_NCCL_NP: expected positive integers like "4" or "2,3", got '${given}'`);
    }
    return sizes;
  }
  const top = Math.min(8, Math.max(4, devices));
  return Array.from({ length: top - 1 }, (_, i) => i + 2);
}

/** The explanation printed where the backend cannot run. */
export function explainUnavailable(d: NcclDiagnosis, what = "cclab verify --backend nccl"): string {
  const lines = [`${what}: cannot run on this machine:`];
  for (const p of d.problems) {
    const [first, ...rest] = p.reason.split("\n");
    lines.push(`  - ${first}`);
    for (const r of rest) lines.push(`    ${r}`);
    lines.push(`    to fix: ${p.hint}`);
  }
  lines.push("See docs/gpu.md (building with CUDA and NCCL, running on one or many GPUs).");
  return lines.join("\n");
}

export interface NcclRow {
  readonly collective: string;
  readonly algorithm: string;
  /** 'size' or 'size/NCCL_ALGO'. */
  readonly runs: string[];
  cases: number;
  builtinCases: number;
  readonly failures: string[];
}

export interface NcclRunOptions {
  readonly sizes: readonly number[];
  readonly runs: number;
  readonly seed: number;
  readonly collective?: string;
  readonly algorithm?: string;
  readonly algorithmFile?: string;
  readonly dtypes?: readonly DType[];
  /** NCCL_ALGO values to run each size under (undefined: NCCL's choice). */
  readonly ncclAlgos?: readonly (string | undefined)[];
  /** Per-call timeout of the ranks, seconds. Default 120. */
  readonly timeoutS?: number;
  /** Where the ranks' other output goes (default: this process's stdout). */
  readonly echo?: (line: string) => void;
  /** `--topology` and `--placement`: every rank binds the algorithms to the shape they give its world (nccl-worker.ts). */
  readonly machine?: Machine;
}

export interface NcclRunResult {
  readonly rows: NcclRow[];
  /** Launches that failed (a rank errored or died), with cclab run's summary. */
  readonly launchFailures: string[];
}

/** Runs the differential workers for every size (and NCCL_ALGO) and gathers every rank's results. */
export async function runNcclDifferential(o: NcclRunOptions): Promise<NcclRunResult> {
  const rows = new Map<string, NcclRow>();
  const launchFailures: string[] = [];
  const echo = o.echo ?? ((l: string) => console.log(l));
  const worker: WorkerOptions = {
    collective: o.collective,
    algorithm: o.algorithm,
    algorithmFile: o.algorithmFile,
    runs: o.runs,
    seed: o.seed,
    dtypes: o.dtypes,
  };
  for (const algo of o.ncclAlgos ?? [undefined]) {
    for (const n of o.sizes) {
      const tag = algo ? `${n}/${algo}` : String(n);
      echo(`-- ${n} ranks${algo ? `, NCCL_ALGO=${algo}` : ""}`);
      let buffered = "";
      const onOut = (text: string) => {
        buffered += text;
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          const at = line.indexOf(RESULT_TAG);
          if (at < 0) {
            echo(line);
            continue;
          }
          const r = JSON.parse(line.slice(at + RESULT_TAG.length)) as {
            collective: string;
            algorithm: string;
            cases: number;
            builtinCases: number;
            failures: string[];
            rank: number;
          };
          const key = `${r.collective}/${r.algorithm}`;
          const row = rows.get(key) ?? {
            collective: r.collective,
            algorithm: r.algorithm,
            runs: [],
            cases: 0,
            builtinCases: 0,
            failures: [],
          };
          rows.set(key, row);
          if (r.rank === 0) {
            row.runs.push(tag);
            row.cases += r.cases;
            row.builtinCases += r.builtinCases;
          }
          for (const f of r.failures) row.failures.push(algo ? `[NCCL_ALGO=${algo}] ${f}` : f);
        }
      };
      const result = await launch({
        nprocs: n,
        backend: "nccl",
        program: WORKER,
        args: [JSON.stringify(worker)],
        timeoutMs: (o.timeoutS ?? 120) * 1000,
        env: algo ? { NCCL_ALGO: algo } : {},
        ...(o.machine ? { topology: o.machine.topology, placement: o.machine.placement } : {}),
        stdout: onOut,
        stderr: (t) => {
          for (const l of t.split("\n")) if (l) echo(l);
        },
      });
      if (buffered) onOut("\n");
      if (result.exitCode !== 0) {
        launchFailures.push(`${n} ranks${algo ? ` (NCCL_ALGO=${algo})` : ""}: ${result.summary || "failed"}`);
      }
    }
  }
  return { rows: [...rows.values()], launchFailures };
}

export async function verifyNccl(o: VerifyOptions): Promise<number> {
  if (o.np) ncclSizes(1, {}, o.np); // a bad -n is reported as such, GPU or not
  const d = ncclDiagnose();
  if (!d.ok) {
    console.error(explainUnavailable(d));
    return 2;
  }
  const seed = o.seed ?? Math.floor(Math.random() * 2 ** 31);
  const sizes = ncclSizes(d.devices, process.env, o.np);
  const algos = process.env.CCLAB_NCCL_ALGO?.split(",").map((s) => s.trim()) ?? [undefined];
  const lib = d.library!;
  const log = o.json ? () => {} : (line: string) => console.log(line);
  log(
    `cclab verify --backend nccl: NCCL ${lib.versionString} (${lib.path}), ${d.devices} GPU(s), ` +
      `world sizes ${sizes.join(", ")}${o.machine ? ` on ${o.machine.topology}` : ""}${algos[0] ? `, NCCL_ALGO ${algos.join(", ")}` : ""}; ` +
      `${o.runs} cases per algorithm and size (seed ${seed})`,
  );
  const t0 = performance.now();
  const r = await runNcclDifferential({
    sizes,
    runs: o.runs,
    seed,
    collective: o.collective,
    algorithm: o.algorithm,
    algorithmFile: o.algorithmFile,
    ncclAlgos: algos,
    ...(o.machine ? { machine: o.machine } : {}),
    ...(o.json ? { echo: (l: string) => console.error(l) } : {}),
  });
  if (o.json) {
    const ok = r.rows.length > 0 && r.launchFailures.length === 0 && r.rows.every((row) => row.failures.length === 0);
    printReport({
      tool: "cclab verify",
      backend: "nccl",
      seed,
      runs: o.runs,
      ok,
      seconds: (performance.now() - t0) / 1000,
      results: r.rows.map((row) => ({
        collective: row.collective,
        algorithm: row.algorithm,
        nranks: [...new Set(row.runs.map((t) => Number.parseInt(t, 10)))],
        cases: row.cases,
        ok: row.failures.length === 0,
        ...(row.failures.length
          ? { failure: row.failures[0], replay: `cclab verify --backend nccl --seed ${seed} --runs ${o.runs}` }
          : {}),
      })),
    });
    return ok ? 0 : 1;
  }
  const table = new Table({
    head: ["collective", "algorithm", "sizes", "cases", "vs NCCL", "result"],
    style: { head: [], border: [] },
  });
  for (const row of r.rows) {
    table.push([
      row.collective,
      row.algorithm,
      row.runs.join(" "),
      row.cases,
      row.builtinCases,
      row.failures.length ? "FAILED" : "ok",
    ]);
  }
  console.log(table.toString());
  const bad = r.rows.filter((row) => row.failures.length > 0);
  for (const row of bad) {
    console.log(`\n${row.collective}/${row.algorithm} FAILED:`);
    for (const f of row.failures.slice(0, 10)) console.log(`  ${f}`);
    if (row.failures.length > 10) console.log(`  ... and ${row.failures.length - 10} more`);
  }
  for (const f of r.launchFailures) console.log(`\n${f}`);
  const file = o.algorithmFile ? ` --algorithm-file ${o.algorithmFile}` : "";
  if (bad.length > 0 || r.launchFailures.length > 0) {
    console.log(`replay: cclab verify --backend nccl${file} --seed ${seed} --runs ${o.runs}`);
  }
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(
    `\n${r.rows.length - bad.length} of ${r.rows.length} ${r.rows.length === 1 ? "algorithm agrees" : "algorithms agree"} with NCCL in ${secs} s`,
  );
  return bad.length > 0 || r.launchFailures.length > 0 || r.rows.length === 0 ? 1 : 0;
}
