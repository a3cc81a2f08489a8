/**
 * `cclab run -n N [--backend sim|mpi|nccl] program.ts [args...]`: torchrun for cclab programs
 * (modules exporting main(comm, args)). Started inside an existing job (RANK/WORLD_SIZE, mpirun's
 * or srun's variables), it runs only this process's rank.
 */
import { type Command, Option } from "commander";
import { InvalidArgumentError } from "../core/errors.js";
import { insideJob, readJobEnv } from "../runtime/env.js";
import { BACKENDS, type LaunchBackend, launch } from "../runtime/launch.js";
import { SEMANTICS } from "../sim/index.js";
import { LABEL_MODES, type LabelMode } from "../viz/labels.js";
import { runTrace } from "./run-trace.js";

interface RunFlags {
  nprocPerNode: string;
  backend: LaunchBackend;
  nnodes: string;
  nodeRank: string;
  masterAddr?: string;
  masterPort?: string;
  timeout?: string;
  check?: boolean;
  fault: string[];
  grace: string;
  trace?: string;
  format?: string;
  labels: LabelMode;
  semantics?: string;
  seed?: string;
}

/** A count as the user typed it: decimal digits only ('', '0x3', '3e0', ' 3 ' are refused, not read as numbers). */
function int(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,9}$/.test(v)) {
    throw new InvalidArgumentError({ op: "run", arg: flag }, `must be a decimal integer, got ${JSON.stringify(v)}`);
  }
  return Number(v);
}

/** Seconds as decimal digits (with a fraction), positive and finite: 'Infinity' and '1e9' are refused. */
function seconds(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d{1,12}(\.\d{1,6})?$/.test(v) ? Number(v) : Number.NaN;
  if (!(n > 0)) {
    const why = /^\+?inf/i.test(v) ? " (there is no 'wait forever': give a long finite timeout)" : "";
    throw new InvalidArgumentError(
      { op: "run", arg: flag },
      `must be a positive number of seconds, got ${JSON.stringify(v)}${why}`,
    );
  }
  return n * 1000;
}

/** --trace, --semantics and --seed: what launch gets, and the trace written after the run. */
function runTraceOptions(program: string, flags: RunFlags) {
  const sim = flags.backend === "sim";
  for (const [flag, v] of [
    ["--semantics", flags.semantics],
    ["--seed", flags.seed],
  ] as const) {
    if (v !== undefined && !sim) {
      throw new InvalidArgumentError(
        { op: "run", arg: flag },
        `is for --backend sim (the simulator), not ${flags.backend}`,
      );
    }
  }
  if (flags.format && !flags.trace) {
    throw new InvalidArgumentError({ op: "run", arg: "--format" }, "is the format of --trace's file; give --trace too");
  }
  return runTrace({
    program,
    backend: flags.backend,
    nranks: int("-n", flags.nprocPerNode)!,
    file: flags.trace,
    format: flags.format,
    labels: flags.labels,
    semantics: flags.semantics,
    seed: int("--seed", flags.seed),
  });
}

