/**
 * This machine's parameters for the alpha-beta model, measured (`cclab calibrate`): alpha from an
 * MPI ping-pong, beta from MPI_Sendrecv's bandwidth, gamma from a float32 sum's, each the C floors
 * bench prints (src/bench/floors.ts, native/floors.c under mpirun -np 2), plus the per-message
 * cost of cclab's own call path above MPI's (the front API and the plan runner: what a hand-rolled
 * step costs beyond the raw exchange). Written to a machine file that `cclab model --machine FILE`
 * reads; test/perf/model-vs-bench.ts holds the model's predictions to `cclab bench`'s medians.
 *
 * May import: core, bench (floors), schedule (model params).
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { cpus, hostname, loadavg } from "node:os";
import { type Floors, measureFloors } from "../bench/floors.js";
import { InvalidArgumentError } from "../core/errors.js";
import { betaFromGBps, type ModelParams } from "../schedule/model.js";

export interface MachineFile {
  readonly cclab: "machine";
  readonly version: 1;
  /** Latency per message, µs: the ping-pong's half round trip plus cclab's per-message cost. */
  readonly alpha: number;
  /** µs per byte: 1 / MPI_Sendrecv's bandwidth per direction. */
  readonly beta: number;
  /** µs per byte reduced: 1 / the float32 sum's bandwidth. */
  readonly gamma: number;
  /** How it was measured. */
  readonly measured: {
    readonly date: string;
    readonly host: string;
    readonly cores: number;
    readonly load: readonly number[];
    readonly floors: Floors;
    /** What cclab adds to a message above MPI's own (µs), and how it was found. */
    readonly overheadUs: number;
  };
}

export interface CalibrateOptions {
  /** Size of the bandwidth measurements, bytes (default 32 MiB). */
  readonly bytes?: number;
  readonly reps?: number;
  /** cclab's per-message cost above MPI's, µs (default PER_MESSAGE_OVERHEAD_US). */
  readonly overheadUs?: number;
}

/**
 * What a message costs in cclab's call path above the raw MPI exchange: the fast path's per-step
 * cost at n = 2, 1 KiB (docs/performance.md, "Where the time goes": a step ~1.2 - 1.4 µs above
 * MPI's isend + irecv + progress through the addon). A default, stated; --overhead sets another.
 */
export const PER_MESSAGE_OVERHEAD_US = 1.3;

export function calibrate(o: CalibrateOptions = {}): MachineFile {
  const floors = measureFloors(o.bytes ?? 32 * 1024 * 1024, o.reps ?? 20);
  const overheadUs = o.overheadUs ?? PER_MESSAGE_OVERHEAD_US;
  return {
    cclab: "machine",
    version: 1,
    alpha: floors.pingPongUs + overheadUs,
    beta: betaFromGBps(floors.sendrecvGBps),
    gamma: betaFromGBps(floors.sumFloat32GBps),
    measured: {
      date: new Date().toISOString(),
      host: hostname(),
      cores: cpus().length,
      load: loadavg().map((x) => Math.round(x * 100) / 100),
      floors,
      overheadUs,
    },
  };
}

const MAX_MACHINE_FILE = 1 << 20;

/** Reads a machine file (bounded, a regular file only), every parameter checked; errors name the file and --machine. */
export function readMachineFile(path: string, op = "model"): MachineFile & ModelParams {
  const bad = (why: string) => new InvalidArgumentError({ op, arg: "--machine" }, `${path}: ${why}`);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw bad((e as Error).message);
  }
  let text: string;
  try {
    if (!fstatSync(fd).isFile()) throw bad("not a regular file");
    const buf = Buffer.alloc(MAX_MACHINE_FILE + 1);
    let got = 0;
    for (;;) {
      const k = readSync(fd, buf, got, buf.length - got, null);
      if (k === 0) break;
      got += k;
      if (got > MAX_MACHINE_FILE) throw bad(`larger than ${MAX_MACHINE_FILE} bytes: not a machine file`);
    }
    text = buf.subarray(0, got).toString("utf8");
  } finally {
    closeSync(fd);
  }
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw bad(`not JSON (${(e as Error).message}); make one with cclab calibrate -o FILE`);
  }
  if (v === null || typeof v !== "object" || v.cclab !== "machine" || v.version !== 1)
    throw bad(`not a cclab machine file (no "cclab": "machine", "version": 1); make one with cclab calibrate -o FILE`);
  for (const k of ["alpha", "beta", "gamma"] as const) {
    const x = v[k];
    if (typeof x !== "number" || !Number.isFinite(x) || x < 0)
      throw bad(`'${k}' must be a finite non-negative number, got ${JSON.stringify(x)}`);
  }
  return v as unknown as MachineFile & ModelParams;
}
