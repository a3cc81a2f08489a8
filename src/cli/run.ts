/**
 * `cclab run -n N [--backend sim|mpi|nccl] program.ts [args...]`: torchrun for cclab programs
 * (modules exporting main(comm, args)), with torchrun's flag names (--nproc-per-node or
 * --nproc_per_node, --nnodes, --node-rank, --master-addr, --master-port, --standalone,
 * --rdzv-endpoint) and mpirun's (--np, --hostfile). Started inside an existing job
 * (RANK/WORLD_SIZE, mpirun's or srun's variables), it runs only this process's rank.
 */
import { type Command, Option } from "commander";
import { InvalidArgumentError } from "../core/errors.js";
import { insideJob, readJobEnv } from "../runtime/env.js";
import { BACKENDS, type LaunchBackend, launch } from "../runtime/launch.js";
import { SEMANTICS } from "../sim/index.js";
import { LABEL_MODES, type LabelMode } from "../viz/labels.js";
import { jsonOption } from "./options.js";
import { runTrace } from "./run-trace.js";

interface RunFlags {
  nranks?: string;
  nprocPerNode?: string;
  nproc_per_node?: string;
  np?: string;
  backend: LaunchBackend;
  nnodes: string;
  nodeRank?: string;
  node_rank?: string;
  masterAddr?: string;
  master_addr?: string;
  masterPort?: string;
  master_port?: string;
  rdzvEndpoint?: string;
  rdzv_endpoint?: string;
  standalone?: boolean;
  hostfile?: string;
  timeout?: string;
  check?: boolean;
  fault: string[];
  grace: string;
  trace?: string;
  format?: string;
  labels: LabelMode;
  semantics?: string;
  seed?: string;
  topology?: string;
  placement?: string;
  json?: boolean;
}

/** One value given under any of its names (torchrun accepts dashes and underscores); two different ones are an error. */
function oneOf(named: Record<string, string | undefined>): [string, string] | undefined {
  const given = Object.entries(named).filter((e): e is [string, string] => e[1] !== undefined);
  const values = new Set(given.map(([, v]) => v));
  if (values.size > 1) {
    throw new InvalidArgumentError(
      { op: "run", arg: given[1]![0] },
      `says ${given[1]![1]}, but ${given[0]![0]} says ${given[0]![1]}: they name the same setting`,
    );
  }
  return given[0];
}

/** The run's settings, from whichever of torchrun's, mpirun's or cclab's names the user typed. */
interface Resolved {
  /** Ranks per node (the -n flag's text as typed, for its checks). */
  perNode: string;
  perNodeFlag: string;
  nnodes: string;
  nodeRank?: string;
  masterAddr?: string;
  masterPort?: string;
}

function resolveFlags(f: RunFlags): Resolved {
  const n = oneOf({ "-n": f.nranks, "--nproc-per-node": f.nprocPerNode, "--nproc_per_node": f.nproc_per_node });
  const np = f.np;
  let perNode = n;
  if (np !== undefined) {
    // mpirun's -np counts every rank; with --nnodes, each node gets its share.
    const total = int("--np", np)!;
    const nodes = int("--nnodes", f.nnodes)!;
    if (nodes < 1 || total % nodes !== 0) {
      throw new InvalidArgumentError({ op: "run", arg: "--np" }, `${total} ranks do not divide over ${nodes} nodes`);
    }
    const mine: [string, string] = ["--np", String(total / nodes)];
    if (n && int(n[0], n[1]) !== total / nodes) {
      throw new InvalidArgumentError(
        { op: "run", arg: "--np" },
        `${np} ranks in all, but ${n[0]} says ${n[1]} per node`,
      );
    }
    perNode = n ?? mine;
  }
  if (!perNode) {
    throw new InvalidArgumentError(
      { op: "run", arg: "-n" },
      "is required: the number of ranks (per node), e.g. cclab run -n 4 prog.ts (also --nproc-per-node, torchrun's name)",
    );
  }
  let masterAddr = oneOf({ "--master-addr": f.masterAddr, "--master_addr": f.master_addr })?.[1];
  let masterPort = oneOf({ "--master-port": f.masterPort, "--master_port": f.master_port })?.[1];
  const rdzv = oneOf({ "--rdzv-endpoint": f.rdzvEndpoint, "--rdzv_endpoint": f.rdzv_endpoint });
  if (rdzv) {
    // torchrun's host:port of the rendezvous: here, the store's.
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(rdzv[1]);
    if (!m)
      throw new InvalidArgumentError(
        { op: "run", arg: rdzv[0] },
        `must be host[:port], got ${JSON.stringify(rdzv[1])}`,
      );
    if (masterAddr !== undefined || masterPort !== undefined) {
      throw new InvalidArgumentError(
        { op: "run", arg: rdzv[0] },
        "names the master too: give it or --master-addr/--master-port",
      );
    }
    masterAddr = m[1]!.replace(/^\[|\]$/g, "");
    masterPort = m[2];
  }
  if (f.standalone) {
    if (f.nnodes !== "1" || masterAddr !== undefined || masterPort !== undefined) {
      throw new InvalidArgumentError(
        { op: "run", arg: "--standalone" },
        "is one node with a store on a free local port: it goes with neither --nnodes > 1 nor a master",
      );
    }
  }
  return {
    perNode: perNode[1],
    perNodeFlag: perNode[0],
    nnodes: f.nnodes,
    nodeRank: oneOf({ "--node-rank": f.nodeRank, "--node_rank": f.node_rank })?.[1],
    masterAddr,
    masterPort,
  };
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
function runTraceOptions(program: string, flags: RunFlags, nranks: number) {
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
    nranks,
    file: flags.trace,
    format: flags.format,
    labels: flags.labels,
    semantics: flags.semantics,
    seed: int("--seed", flags.seed),
  });
}

