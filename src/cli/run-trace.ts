/**
 * `cclab run --trace out.html|out.svg|out.json [--format perfetto]` and, on sim, `--semantics`
 * and `--seed`: what the launcher is given, and the trace written once the run is over (also
 * when it failed or deadlocked: that is often the picture wanted).
 *
 * sim records its own trace (logical ticks, and any deadlock it finds). Process backends (mpi,
 * nccl) get CCLAB_TRACE_DIR: each rank wraps its comm in a TracingComm (src/tracing.ts,
 * microseconds on the machine's shared clock; on nccl host enqueue times) and writes
 * rank-<k>.json there when it ends, and this process merges the files.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { LaunchBackend, LaunchOptions } from "../runtime/launch.js";
import { Trace } from "../trace.js";
import { readRankTraces, TRACE_DIR_ENV } from "../tracing.js";
import type { LabelMode } from "../viz/labels.js";
import { outputFormat, writeTrace } from "./trace-output.js";

export interface RunTraceInput {
  readonly program: string;
  readonly backend: LaunchBackend;
  readonly nranks: number;
  /** --trace's file; without it only --semantics/--seed apply. */
  readonly file?: string;
  readonly format?: string;
  readonly labels: LabelMode;
  readonly semantics?: string;
  readonly seed?: number;
}

export interface RunTrace {
  /** Merged into launch()'s options. */
  readonly launch: Pick<LaunchOptions, "sim" | "env">;
  /** Writes the trace (if one was asked for) after the run. */
  finish(): Promise<void>;
}

export function runTrace(i: RunTraceInput): RunTrace {
  const file = i.file;
  // A wrong --trace name fails before any rank starts.
  const format = file ? outputFormat(file, i.format, ["html", "svg", "json", "perfetto"]) : undefined;
  const sim = i.backend === "sim";
  const what = `${basename(i.program)} on ${i.backend}, n = ${i.nranks}`;
  if (sim) {
    const trace = file ? new Trace() : undefined;
    return {
      launch: { sim: { seed: i.seed, semantics: i.semantics, trace } },
      finish: async () => {
        if (!file || !format || !trace) return;
        await writeTrace(file, format, {
          title: `${what}, semantics ${i.semantics ?? "nccl"}, seed ${i.seed ?? 1}`,
          size: i.nranks,
          unit: "tick",
          name: basename(i.program),
          events: trace.events,
          deadlocks: trace.deadlocks,
          labels: i.labels,
        });
      },
    };
  }
  if (!file || !format) return { launch: {}, finish: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), "cclab-run-trace-"));
  return {
    launch: { env: { [TRACE_DIR_ENV]: dir } },
    finish: async () => {
      try {
        const { events, missing } = readRankTraces(dir, i.nranks);
        if (missing.length > 0) {
          process.stderr.write(
            `cclab run --trace: rank${missing.length > 1 ? "s" : ""} ${missing.join(", ")} left no trace (killed before writing it); drawn without\n`,
          );
        }
        const when = i.backend === "nccl" ? "host enqueue times, µs" : "µs";
        await writeTrace(file, format, {
          title: `${what} (${when})`,
          size: i.nranks,
          unit: "µs",
          name: basename(i.program),
          events,
          labels: i.labels,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
