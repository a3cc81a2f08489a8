/**
 * Runs one row of the fault catalogue (table.ts) as a user would: `cclab run` (or mpirun, or a
 * rank started by hand) as child processes, every process of the job marked with an environment
 * variable so that afterwards the runner can tell whether any of them survived. Shared by the
 * catalogue test and by the script that regenerates docs/faults.md with measured times.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { underLoad } from "../support/load.js";

export type Backend = "sim" | "mpi";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = "src/cli/bin.js";
export const SCENARIO = "test/faults/programs/scenario.ts";

export interface Outcome {
  readonly code: number | null;
  readonly signal: string | null;
  readonly out: string;
  readonly err: string;
  /** From start to the exit of the process the row watches (or to the last one gone, for custom rows). */
  readonly seconds: number;
  /** Processes of the job still running once it ended (pid: command line). */
  readonly survivors: readonly string[];
  /** The runner had to kill the job: it ran past its hard limit. */
  readonly hung: boolean;
}

/** Processes whose environment carries this row's marker, and are not zombies. */
export function marked(marker: string, except: readonly number[] = []): string[] {
  const out: string[] = [];
  const needle = `CCLAB_FAULT_ROW=${marker}\0`;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || except.includes(Number(name))) continue;
    try {
      if (!readFileSync(`/proc/${name}/environ`, "latin1").includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      out.push(`${name}: ${readFileSync(`/proc/${name}/cmdline`, "latin1").replace(/\0/g, " ").slice(0, 120)}`);
    } catch {
      // Gone while we looked.
    }
  }
  return out;
}

/** SIGKILLs what a failed row left, so one row's leftovers cannot disturb the next. */
export function reap(marker: string): void {
  for (const line of marked(marker)) {
    try {
      process.kill(Number(line.split(":")[0]), "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** Polls until no marked process is left (there is no event for an unrelated process's exit), up to ms. */
export async function gone(marker: string, ms: number, except: readonly number[] = []): Promise<string[]> {
  // Processes ending is a verdict like any other: its bound grows with the load (test/support/load.ts).
  const end = Date.now() + underLoad(ms);
  for (;;) {
    const left = marked(marker, except);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function newMarker(id: string): string {
  return `${id}-${randomBytes(4).toString("hex")}`;
}

export interface Started {
  readonly child: ChildProcess;
  readonly marker: string;
  readonly started: number;
  out: string;
  err: string;
  /** Resolves once the output contains `text` `times` times (or the process ended). */
  waitFor(text: string, times?: number): Promise<boolean>;
  /** Resolves when the process exits, or after hardMs, killing its process group then. */
  done(hardMs: number): Promise<Outcome>;
}

/** Starts a command with the row's marker in its environment, in its own process group. */
export function start(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, marker: string): Started {
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, CCLAB_FAULT_ROW: marker },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const started = Date.now();
  const s: Started = {
    child,
    marker,
    started,
    out: "",
    err: "",
    waitFor: (text, times = 1) =>
      new Promise((resolve) => {
        const count = () => (s.out + s.err).split(text).length - 1;
        if (count() >= times) return resolve(true);
        const check = () => {
          if (count() >= times) {
            off();
            resolve(true);
          }
        };
        const ended = () => {
          off();
          resolve(count() >= times);
        };
        const off = () => {
          child.stdout!.off("data", check);
          child.stderr!.off("data", check);
          child.off("close", ended);
        };
        child.stdout!.on("data", check);
        child.stderr!.on("data", check);
        child.on("close", ended);
      }),
    done: (hardMs) =>
      new Promise((resolve) => {
        let hung = false;
        const hard = setTimeout(() => {
          hung = true;
          try {
            process.kill(-child.pid!, "SIGKILL");
          } catch {
            // Gone.
          }
          reap(marker);
        }, hardMs);
        const finish = async (code: number | null, signal: string | null) => {
          clearTimeout(hard);
          const seconds = (Date.now() - started) / 1000;
          // The job's processes get a moment to go (a rank's watchdog acts within 200 ms).
          const survivors = await gone(marker, 3000);
          reap(marker);
          resolve({ code, signal, out: s.out, err: s.err, seconds, survivors, hung });
        };
        if (child.exitCode !== null || child.signalCode !== null) void finish(child.exitCode, child.signalCode);
        else child.on("close", (code, signal) => void finish(code, signal));
      }),
  };
  child.stdout!.on("data", (d: Buffer) => (s.out += d.toString("utf8")));
  child.stderr!.on("data", (d: Buffer) => (s.err += d.toString("utf8")));
  return s;
}

/** `cclab run -n N --backend B [flags] scenario.ts name [args]`. */
export function cclabRun(
  backend: Backend,
  n: number | string,
  flags: readonly string[],
  scenario: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  marker: string,
): Started {
  return start(
    process.execPath,
    [CLI, "run", "-n", String(n), "--backend", backend, ...flags, SCENARIO, scenario, ...args],
    env,
    marker,
  );
}

/** A TCP server that is not a cclab store: it says `greeting` (or nothing) and holds the connection. */
export async function fakePeer(greeting?: string): Promise<{ port: number; close(): Promise<void> }> {
  const held = new Set<Socket>();
  const server: Server = createServer((s) => {
    held.add(s);
    s.on("error", () => {});
    s.on("close", () => held.delete(s));
    s.resume();
    if (greeting !== undefined) s.write(greeting);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of held) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A port nothing listens on (bound once by the kernel's choice, then released). */
export async function freePort(): Promise<number> {
  const p = await fakePeer();
  await p.close();
  return p.port;
}

/** A limit on how many rows run at once (each job is several processes on a 2-core machine). */
export class Slots {
  private free: number;
  private readonly queue: (() => void)[] = [];
  constructor(n: number) {
    this.free = n;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((r) => this.queue.push(r));
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.free++;
    }
  }
}
