/**
 * `cclab trace <collective> --algorithm <name> -n 4 [-o out.svg|out.html|out.json]`: runs the
 * collective with a Trace recorder and draws its time-space diagram, or prints bytes per rank
 * per step beside the algorithm's formula. `cclab trace deadlock [-o x.svg|x.dot]` runs seed
 * 003's send-send deadlock and draws its wait-for cycle.
 *
 * The pictures read only TraceEvents, so any backend that gathers its ranks' events renders
 * the same way; today only sim records them (real backends: see NOT_YET).
 */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { allocate, invoke, type Shape } from "../collectives/dispatch.js";
import type { Comm } from "../comm.js";
import { view, zeros } from "../core/buffer.js";
import { dtypeInfo } from "../core/dtype.js";
import { DeadlockError } from "../core/errors.js";
import { contextFor } from "../schedule/context.js";
import { explainArgs } from "../schedule/explain.js";
import type { Algorithm } from "../schedule/types.js";
import { spawn } from "../sim/index.js";
import { Trace, type TraceEvent } from "../trace.js";
import { deadlockDot, deadlockSvg } from "../viz/deadlock.js";
import { htmlPage } from "../viz/svg.js";
import { traceTable } from "../viz/table.js";
import { traceHtml, traceSvg } from "../viz/trace.js";
import { intOption } from "./options.js";
import { selectAlgorithms } from "./verify.js";

export interface TraceCall {
  readonly size: number;
  readonly count: number;
  readonly root: number;
  readonly segment: number;
  /** sim's seed: the same seed gives the same interleaving and trace. */
  readonly seed?: number;
}

/** What real backends would need before their traces can be drawn. */
export const NOT_YET =
  "not yet available: the mpi and nccl backends do not record traces yet; each rank would record its own TraceEvents (microseconds) and rank 0 would gather them, then the same renderer draws them. Use --backend sim.";

/** The call `cclab trace` makes by default: explain's, one element per chunk, so pictures stay small. */
export function defaultTraceCall(alg: Algorithm, size: number): TraceCall {
  const a = explainArgs(alg, size);
  return { size, count: a.count, root: a.root ?? 0, segment: a.segment ?? 1 };
}

/** Runs one collective on the sim backend with a Trace recorder and returns its events. */
export async function traceOnSim(alg: Algorithm, call: TraceCall): Promise<TraceEvent[]> {
  const trace = new Trace();
  // alltoallv needs per-peer counts: explain's matrix, the same one its step table shows.
  const matrix = alg.collective === "alltoallv" ? explainArgs(alg, call.size).sendCounts : undefined;
  await spawn(
    call.size,
    async (comm: Comm) => {
      const shape: Shape = {
        collective: alg.collective,
        count: call.count,
        root: call.root,
        dtype: alg.collective === "barrier" ? "uint8" : "float32",
        sendCounts: matrix?.[comm.rank],
        recvCounts: matrix?.map((row) => row[comm.rank] ?? 0),
      };
      const b = allocate(comm, shape, false);
      await invoke(comm, { ...shape, algorithm: alg.name, segment: call.segment }, b);
    },
    { trace, seed: call.seed ?? 1 },
  );
  return trace.events;
}

/** Seed 003's wrong example on n ranks: each sends to the next, then receives from the previous (n = 2: both send first). */
export async function sendSendDeadlock(n: number): Promise<DeadlockError> {
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
    { semantics: "nccl" },
  );
  const err = results.find((e) => e !== undefined);
  if (!err) throw new Error(`the send-send example did not deadlock on ${n} ranks`);
  return err;
}

function write(file: string, text: string): void {
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}

interface TraceOptions {
  algorithm?: string;
  algorithmFile?: string;
  size?: number;
  count?: number;
  root: number;
  segment?: number;
  seed?: number;
  backend: string;
  output?: string;
}

