/**
 * This machine's parameters for the alpha-beta model, measured (`cclab calibrate`): alpha from an
 * MPI ping-pong, beta from MPI_Sendrecv's bandwidth, gamma from a float32 sum's and the copy cost
 * from memcpy's, each the C floors bench prints (src/bench/floors.ts, native/floors.c under
 * mpirun -np 2), plus the per-message cost of cclab's own call path above MPI's (the front API
 * and the plan runner: what a hand-rolled step costs beyond the raw exchange). Beta, gamma and
 * copy are measured at several buffer sizes (`bySize`: in cache a buffer moves faster than from
 * memory), and the model takes them at the call's size (src/schedule/model-size.ts). Written to a
 * machine file that `cclab model --machine FILE` reads; test/perf/model-vs-bench.ts holds the
 * model's predictions to `cclab bench`'s medians.
 *
 * May import: core, bench (floors), schedule (model params).
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { cpus, hostname, loadavg } from "node:os";
import { type Floors, measureFloors } from "../bench/floors.js";
import { InvalidArgumentError } from "../core/errors.js";
import { betaFromGBps, type ModelParams } from "../schedule/model.js";
import type { SizePoint } from "../schedule/model-size.js";

/** Costs at one buffer size: every field present (a machine file's). */
export type MeasuredPoint = Required<SizePoint>;

export interface MachineFile {
  readonly cclab: "machine";
  /** 1: alpha, beta, gamma; 2 adds copy and bySize. */
  readonly version: 1 | 2;
  /** Latency per message, µs: the ping-pong's half round trip plus cclab's per-message cost. */
  readonly alpha: number;
  /** µs per byte: 1 / MPI_Sendrecv's bandwidth per direction, at the largest size measured. */
  readonly beta: number;
  /** µs per byte reduced: 1 / the float32 sum's bandwidth, at the largest size. */
  readonly gamma: number;
  /** µs per byte copied: 1 / memcpy's bandwidth, at the largest size (version 2). */
  readonly copy?: number;
  /** beta, gamma and copy at each buffer size measured, increasing (version 2). */
  readonly bySize?: readonly MeasuredPoint[];
  /** How it was measured (absent from a hand-written file). */
  readonly measured?: {
    readonly date: string;
    readonly host: string;
    readonly cores: number;
    readonly load: readonly number[];
    /** The floors at the largest size. */
    readonly floors: Floors;
    /** The floors at every size (version 2). */
    readonly floorsBySize?: readonly Floors[];
    /** What cclab adds to a message above MPI's own (µs), and how it was found. */
    readonly overheadUs: number;
  };
}

/** Buffer sizes calibrate measures by default: those `cclab bench -b 1K -e 32M -f 8` runs. */
export const CALIBRATE_SIZES: readonly number[] = [1 << 10, 1 << 13, 1 << 16, 1 << 19, 1 << 22, 1 << 25];