export async function runCommand(program: string, args: string[], flags: RunFlags): Promise<number> {
  if (insideJob() && (flags.trace || flags.semantics || flags.seed)) {
    throw new InvalidArgumentError(
      { op: "run", arg: flags.trace ? "--trace" : flags.semantics ? "--semantics" : "--seed" },
      "needs cclab run to launch the ranks itself (not inside an existing job)",
    );
  }
  if (insideJob()) {
    // Someone else (mpirun, srun, torchrun) started the ranks: be this one rank.
    if (flags.backend === "sim") {
      throw new InvalidArgumentError(
        { op: "run", arg: "--backend" },
        "inside an existing job, use a process backend (mpi or nccl)",
      );
    }
    const n = int("-n", flags.nprocPerNode)!;
    const job = readJobEnv();
    if (n !== job.size) {
      throw new InvalidArgumentError(
        { op: "run", arg: "-n" },
        `cclab run -n ${n}, but ${job.source} started ${job.size} ranks: inside a job, -n must match its size`,
      );
    }
    process.env.CCLAB_BACKEND = flags.backend;
    if (flags.timeout) process.env.CCLAB_TIMEOUT = String(seconds("--timeout", flags.timeout)! / 1000);
    if (flags.check) process.env.CCLAB_CHECK = "1";
    if (flags.fault.length) process.env.CCLAB_FAULT = flags.fault.join(";");
    const { runWorker } = await import("../runtime/worker.js");
    return runWorker([program, ...args]);
  }
  const opts = runTraceOptions(program, flags);
  const result = await launch({
    nprocs: int("-n", flags.nprocPerNode)!,
    backend: flags.backend,
    program,
    args,
    nnodes: int("--nnodes", flags.nnodes),
    nodeRank: int("--node-rank", flags.nodeRank),
    masterAddr: flags.masterAddr,
    masterPort: int("--master-port", flags.masterPort),
    timeoutMs: seconds("--timeout", flags.timeout),
    check: flags.check,
    faults: flags.fault,
    graceMs: seconds("--grace", flags.grace),
    ...opts.launch,
  });
  if (result.exitCode !== 0) process.stderr.write(`${result.summary}\n`);
  // Written whether or not the run succeeded: a deadlocked or failed run is what one wants to see.
  await opts.finish();
  return result.exitCode;
}

export function registerRun(program: Command): void {
  // The program's own flags after its path belong to it, not to cclab run.
  program.enablePositionalOptions();
  program
    .command("run")
    .description("run a cclab program (a module exporting main(comm, args)) on N ranks, as torchrun does")
    .argument("<program>", "the program module, e.g. examples/allreduce.ts")
    .argument("[args...]", "passed to main(comm, args)")
    .requiredOption("-n, --nproc-per-node <n>", "ranks (per node)")
    .addOption(new Option("--backend <name>", "where the ranks run").choices([...BACKENDS]).default("sim"))
    .option("--nnodes <n>", "nodes in the job (nccl)", "1")
    .option("--node-rank <k>", "this node's index", "0")
    .option("--master-addr <host>", "the node hosting the rendezvous store (MASTER_ADDR)")
    .option("--master-port <port>", "its port (MASTER_PORT); default a free port on one node, 29500 across nodes")
    .option("--timeout <seconds>", "per blocking operation (CCLAB_TIMEOUT; default 300)")
    .option("--check", "checked mode: ranks compare each collective's call before moving data (CCLAB_CHECK=1)")
    .option(
      "--fault <spec>",
      "inject a fault: kill:rank=R,at=K | delay:rank=R,ms=M[,at=K] | count:rank=R,delta=D (repeatable; CCLAB_FAULT)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option("--grace <seconds>", "after the first failure, how long the others get before they are killed", "5")
    .option(
      "--trace <file>",
      "record every collective and p2p call: .html (step-through page), .svg, .json (--format perfetto for Perfetto)",
    )
    .addOption(
      new Option("--format <fmt>", "--trace's format instead of its extension").choices([
        "html",
        "svg",
        "json",
        "perfetto",
      ]),
    )
    .addOption(
      new Option("--labels <mode>", "--trace pictures' message labels").choices([...LABEL_MODES]).default("auto"),
    )
    .addOption(new Option("--semantics <s>", "sim: when a send completes").choices([...SEMANTICS]))
    .option("--seed <n>", "sim: the scheduler's seed (the same seed replays the same interleaving; default 1)")
    .passThroughOptions()
    .action(async (prog: string, args: string[], flags: RunFlags) => {
      const code = await runCommand(prog, args, flags);
      // The job is over: what its (simulated) ranks left behind, timers or callbacks, must neither
      // keep this process up nor crash it after the summary.
      process.exit(code);
    });
}
