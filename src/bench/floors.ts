/**
 * The physical floors `cclab bench --floors` prints above its table: what this machine does in
 * C, without cclab, measured just before the bench (native/floors.c, built with mpicc into
 * build/floors and run under mpirun -np 2): MPI ping-pong latency, MPI_Sendrecv bandwidth,
 * memcpy and float32-sum bandwidth. Every figure the bench prints reads against these.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { mpirunCommand } from "../backends/mpi/index.js";
import { UnavailableError } from "../core/errors.js";
import { PACKAGE_ROOT } from "../native/root.js";

export interface Floors {
  /** Message size of the bandwidth figures, bytes. */
  readonly bytes: number;
  readonly reps: number;
  /** Half an MPI round trip of 8 bytes between two ranks, µs. */
  readonly pingPongUs: number;
  /** MPI_Sendrecv between two ranks, both directions at once, GB/s per direction. */
  readonly sendrecvGBps: number;
  readonly memcpyGBps: number;
  /** dst[i] = a[i] + b[i] in float32, dst bytes per second (GB/s). */
  readonly sumFloat32GBps: number;
}

/** How the launching process hands the measured floors to the ranks mpirun starts. */
export const FLOORS_ENV = "CCLAB_BENCH_FLOORS";

/** The floors program's source: native/floors.c at the package's root (a clone's or an installed package's). */
export const FLOORS_SOURCE = join(PACKAGE_ROOT, "native", "floors.c");
const BINARY = join(PACKAGE_ROOT, "build", "floors");

/** Builds native/floors.c with mpicc when the binary is missing or older than the source. */
function build(): string {
  if (!existsSync(FLOORS_SOURCE))
    throw new UnavailableError(`--floors: ${FLOORS_SOURCE} is missing from this installation`);
  if (existsSync(BINARY) && statSync(BINARY).mtimeMs >= statSync(FLOORS_SOURCE).mtimeMs) return BINARY;
  mkdirSync(dirname(BINARY), { recursive: true });
  try {
    execFileSync("mpicc", ["-O2", "-o", BINARY, FLOORS_SOURCE], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    const why = (e as { stderr?: Buffer }).stderr?.toString().trim() || (e as Error).message;
    throw new UnavailableError(
      `--floors needs mpicc to build ${FLOORS_SOURCE}: ${why} (apt-get install libopenmpi-dev gives it)`,
    );
  }
  return BINARY;
}

/** Parses and checks the program's JSON line: every figure a positive finite number. */
export function parseFloors(text: string): Floors {
  const line = text.trim().split("\n").pop() ?? "";
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`--floors: the floors program printed no JSON line (got '${line.slice(0, 200)}')`);
  }
  const keys = ["bytes", "reps", "pingPongUs", "sendrecvGBps", "memcpyGBps", "sumFloat32GBps"] as const;
  for (const k of keys) {
    const x = v[k];
    if (typeof x !== "number" || !Number.isFinite(x) || x <= 0) {
      throw new Error(`--floors: the floors program's ${k} is ${JSON.stringify(x)}, not a positive number`);
    }
  }
  return Object.fromEntries(keys.map((k) => [k, v[k]])) as unknown as Floors;
}

/** Measures the floors at `bytes` (median of `reps`); throws UnavailableError without mpicc/mpirun. */
export function measureFloors(bytes: number, reps = 20): Floors {
  const bin = build();
  const { cmd, args } = mpirunCommand(2, [bin, String(Math.max(8, Math.floor(bytes))), String(reps)]);
  let out: string;
  try {
    out = execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  } catch (e) {
    const why = (e as { stderr?: string }).stderr?.trim() || (e as Error).message;
    throw new UnavailableError(`--floors: ${cmd} ${args.join(" ")} failed: ${why}`);
  }
  return parseFloors(out);
}

/** The header line bench prints. */
export function floorsLine(f: Floors): string {
  const mib = f.bytes >= 1 << 20 ? `${f.bytes / (1 << 20)} MiB` : `${f.bytes} B`;
  return (
    `# floors (C on this machine, 2 ranks, median of ${f.reps}): MPI ping-pong ${f.pingPongUs.toFixed(2)} us (half round trip, 8 B); ` +
    `at ${mib}: MPI_Sendrecv ${f.sendrecvGBps.toFixed(2)} GB/s, memcpy ${f.memcpyGBps.toFixed(2)} GB/s, float32 sum ${f.sumFloat32GBps.toFixed(2)} GB/s`
  );
}