async function traceDeadlock(o: TraceOptions): Promise<number> {
  const n = Math.max(2, o.size ?? 2);
  const err = await sendSendDeadlock(n);
  console.log(err.message);
  if (!o.output) {
    console.log("\n(-o deadlock.svg, deadlock.html or deadlock.dot draws the wait-for graph)");
    return 0;
  }
  if (o.output.endsWith(".dot")) write(o.output, deadlockDot(err));
  else if (o.output.endsWith(".svg")) write(o.output, deadlockSvg(err));
  else if (o.output.endsWith(".html")) write(o.output, htmlPage("cclab deadlock", deadlockSvg(err)));
  else throw new Error(`-o: write .svg, .html or .dot, got '${o.output}'`);
  return 0;
}

export async function traceCommand(collective: string, o: TraceOptions): Promise<number> {
  if (collective === "deadlock") return traceDeadlock(o);
  if (o.backend !== "sim") {
    console.error(`cclab trace --backend ${o.backend}: ${NOT_YET}`);
    return 1;
  }
  if (!o.algorithm) throw new Error("--algorithm <name> is required (see cclab verify for the names)");
  const [alg] = await selectAlgorithms({ collective, algorithm: o.algorithm, algorithmFile: o.algorithmFile });
  if (!alg) return 1;
  const size = o.size ?? 4;
  const base = defaultTraceCall(alg, size);
  const call: TraceCall = {
    size,
    count: o.count ?? base.count,
    root: o.root,
    segment: o.segment ?? base.segment,
    seed: o.seed,
  };
  if (call.root >= call.size) throw new Error(`--root ${call.root} is not a rank of ${call.size}`);
  const events = await traceOnSim(alg, call);
  const title = `${alg.collective}/${alg.name} on sim: n = ${call.size}, count = ${call.count}, root ${call.root}, segment ${call.segment}`;
  if (o.output) {
    if (o.output.endsWith(".svg")) write(o.output, traceSvg(events, { title, size: call.size }));
    else if (o.output.endsWith(".html")) write(o.output, traceHtml(events, { title, size: call.size }));
    else if (o.output.endsWith(".json")) write(o.output, `${JSON.stringify(events, null, 1)}\n`);
    else throw new Error(`-o: write .svg, .html or .json, got '${o.output}'`);
    return 0;
  }
  const dtype = alg.collective === "barrier" ? "uint8" : "float32";
  const segment = contextFor(alg, { size: call.size, count: call.count, segment: call.segment }, 0).segment;
  const maxBytes = alg.cost.sentElements(call.size, call.count, segment) * dtypeInfo(dtype).bytes;
  console.log(title);
  console.log(traceTable(events, call.size, { text: alg.cost.bytesFormula, maxBytes }));
  console.log("\n(-o trace.svg or trace.html draws the time-space diagram)");
  return 0;
}

export function registerTrace(program: Command): void {
  program
    .command("trace")
    .description(
      "run a collective with a trace and draw its time-space diagram (or bytes per step); 'trace deadlock' draws seed 003's wait-for cycle",
    )
    .argument("<collective>", "allreduce, broadcast, ..., or 'deadlock'")
    .option("--algorithm <name>", "algorithm name (see cclab verify)")
    .option("--algorithm-file <file>", "your own algorithm file")
    .option("-n, --size <n>", "number of ranks (default 4; deadlock: 2)", intOption("-n", 1, 256))
    .option("--count <n>", "elements (NCCL's count); default one element per chunk", intOption("--count", 0))
    .option("--root <n>", "root rank", intOption("--root", 0), 0)
    .option("--segment <n>", "pipelining segment in elements", intOption("--segment", 1))
    .option("--seed <n>", "sim scheduler seed", intOption("--seed", -(2 ** 31), 2 ** 31))
    .option("--backend <name>", "sim (mpi and nccl: not yet)", "sim")
    .option("-o, --output <file>", "write .svg or .html (deadlock: .svg, .html or .dot; trace events: .json)")
    .action(async (collective: string, o: TraceOptions) => {
      process.exitCode = await traceCommand(collective, o);
    });
}