export interface CalibrateOptions {
  /** The largest size measured, whose costs are the scalars beta, gamma, copy (default 32 MiB). */
  readonly bytes?: number;
  /** Sizes to measure at, bytes (default CALIBRATE_SIZES); those above `bytes` are dropped. */
  readonly sizes?: readonly number[];
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

/**
 * The costs one floors run gives at its size: beta is the Sendrecv's time less the ping-pong's
 * latency, per byte (at 1 KiB the latency is most of it), gamma and copy the sum's and memcpy's.
 */
export function pointOf(f: Floors): MeasuredPoint {
  const us = f.bytes / (f.sendrecvGBps * 1e3);
  return {
    bytes: f.bytes,
    beta: Math.max(0, us - f.pingPongUs) / f.bytes,
    gamma: betaFromGBps(f.sumFloat32GBps),
    copy: betaFromGBps(f.memcpyGBps),
  };
}

/** A machine file calibrate has just measured: every field there. */
export type Calibrated = MachineFile & Required<Pick<MachineFile, "measured" | "copy" | "bySize">>;

export function calibrate(o: CalibrateOptions = {}): Calibrated {
  const top = o.bytes ?? 32 * 1024 * 1024;
  const sizes = [...new Set([...(o.sizes ?? CALIBRATE_SIZES).filter((b) => b < top), top])].sort((a, b) => a - b);
  const floorsBySize = sizes.map((b) => measureFloors(b, o.reps ?? 20));
  const bySize = floorsBySize.map(pointOf);
  const floors = floorsBySize[floorsBySize.length - 1] as Floors;
  const last = bySize[bySize.length - 1] as MeasuredPoint;
  // The median ping-pong over every run: each run measures it again, under whatever load came.
  const pingPong = floorsBySize.map((f) => f.pingPongUs).sort((a, b) => a - b)[Math.floor(sizes.length / 2)] as number;
  const overheadUs = o.overheadUs ?? PER_MESSAGE_OVERHEAD_US;
  return {
    cclab: "machine",
    version: 2,
    alpha: pingPong + overheadUs,
    beta: last.beta,
    gamma: last.gamma,
    copy: last.copy,
    bySize,
    measured: {
      date: new Date().toISOString(),
      host: hostname(),
      cores: cpus().length,
      load: loadavg().map((x) => Math.round(x * 100) / 100),
      floors,
      floorsBySize,
      overheadUs,
    },
  };
}

/** The alpha-beta model's parameters a machine file gives (bySize where it has one). */
export function machineParams(m: MachineFile): ModelParams {
  return { alpha: m.alpha, beta: m.beta, gamma: m.gamma, copy: m.copy, bySize: m.bySize };
}

const MAX_MACHINE_FILE = 1 << 20;

/** Reads a machine file (bounded, a regular file only), every parameter checked; errors name the file and --machine. */
export function readMachineFile(path: string, op = "model"): MachineFile {
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
  if (v === null || typeof v !== "object" || Array.isArray(v) || v.cclab !== "machine")
    throw bad(`not a cclab machine file (no "cclab": "machine"); make one with cclab calibrate -o FILE`);
  if (v.version !== 1 && v.version !== 2)
    throw bad(
      `'version' must be 1 or 2, got ${JSON.stringify(v.version)}; make a new one with cclab calibrate -o FILE`,
    );
  checkMachine(v, bad);
  return v as unknown as MachineFile;
}

const MAX_SIZES = 64;

/** Every field the model reads, checked; `bad` makes the error that names the file. */
function checkMachine(v: Record<string, unknown>, bad: (why: string) => Error): void {
  const cost = (x: unknown, field: string) => {
    if (typeof x !== "number" || !Number.isFinite(x) || x < 0)
      throw bad(`'${field}' must be a finite non-negative number, got ${JSON.stringify(x)}`);
  };
  for (const k of ["alpha", "beta", "gamma"] as const) cost(v[k], k);
  if (v.version === 1) return;
  cost(v.copy, "copy");
  const points = v.bySize;
  if (!Array.isArray(points) || points.length === 0 || points.length > MAX_SIZES)
    throw bad(
      `'bySize' must be a list of 1 to ${MAX_SIZES} measured sizes, got ${JSON.stringify(points)?.slice(0, 80)}`,
    );
  let prev = 0;
  points.forEach((q: unknown, i) => {
    const at = `bySize[${i}]`;
    if (q === null || typeof q !== "object" || Array.isArray(q))
      throw bad(`'${at}' must be an object {bytes, beta, gamma, copy}, got ${JSON.stringify(q)}`);
    const p = q as Record<string, unknown>;
    if (typeof p.bytes !== "number" || !Number.isSafeInteger(p.bytes) || p.bytes <= prev)
      throw bad(
        `'${at}.bytes' must be a whole number of bytes above the size before it (${prev}), got ${JSON.stringify(p.bytes)}: sizes increase`,
      );
    prev = p.bytes;
    for (const k of ["beta", "gamma", "copy"] as const) cost(p[k], `${at}.${k}`);
  });
  const cores = (v.measured as Record<string, unknown> | undefined)?.cores;
  if (cores !== undefined && (typeof cores !== "number" || !Number.isSafeInteger(cores) || cores < 1))
    throw bad(`'measured.cores' must be a whole number of cores >= 1, got ${JSON.stringify(cores)}`);
}
