/**
 * `cclab trace <collective> --algorithm <name> -n 4 [-o out.svg|out.html|out.json]`: runs the
 * collective with a Trace recorder and draws its time-space diagram, or prints bytes per rank
 * per step beside the algorithm's formula. `cclab trace deadlock [-o x.svg|x.dot]` runs seed
 * 003's send-send deadlock and draws its wait-for cycle.
 *
 * The pictures read only TraceEvents, so every backend draws the same way. sim records its own
 * trace (logical ticks); `--backend mpi` relaunches this command under mpirun, each rank runs
 * the collective through a TracingComm (src/tracing.ts, microseconds on a clock the ranks share)
 * and writes its events to a temporary directory, and this process merges and draws them.
 * Started inside an MPI job yourself (mpirun -n 4 cclab trace ... --backend mpi), the ranks
 * gather their events to rank 0, which draws them.
 */
import { spawn as spawnProcess, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { allocate, invoke } from "../collectives/dispatch.js";
import { allGatherObject } from "../collectives/objects.js";
import type { Comm } from "../comm.js";
import { view, zeros } from "../core/buffer.js";
import { dtypeInfo } from "../core/dtype.js";
import { DeadlockError, InvalidArgumentError } from "../core/errors.js";
import { parseTopology, placeRanks } from "../model/network/index.js";
import { insideJob } from "../runtime/env.js";
import { nodeArgv, ownModule } from "../runtime/user-module.js";
import type { Algorithm } from "../schedule/dsl.js";
import { explainCall, explainCallFor } from "../schedule/explain.js";
import { spawn } from "../sim/index.js";
import { rankCall } from "../specs/index.js";
import type { RankCall } from "../specs/types.js";
import { Trace, type TraceEvent } from "../trace.js";
import { mergeTraces, withTracing } from "../tracing.js";
import { selectAlgorithms } from "../verify/load.js";
import { deadlockSvg } from "../viz/deadlock.js";
import { LABEL_MODES, type LabelMode } from "../viz/labels.js";
import { PAGE_MAX_RANKS, pageNetwork } from "../viz/network.js";
import { pageView } from "../viz/page.js";
import type { PageView } from "../viz/page-data.js";
import { eventNotes, stepThrough } from "../viz/steps.js";
import { traceTable } from "../viz/table.js";
import { jsonOption, nranksOption, outputOption, parsers, printJson, TOOL_MAX_RANKS } from "./options.js";
import { absolutePlacement, bindTopology } from "./topology-shape.js";
import { OUTPUT_FORMATS, outputFormat, write, writeTrace, wroteToStderr } from "./trace-output.js";

export interface TraceCall {
  readonly size: number;
  readonly count: number;
  readonly root: number;
  readonly segment: number;
  /** sim's seed: the same seed gives the same interleaving and trace. */
  readonly seed?: number;
}

/** Why --backend nccl cannot trace here (the message names what it would need). */
export async function ncclTraceMessage(): Promise<string> {
  const need = "cclab trace --backend nccl needs a GPU machine with the nccl backend";
  // The nccl backend may not be in this build; a computed specifier keeps tsc from requiring it.
  const spec = "../backends/nccl/index.js";
  let why: string;
  try {
    const m = (await import(spec)) as {
      ncclAvailable?: () => { ok: boolean; reason?: string; hint?: string };
    };
    const a = typeof m.ncclAvailable === "function" ? m.ncclAvailable() : undefined;
    if (!a) why = "this build's nccl backend does not say whether it can run (no ncclAvailable())";
    else if (!a.ok) why = `${a.reason ?? "unavailable"}${a.hint ? `; to get it: ${a.hint}` : ""}`;
    else
      why =
        "nccl is available here, but cclab trace does not launch nccl ranks yet (the TracingComm in src/tracing.ts would record host enqueue times there, not device times)";
  } catch (e) {
    const code = (e as { code?: string }).code;
    why =
      code === "ERR_MODULE_NOT_FOUND"
        ? "this build has no nccl backend (src/backends/nccl)"
        : `the nccl backend failed to load: ${e instanceof Error ? e.message : String(e)}`;
  }
  return `${need}: ${why}. Use --backend sim, or --backend mpi where MPI is installed.`;
}

/** The call `cclab trace` makes by default: explain's, one element per chunk, so pictures stay small. */
export function defaultTraceCall(alg: Algorithm, size: number): TraceCall {
  const a = explainCall(alg, size);
  return { size, count: a.count, root: a.root, segment: a.segment };
}

/** This rank's call: explain's (alltoallv's split matrix is the one its step table shows), the spec's dtype. */
export function shapeFor(alg: Algorithm, call: TraceCall, rank: number): RankCall {
  return rankCall({ ...explainCall(alg, call.size), count: call.count, root: call.root, segment: call.segment }, rank);
}

/** Runs one collective on the sim backend with a Trace recorder and returns its events. */
export async function traceOnSim(alg: Algorithm, call: TraceCall): Promise<TraceEvent[]> {
  const trace = new Trace();
  await spawn(
    call.size,
    async (comm: Comm) => {
      const c = shapeFor(alg, call, comm.rank);
      await invoke(comm, c, alg, allocate(comm, c));
    },
    { trace, seed: call.seed ?? 1 },
  );
  return trace.events;
}

/**
 * One mpi rank's part: runs the call once untraced (warm-up: connections, JIT), meets the
 * others at MPI_Barrier, then runs it again through a TracingComm and returns its events.
 */
async function traceThisMpiRank(alg: Algorithm, call: TraceCall): Promise<{ comm: Comm; events: TraceEvent[] }> {
  const { initMpi } = await import("../backends/mpi/index.js");
  const world = await initMpi();
  if (world.size !== call.size) {
    throw new Error(`-n ${call.size}, but this MPI job has ${world.size} ranks`);
  }
  const c = shapeFor(alg, call, world.rank);
  const b = allocate(world, c);
  // The algorithm itself, not its name: with --topology it is bound to the machine.
  await invoke(world, c, alg, b);
  world.builtin.barrier();
  const trace = new Trace();
  await invoke(withTracing(world, trace), c, alg, b);
  return { comm: world, events: trace.events };
}

export type MpiAvailability = { ok: true } | { ok: false; reason: string; hint: string };

/** Whether `cclab trace --backend mpi` can launch here: the addon's MPI and mpirun on PATH. */
export async function mpiTraceAvailable(): Promise<MpiAvailability> {
  const { mpiAvailable, MPI_HINT } = await import("../backends/mpi/index.js");
  const a = mpiAvailable();
  if (!a.ok) return a;
  if (spawnSync("mpirun", ["--version"], { stdio: "ignore" }).status !== 0)
    return { ok: false, reason: "mpirun is not on PATH", hint: MPI_HINT };
  return { ok: true };
}

/** Where the algorithm comes from, repeated on the ranks' command line. */
export interface AlgorithmSource {
  readonly algorithm?: string;
  readonly algorithmFile?: string;
  /** --topology and --placement, which every rank binds the algorithm to. */
  readonly topology?: string;
  readonly placement?: string;
}

/**
 * Runs the call on call.size mpi ranks: relaunches this CLI under mpirun with a temporary
 * directory, each rank writes rank-<k>.json there, and the merged events come back with times
 * in microseconds from the first post.
 */
export async function traceOnMpi(alg: Algorithm, call: TraceCall, source: AlgorithmSource): Promise<TraceEvent[]> {
  const avail = await mpiTraceAvailable();
  if (!avail.ok) throw new Error(`mpi backend unavailable: ${avail.reason}; to get it: ${avail.hint}`);
  const { mpirunCommand } = await import("../backends/mpi/index.js");
  const dir = mkdtempSync(join(tmpdir(), "cclab-trace-"));
  try {
    const bin = ownModule("./cclab.ts", import.meta.url);
    const from = source.algorithmFile
      ? [
          "--algorithm-file",
          resolve(source.algorithmFile),
          ...(source.algorithm ? ["--algorithm", source.algorithm] : []),
        ]
      : ["--algorithm", source.algorithm ?? alg.name];
    const argv = nodeArgv(bin, [
      "trace",
      alg.collective,
      ...from,
      ...["--nranks", String(call.size), "--count", String(call.count), "--root", String(call.root)],
      ...["--segment", String(call.segment), "--backend", "mpi", "--trace-dir", dir],
      ...(source.topology !== undefined ? ["--topology", source.topology] : []),
      ...(source.placement !== undefined ? ["--placement", absolutePlacement(source.placement)] : []),
    ]);
    const { cmd, args } = mpirunCommand(call.size, argv);
    const code = await new Promise<number>((done, fail) => {
      const child = spawnProcess(cmd, args, { stdio: ["ignore", "inherit", "inherit"] });
      child.on("error", fail);
      child.on("close", (c, signal) => done(c ?? (signal ? 128 : 1)));
    });
    if (code !== 0) throw new Error(`the ranks under mpirun failed (exit ${code}); their output is above`);
    const parts = Array.from({ length: call.size }, (_, r) => {
      const file = join(dir, `rank-${r}.json`);
      try {
        return JSON.parse(readFileSync(file, "utf8")) as TraceEvent[];
      } catch (e) {
        throw new Error(`rank ${r} left no trace (${file}): ${e instanceof Error ? e.message : String(e)}`);
      }
    });
    return mergeTraces(parts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The tutorial's wrong example on n ranks: each sends to the next, then receives from the previous (n = 2: both send first). */
export async function sendSendDeadlock(n: number, trace?: Trace): Promise<DeadlockError> {
  const results = await spawn(
    n,
    async (c: Comm): Promise<DeadlockError | undefined> => {
      try {
        await c.send(view(zeros("float32", 2)), (c.rank + 1) % c.size, { label: "exchange" });
        await c.recv(view(zeros("float32", 2)), (c.rank + c.size - 1) % c.size, { label: "exchange" });
        return undefined;
      } catch (e) {
        if (e instanceof DeadlockError) return e;
        throw e;
      }
    },
    { semantics: "nccl", ...(trace ? { trace } : {}) },
  );
  const err = results.find((e) => e !== undefined);
  if (!err) throw new Error(`the send-send example did not deadlock on ${n} ranks`);
  return err;
}

interface TraceOptions {
  algorithm?: string;
  algorithmFile?: string;
  nranks?: number;
  /** The old spelling of --nranks. */
  size?: number;
  count?: number;
  root: number;
  segment?: number;
  seed?: number;
  backend: string;
  output?: string;
  format?: string;
  labels: LabelMode;
  json?: boolean;
  /** The machine the page draws beside the diagram (network model syntax), and where ranks sit on it. */
  topology?: string;
  placement?: string;
  /** Hidden: set by the mpi launch; this process is one rank and writes its events there. */
  traceDir?: string;
}

async function traceDeadlock(o: TraceOptions): Promise<number> {
  const n = Math.max(2, o.nranks ?? o.size ?? 2);
  const trace = new Trace();
  const err = await sendSendDeadlock(n, trace);
  if (o.json) {
    printJson({
      deadlock: { message: err.message, cycle: err.cycle, blocked: err.blocked },
      nranks: n,
      unit: "tick",
      events: trace.events,
    });
  } else console.log(err.message);
  if (!o.output) {
    if (o.json) return 0;
    console.log("\n(-o deadlock.html, deadlock.svg or deadlock.dot draws the wait-for graph)");
    return 0;
  }
  const format = outputFormat(o.output, o.format, ["svg", "html", "dot", "json", "perfetto"]);
  if (format === "svg") write(o.output, deadlockSvg(err));
  else {
    await writeTrace(o.output, format, {
      title: `the tutorial's send-send deadlock on ${n} simulated ranks (semantics nccl)`,
      size: n,
      unit: "tick",
      events: trace.events,
      deadlocks: trace.deadlocks,
      labels: o.labels,
    });
  }
  return 0;
}

/**
 * The page's algorithm switch: the traced algorithm first, then (on sim) every other algorithm
 * of the collective on the same call, each with explain's steps for that call.
 */
async function algorithmViews(
  alg: Algorithm,
  call: TraceCall,
  events: readonly TraceEvent[],
  where: string,
  unit: string,
  others: readonly Algorithm[],
): Promise<PageView[]> {
  const stepCall = { size: call.size, count: call.count, root: call.root, segment: call.segment };
  const title = (a: Algorithm, on: string) =>
    `${a.collective}/${a.name} on ${on}: n = ${call.size}, count = ${call.count}, root ${call.root}, segment ${call.segment}`;
  const steps = stepThrough(alg, stepCall);
  const views = [await pageView({ name: alg.name, title: title(alg, where), size: call.size, unit, events, steps })];
  for (const a of others) {
    if (a.name === alg.name) continue;
    try {
      const ev = await traceOnSim(a, call);
      const st = stepThrough(a, stepCall);
      views.push(
        await pageView({ name: a.name, title: title(a, "sim"), size: call.size, unit: "tick", events: ev, steps: st }),
      );
    } catch {
      // An algorithm that cannot run this call is left out of the switch.
    }
  }
  return views;
}

/**
 * --topology and --placement: the topology the page draws and, per view, its routes for the pairs
 * that send. Only the page draws it, for at most PAGE_MAX_RANKS ranks.
 */
function networkFor(o: TraceOptions, n: number): (events: readonly TraceEvent[]) => PageView["network"] {
  const format = o.output ? outputFormat(o.output, o.format, ["svg", "html", "json", "perfetto"]) : undefined;
  if (format !== "html") {
    throw new InvalidArgumentError(
      { op: "trace", arg: "--topology" },
      "draws the machine on the step-through page only: write -o <file>.html",
    );
  }
  if (n > PAGE_MAX_RANKS) {
    throw new InvalidArgumentError(
      { op: "trace", arg: "--topology" },
      `the page colours links for at most ${PAGE_MAX_RANKS} ranks, got -n ${n} (cclab model --topology times larger groups)`,
    );
  }
  const t = parseTopology(o.topology as string, n, {});
  const placement = placeRanks(t, n, o.placement);
  return (events) =>
    pageNetwork(
      t,
      placement,
      events.flatMap((e) => (e.kind === "send" && e.peer !== undefined ? [[e.rank, e.peer] as const] : [])),
    );
}

export async function traceCommand(collective: string, o: TraceOptions): Promise<number> {
  wroteToStderr(o.json === true);
  if (collective === "deadlock") return traceDeadlock(o);
  if (o.backend === "nccl") {
    console.error(await ncclTraceMessage());
    return 1;
  }
  if (o.backend !== "sim" && o.backend !== "mpi") {
    console.error(`cclab trace --backend ${o.backend}: unknown backend; use sim, mpi or nccl`);
    return 1;
  }
  if (!o.algorithm && !o.algorithmFile) {
    throw new InvalidArgumentError({ op: "trace", arg: "--algorithm" }, "is required (cclab list names them)");
  }
  const [given] = await selectAlgorithms({ collective, algorithm: o.algorithm, algorithmFile: o.algorithmFile });
  if (!given) return 1;
  // Inside an MPI job someone else started, the job's size is the size.
  const job = o.backend === "mpi" && !o.traceDir && insideJob();
  const env = process.env;
  const jobSize = Number(env.OMPI_COMM_WORLD_SIZE ?? env.PMI_SIZE ?? env.SLURM_NTASKS ?? env.WORLD_SIZE ?? 4);
  // -n, when given, must agree with the job (traceThisMpiRank says so otherwise).
  const size = o.nranks ?? o.size ?? (job ? jobSize : 4);
  const shown = explainCallFor(given, size, { count: o.count, root: o.root, segment: o.segment });
  // The algorithm sees --topology's machine (Swing on a torus), on sim and on every MPI rank.
  const [alg] = (o.topology !== undefined ? bindTopology([given], o, size, "trace") : [given]) as [Algorithm];
  const call: TraceCall = { size, count: shown.count, root: shown.root, segment: shown.segment, seed: o.seed };
  if (call.root >= call.size) {
    throw new InvalidArgumentError({ op: "trace", arg: "--root" }, `${call.root} is not a rank of ${call.size}`);
  }

  // --topology: checked before the run, so a bad spec costs nothing.
  if (o.placement !== undefined && o.topology === undefined) {
    throw new InvalidArgumentError(
      { op: "trace", arg: "--placement" },
      "places ranks on --topology's machine: give --topology too",
    );
  }
  const network = o.topology === undefined || o.traceDir ? undefined : networkFor(o, call.size); // a rank draws nothing

  let events: TraceEvent[];
  let unit = "tick";
  if (o.backend === "sim") events = await traceOnSim(alg, call);
  else if (o.traceDir) {
    // One rank of our own mpirun launch: leave the events for the launcher.
    const mine = await traceThisMpiRank(alg, call);
    writeFileSync(join(o.traceDir, `rank-${mine.comm.rank}.json`), JSON.stringify(mine.events));
    return 0;
  } else if (job) {
    // Started by the user's mpirun: gather to every rank, rank 0 draws.
    const mine = await traceThisMpiRank(alg, call);
    const all = await allGatherObject(mine.comm, mine.events);
    if (mine.comm.rank !== 0) return 0;
    events = mergeTraces(all);
    unit = "µs";
  } else {
    const avail = await mpiTraceAvailable();
    if (!avail.ok) {
      console.error(`cclab trace --backend mpi: mpi backend unavailable: ${avail.reason}`);
      console.error(`to get it: ${avail.hint} (or use --backend sim)`);
      return 1;
    }
    events = await traceOnMpi(alg, call, o); // its algorithm, file, topology and placement
    unit = "µs";
  }
  const where = o.backend === "sim" ? "sim" : `mpi (µs, after one warm-up run)`;
  const title = `${alg.collective}/${alg.name} on ${where}: n = ${call.size}, count = ${call.count}, root ${call.root}, segment ${call.segment}`;
  if (o.json) {
    printJson({
      collective: alg.collective,
      algorithm: alg.name,
      backend: o.backend,
      call: { nranks: call.size, count: call.count, root: call.root, segment: call.segment },
      unit,
      events,
    });
  }
  if (o.output) {
    const format = outputFormat(o.output, o.format, ["svg", "html", "json", "perfetto"]);
    // The page's switch runs the collective's other algorithms too, up to 32 ranks (beyond, each
    // adds seconds and megabytes: trace them one by one).
    const others =
      o.backend === "sim" && call.size <= 32
        ? await selectAlgorithms({ collective, algorithmFile: o.algorithmFile }).catch(() => [alg])
        : [alg];
    // explain's step numbers and each message's regions, for the SVG and Perfetto (the page computes its own).
    const stepCall = { size: call.size, count: call.count, root: call.root, segment: call.segment };
    const notes =
      format === "svg" || format === "perfetto" ? eventNotes(stepThrough(alg, stepCall), events) : undefined;
    await writeTrace(o.output, format, {
      title,
      size: call.size,
      unit,
      events,
      labels: o.labels,
      ...(notes ? { notes } : {}),
      views: async () => {
        const views = await algorithmViews(alg, call, events, where, unit, others);
        return network ? views.map((v) => ({ ...v, network: network(v.events) })) : views;
      },
    });
    return 0;
  }
  if (o.json) return 0;
  const c = shapeFor(alg, call, 0);
  const maxBytes = alg.cost.sent.value(call.size, call.count, c.segment) * dtypeInfo(c.dtype).bytes;
  console.log(title);
  const stepCall = { size: call.size, count: call.count, root: call.root, segment: call.segment };
  const notes = eventNotes(stepThrough(alg, stepCall), events);
  console.log(traceTable(events, call.size, { text: alg.cost.sent.text, maxBytes }, notes));
  console.log("\n(-o trace.svg or trace.html draws the time-space diagram)");
  return 0;
}

export function registerTrace(program: Command): void {
  const p = parsers("trace");
  program
    .command("trace")
    .description(
      "run a collective with a trace and draw its time-space diagram (or bytes per step); 'trace deadlock' draws the tutorial's send-send wait-for cycle",
    )
    .argument("<collective>", "allreduce, broadcast, ... (torch's names too), or 'deadlock'")
    .option("--algorithm <name>", "algorithm name (see cclab list)")
    .option("--algorithm-file <file>", "your own algorithm file")
    .addOption(nranksOption("ranks (default 4; deadlock: 2)", p.int("-n", 1, TOOL_MAX_RANKS)))
    .addOption(
      new Option("--size <n>", "old spelling of --nranks").argParser(p.int("--size", 1, TOOL_MAX_RANKS)).hideHelp(),
    )
    .option("--count <n>", "elements (NCCL's count); default one element per chunk", p.int("--count", 0))
    .option("--root <n>", "root rank", p.int("--root", 0), 0)
    .option(
      "--segment <n>",
      "pipelining segment in elements (default: 1 with the default count; with --count, the front API's)",
      p.int("--segment", 1),
    )
    .option("--seed <n>", "sim scheduler seed", p.int("--seed", -(2 ** 31), 2 ** 31))
    .addOption(
      new Option("--backend <name>", "sim (logical ticks), mpi (microseconds, launched under mpirun) or nccl")
        .choices(["sim", "mpi", "nccl"])
        .default("sim"),
    )
    .addOption(
      outputOption(
        "write .html (the step-through page), .svg, .json (cclab's events; --format perfetto for Perfetto/Chrome), deadlock also .dot",
      ),
    )
    .addOption(
      new Option("--format <fmt>", "output format instead of the file's extension").choices([...OUTPUT_FORMATS]),
    )
    .addOption(
      new Option("--labels <mode>", "message labels: none, auto (where they fit), all")
        .choices([...LABEL_MODES])
        .default("auto"),
    )
    .option(
      "--topology <spec>",
      "with -o x.html: draw this machine beside the diagram and colour the links each step loads (torus:4x4, fattree, rail:2x8, ...; see cclab model --help); on sim and mpi an algorithm that reads its shape (Swing on a torus) runs on it",
    )
    .option("--placement <how>", "with --topology: where ranks sit: block (default), round-robin, file:PATH")
    .addOption(jsonOption())
    .addOption(new Option("--trace-dir <dir>", "(internal) one rank of an mpi trace: write events here").hideHelp())
    .action(async (collective: string, o: TraceOptions) => {
      process.exitCode = await traceCommand(collective, o);
    });
}