export async function runCommand(program: string, args: string[], flags: RunFlags): Promise<number> {
  const r = resolveFlags(flags);
  const n = int(r.perNodeFlag, r.perNode)!;
  if (flags.placement !== undefined && flags.topology === undefined) {
    throw new InvalidArgumentError(
      { op: "run", arg: "--placement" },
      "places ranks on a topology's hosts: give --topology too (e.g. --topology torus:4x4)",
    );
  }
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
    const job = readJobEnv();
    const nodes = int("--nnodes", r.nnodes)!;
    if (n * nodes !== job.size) {
      throw new InvalidArgumentError(
        { op: "run", arg: "-n" },
        `cclab run -n ${n}${nodes > 1 ? ` --nnodes ${nodes}` : ""}, but ${job.source} started ${job.size} ranks: inside a job, -n must match its size`,
      );
    }
    process.env.CCLAB_BACKEND = flags.backend;
    if (flags.timeout) process.env.CCLAB_TIMEOUT = String(seconds("--timeout", flags.timeout)! / 1000);
    if (flags.check) process.env.CCLAB_CHECK = "1";
    if (flags.fault.length) process.env.CCLAB_FAULT = flags.fault.join(";");
    if (flags.topology !== undefined) process.env.CCLAB_TOPOLOGY = flags.topology;
    if (flags.placement !== undefined) process.env.CCLAB_PLACEMENT = flags.placement;
    const { runWorker } = await import("../runtime/worker.js");
    return runWorker([program, ...args]);
  }
  const opts = runTraceOptions(program, flags, n);
  const result = await launch({
    nprocs: n,
    backend: flags.backend,
    program,
    args,
    nnodes: int("--nnodes", r.nnodes),
    nodeRank: int("--node-rank", r.nodeRank),
    masterAddr: r.masterAddr,
    masterPort: int("--master-port", r.masterPort),
    hostfile: flags.hostfile,
    timeoutMs: seconds("--timeout", flags.timeout),
    check: flags.check,
    faults: flags.fault,
    graceMs: seconds("--grace", flags.grace),
    topology: flags.topology,
    placement: flags.placement,
    ...opts.launch,
  });
  if (result.exitCode !== 0) process.stderr.write(`${result.summary}\n`);
  // Written whether or not the run succeeded: a deadlocked or failed run is what one wants to see.
  await opts.finish();
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          exitCode: result.exitCode,
          seconds: result.seconds,
          ...(result.failure ? { failure: result.failure } : {}),
          exits: result.exits,
        },
        null,
        2,
      )}\n`,
    );
  }
  return result.exitCode;
}

export function registerRun(program: Command): void {
  // The program's own flags after its path belong to it, not to cclab run.
  program.enablePositionalOptions();
  const hidden = (flags: string, description: string) => new Option(flags, description).hideHelp();
  program
    .command("run")
    .description("run a cclab program (a module exporting main(comm, args)) on N ranks, as torchrun does")
    .argument("<program>", "the program module, e.g. examples/allreduce.ts")
    .argument("[args...]", "passed to main(comm, args)")
    .option("-n, --nranks <n>", "ranks (per node, with --nnodes)")
    .option("--nproc-per-node <n>", "torchrun's name for -n (also --nproc_per_node)")
    .addOption(hidden("--nproc_per_node <n>", "torchrun's spelling of --nproc-per-node"))
    .option("--np <n>", "mpirun's name: ranks in all (divided over --nnodes)")
    .addOption(new Option("--backend <name>", "where the ranks run").choices([...BACKENDS]).default("sim"))
    .option(
      "--nnodes <n>",
      "nodes in the job (mpi: from one cclab run with --hostfile; nccl: one cclab run per node)",
      "1",
    )
    .option("--node-rank <k>", "this node's index (nccl; also --node_rank)")
    .addOption(hidden("--node_rank <k>", "torchrun's spelling"))
    .option("--master-addr <host>", "the node hosting the rendezvous store (MASTER_ADDR; also --master_addr)")
    .addOption(hidden("--master_addr <host>", "torchrun's spelling"))
    .option(
      "--master-port <port>",
      "its port (MASTER_PORT; also --master_port); default a free port on one node, 29500 across nodes",
    )
    .addOption(hidden("--master_port <port>", "torchrun's spelling"))
    .option(
      "--rdzv-endpoint <host[:port]>",
      "torchrun's rendezvous endpoint: the same as --master-addr and --master-port",
    )
    .addOption(hidden("--rdzv_endpoint <host[:port]>", "torchrun's spelling"))
    .option("--standalone", "torchrun's single node with a store on a free local port (the default here)")
    .option("--hostfile <file>", "mpi: mpirun's hostfile; every node's ranks start from this one cclab run")
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
      "--topology <spec>",
      "the machine, as cclab model takes it (torus:4x4, mesh:2x4x2, ring:8, rail:2x4, ...): the world comm's collectives give an algorithm that reads the shape (Swing on a torus or mesh) its shape, every other one the flat rank line (CCLAB_TOPOLOGY)",
    )
    .option(
      "--placement <how>",
      "with --topology: ranks on hosts, block (default), round-robin or file:PATH (CCLAB_PLACEMENT)",
    )
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
    .addOption(jsonOption())
    .passThroughOptions()
    .action(async (prog: string, args: string[], flags: RunFlags) => {
      const code = await runCommand(prog, args, flags);
      // The job is over: what its (simulated) ranks left behind, timers or callbacks, must neither
      // keep this process up nor crash it after the summary.
      process.exit(code);
    });
}
