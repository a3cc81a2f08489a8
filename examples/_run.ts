/**
 * What every example shares: its print (per-rank lines, in rank order on sim), and "run me
 * directly" (`npx tsx examples/x.ts [--backend sim|mpi|nccl] [-n 4] [args...]`). An example is a
 * cclab program — `export async function main(comm, args)` — so `cclab run` runs it unchanged.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Comm } from "../src/index.js";
import { type SimOptions, spawn } from "../src/sim/index.js";

export type Main = (comm: Comm, args?: string[]) => Promise<void>;
/** Python's print: the parts joined by spaces, one line (which may hold newlines). */
export type Print = (...parts: unknown[]) => void;

const sinks = new WeakMap<Comm, (line: string) => void>();

/**
 * The print an example uses on `comm` (its world comm): into the per-rank sink runSim set, or
 * straight to the console where there is none (cclab run, which prefixes each rank's lines).
 */
export function printer(comm: Comm): Print {
  return (...parts) => {
    const line = parts.map(String).join(" ");
    const sink = sinks.get(comm);
    if (sink) sink(line);
    else console.log(line);
  };
}

/**
 * Runs `main` on `n` simulated ranks and returns each rank's printed lines, in rank order. The
 * lines are collected as they are printed, so they are also in `out` when a rank fails.
 */
export async function runSim(
  main: Main,
  n = 4,
  args: string[] = [],
  options: SimOptions = {},
  out: string[][] = [],
): Promise<string[][]> {
  for (let r = 0; r < n; r++) out[r] ??= [];
  await spawn(
    n,
    (comm) => {
      sinks.set(comm, (line) => out[comm.rank]!.push(line));
      return main(comm, args);
    },
    options,
  );
  return out;
}

interface Flags {
  backend: string;
  n: number;
  rest: string[];
}

function parseFlags(argv: readonly string[]): Flags {
  const flags: Flags = { backend: "sim", n: 4, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--backend") flags.backend = value();
    else if (a.startsWith("--backend=")) flags.backend = a.slice("--backend=".length);
    else if (a === "-n" || a === "--nproc") flags.n = Number(value());
    else flags.rest.push(a);
  }
  if (!["sim", "mpi", "nccl"].includes(flags.backend)) {
    throw new Error(`--backend must be sim, mpi or nccl, got '${flags.backend}'`);
  }
  if (!Number.isInteger(flags.n) || flags.n < 1) throw new Error(`-n must be a positive integer, got ${flags.n}`);
  return flags;
}

/** Runs the example from the command line; resolves with the exit code. */
export async function runCli(script: string, main: Main, argv: readonly string[]): Promise<number> {
  const flags = parseFlags(argv);
  if (flags.backend === "sim") {
    const out: string[][] = [];
    try {
      await runSim(main, flags.n, flags.rest, {}, out);
    } finally {
      // Rank order, whatever order the ranks printed in (the seeds' output interleaves).
      for (const lines of out) for (const l of lines) console.log(l);
    }
    return 0;
  }
  const { insideJob } = await import("../src/runtime/env.js");
  if (!insideJob()) {
    console.error(
      `--backend ${flags.backend} runs one process per rank; start them with\n` +
        `  npx cclab run -n ${flags.n} --backend ${flags.backend} ${script}${flags.rest.map((a) => ` ${a}`).join("")}`,
    );
    return 2;
  }
  // Started as one rank of a job (mpirun, srun, torchrun-style variables): join it.
  const { init, finalize } = await import("../src/runtime/init.js");
  const comm = await init({ backend: flags.backend });
  try {
    await main(comm, flags.rest);
  } catch (e) {
    await finalize(comm, e);
    throw e;
  }
  await finalize(comm);
  return 0;
}

/** Call at the bottom of an example: runs it when it is the script node/tsx was started with. */
export function runIfMain(url: string, main: Main): void {
  const entry = process.argv[1];
  const self = fileURLToPath(url);
  if (!entry || (resolve(entry) !== self && resolve(entry) !== self.replace(/\.ts$/, ""))) return;
  const script = `examples/${self.split(/[\\/]/).pop()}`;
  runCli(script, main, process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
      process.exitCode = 1;
    },
  );
}
