/**
 * The playground's Worker: it loads the workspace's files (loader.ts) and runs, verifies or
 * explains the main one on the simulator, posting printed lines and progress as they come. The
 * page bounds every job in time and terminates this worker to stop one, so a program that
 * never yields (while (true) {}) costs the page nothing but a new worker.
 */
import { MODULES } from "cclab-playground:modules";
import fc from "fast-check";
import { allocate, invoke } from "../../collectives/dispatch.js";
import type { Comm } from "../../comm.js";
import { checkAlgorithm } from "../../schedule/check.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { explain, explainCall } from "../../schedule/explain.js";
import { findAlgorithm, registerAlgorithm } from "../../schedule/registry.js";
import { spawn } from "../../sim/index.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import { Trace } from "../../trace.js";
import { checkCases } from "../../verify/matrix.js";
import { caseArb, describeCase, runCase } from "../../verify/property.js";
import { stepThrough } from "../../viz/steps.js";
import { type Exports, makeLoader } from "./loader.js";
import type { ExplainJob, FromWorker, Job, Result, RunJob, Traced, VerifyJob } from "./protocol.js";
import { setSink } from "./run-shim.js";

// The simulator yields to the event loop with setImmediate between rounds (Node's); a browser
// has none: a MessageChannel gives the same "after pending I/O, before timers" macrotask.
if (typeof (globalThis as { setImmediate?: unknown }).setImmediate !== "function") {
  const queue: (() => void)[] = [];
  const channel = new MessageChannel();
  channel.port1.onmessage = () => queue.shift()?.();
  (globalThis as unknown as { setImmediate: (f: () => void) => void }).setImmediate = (f) => {
    queue.push(f);
    channel.port2.postMessage(0);
  };
}

const post = (m: FromWorker) => (self as unknown as { postMessage(m: FromWorker): void }).postMessage(m);

const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

function isAlgorithm(x: unknown): x is Algorithm {
  const a = x as Algorithm;
  return (
    typeof x === "object" &&
    x !== null &&
    typeof a.collective === "string" &&
    typeof a.name === "string" &&
    typeof a.schedule === "function"
  );
}

function load(job: Job, id: number): Exports {
  const console = {
    log: (...parts: unknown[]) => post({ kind: "print", id, rank: -1, line: parts.map(String).join(" ") }),
  };
  const c = { ...console, info: console.log, warn: console.log, error: console.log, debug: console.log };
  return makeLoader(job.files, MODULES as Record<string, Exports>, c).load(job.main);
}

/** The main file's algorithm: its first export that is one. */
function algorithmOf(job: Job, mod: Exports): Algorithm {
  const alg = Object.values(mod).find(isAlgorithm);
  if (!alg) {
    throw new Error(
      `${job.main} exports no algorithm (defineAlgorithm({ collective, name, ... }), as in algorithms/); Verify and Explain are for algorithm files, Run for programs (export async function main(comm))`,
    );
  }
  return alg;
}

/**
 * The algorithm as the registry knows it (the front API looks algorithms up by name): a file
 * that reuses a built-in's name (an edited algorithms/allreduce/ring.ts) is registered under
 * '<name>_yours', and a note says so.
 */
const registered = new Map<Algorithm, Algorithm>();
function registeredAs(alg: Algorithm, notes: string[]): Algorithm {
  const had = registered.get(alg);
  if (had) return had;
  let name = alg.name;
  let taken = true;
  for (let i = 0; taken; i++) {
    name = i === 0 ? alg.name : `${alg.name}_yours${i > 1 ? i : ""}`;
    try {
      findAlgorithm(alg.collective, name, { op: "playground" });
    } catch {
      taken = false;
    }
  }
  if (name !== alg.name) notes.push(`${alg.collective} has a built-in '${alg.name}': yours runs as '${name}'`);
  const reg = name === alg.name ? alg : { ...alg, name };
  registerAlgorithm(reg);
  registered.set(alg, reg);
  return reg;
}

/** explain's call for the job's shape. */
function callOf(alg: Algorithm, job: ExplainJob): CollectiveCall {
  const base = explainCall(alg, job.call.n);
  const given = Object.fromEntries(Object.entries(job.call).filter(([k, v]) => k !== "n" && v !== undefined));
  return { ...base, ...given, size: job.call.n };
}

/** One run of the algorithm at `call` on the simulator, traced, with explain's steps and text. */
async function traceAlgorithm(alg: Algorithm, call: CollectiveCall, job: ExplainJob, notes: string[]): Promise<Traced> {
  const reg = registeredAs(alg, notes);
  const trace = new Trace();
  const explainText = explain(alg, call);
  const steps = stepThrough(alg, {
    size: call.size,
    count: call.count,
    root: call.root,
    segment: call.segment,
    inPlace: call.inPlace,
  });
  try {
    await spawn(
      call.size,
      async (comm: Comm) => {
        const c = rankCall(call, comm.rank);
        await invoke(comm, c, reg.name, allocate(comm, c));
      },
      { trace, seed: job.seed, semantics: job.semantics },
    );
  } catch (e) {
    notes.push(`the run failed: ${errorText(e)}`);
  }
  return {
    title: `${alg.collective}/${alg.name}, n = ${call.size}, count = ${call.count}, ${job.semantics}, seed ${job.seed}`,
    size: call.size,
    events: trace.events,
    deadlocks: trace.deadlocks,
    steps,
    explainText,
    checkErrors: checkAlgorithm(alg, call).errors,
  };
}

async function run(job: RunJob): Promise<Result> {
  const mod = load(job, job.id);
  const notes: string[] = [];
  const main = mod.main;
  if (typeof main !== "function") {
    const alg = Object.values(mod).find(isAlgorithm);
    if (alg) {
      // An algorithm file: Run runs the collective once, as Explain does, under the chosen semantics.
      const ex: ExplainJob = { ...job, kind: "explain", call: { n: job.n } };
      const traced = await traceAlgorithm(alg, callOf(alg, ex), ex, notes);
      return { kind: "run", traced, output: [], notes };
    }
    throw new Error(`${job.main} exports no main(comm) to run (export async function main(comm) { ... })`);
  }
  const trace = new Trace();
  const output: string[][] = Array.from({ length: job.n }, () => []);
  let error: string | undefined;
  try {
    await spawn(
      job.n,
      (comm: Comm) => {
        setSink(comm, (line) => {
          output[comm.rank]?.push(line);
          post({ kind: "print", id: job.id, rank: comm.rank, line });
        });
        return (main as (c: Comm, args: string[]) => Promise<void>)(comm, []);
      },
      { trace, seed: job.seed, semantics: job.semantics },
    );
  } catch (e) {
    // Where in the workspace's files the failing rank threw (RankError carries it as its cause).
    const where = stackOf((e as { cause?: unknown }).cause ?? e);
    error = where ? `${errorText(e)}\n${where}` : errorText(e);
  }
  return {
    kind: "run",
    traced: {
      title: `${job.main} on ${job.n} simulated ranks, ${job.semantics}, seed ${job.seed}`,
      size: job.n,
      events: trace.events,
      deadlocks: trace.deadlocks,
    },
    output,
    ...(error ? { error } : {}),
    notes,
  };
}

/** How a checkout names the algorithm: a built-in's file by its name (your edits saved there), any other by its file. */
function fileFlag(job: Job, alg: Algorithm): string {
  return job.main === `algorithms/${alg.collective}/${alg.name}.ts`
    ? `--algorithm ${alg.name}`
    : `--algorithm-file ${job.main}`;
}

async function verify(job: VerifyJob): Promise<Result> {
  const notes: string[] = [];
  const alg = algorithmOf(job, load(job, job.id));
  const name = `${alg.collective}/${alg.name}`;
  const cases = checkCases(alg, job.hi).filter((c) => c.size >= job.lo);
  const total = cases.length + job.runs;
  let done = 0;
  let last = 0;
  const progress = (what: string) => {
    done++;
    const now = performance.now();
    if (now - last > 50 || done === total) {
      last = now;
      post({ kind: "progress", id: job.id, done, total, what });
    }
  };
  for (const c of cases) {
    const report = checkAlgorithm(alg, c);
    progress(`proof: n = ${c.size}, count = ${c.count}`);
    if (report.errors.length > 0) {
      const call = `-n ${c.size} --count ${c.count} --segment ${c.segment ?? 1}${c.root ? ` --root ${c.root}` : ""}${c.inPlace ? " --in-place" : ""}`;
      return {
        kind: "verify",
        algorithm: name,
        staticCases: cases.length,
        propertyCases: 0,
        failure: {
          phase: "proof",
          message: report.errors.join("\n"),
          replay: { n: c.size, count: c.count, root: c.root, segment: c.segment, inPlace: c.inPlace },
          command: `cclab explain ${alg.collective} ${fileFlag(job, alg)} ${call}`,
        },
        notes,
      };
    }
  }
  const reg = registeredAs(alg, notes);
  // As `cclab verify -n lo..hi` draws them, so the command below replays the same cases.
  const sizes = Array.from({ length: job.hi - job.lo + 1 }, (_, i) => job.lo + i);
  const arb = fc.constantFrom(...sizes).chain((n) => caseArb(alg, { worldSize: n }));
  const result = await fc.check(
    fc.asyncProperty(arb, async (c) => {
      const err = await runCase(reg, c);
      if (done < total) progress(`property case: ${describeCase(alg, c)}`);
      if (err) throw new Error(`${describeCase(alg, c)}: ${err}`);
    }),
    { numRuns: job.runs, seed: job.seed },
  );
  if (result.failed) {
    const err = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    const c = result.counterexample?.[0];
    return {
      kind: "verify",
      algorithm: name,
      staticCases: cases.length,
      propertyCases: result.numRuns,
      failure: {
        phase: "property",
        message: `minimal counterexample after ${result.numShrinks} shrinks: ${err}`,
        replay: c
          ? {
              n: c.size,
              count: c.count,
              root: c.root,
              segment: c.segment,
              inPlace: c.inPlace,
              semantics: c.semantics,
              seed: c.seed,
            }
          : { n: Math.min(4, job.hi) },
        command: `cclab verify --collective ${alg.collective} ${fileFlag(job, alg)} --max-n ${job.hi} -n ${job.lo}..${job.hi} --seed ${job.seed} --runs ${job.runs}`,
      },
      notes,
    };
  }
  return { kind: "verify", algorithm: name, staticCases: cases.length, propertyCases: result.numRuns, notes };
}

async function explainJob(job: ExplainJob): Promise<Result> {
  const notes: string[] = [];
  const alg = algorithmOf(job, load(job, job.id));
  const traced = await traceAlgorithm(alg, callOf(alg, job), job, notes);
  return { kind: "explain", traced, notes };
}

self.onmessage = async (ev: MessageEvent<Job>) => {
  const job = ev.data;
  try {
    const result =
      job.kind === "run" ? await run(job) : job.kind === "verify" ? await verify(job) : await explainJob(job);
    post({ kind: "done", id: job.id, result });
  } catch (e) {
    post({
      kind: "failed",
      id: job.id,
      message: `${errorText(e)}\n${stackOf(e)}`.trim(),
    });
  }
};

/**
 * The lines of a stack trace that point into the workspace's files (their sourceURL names them),
 * at the editor's line numbers: new Function puts two lines of its own before the file's.
 */
function stackOf(e: unknown): string {
  if (!(e instanceof Error)) return "";
  return (e.stack ?? "")
    .split("\n")
    .filter((l) => /\bat\b.*\.(ts|js):\d+/.test(l) && !/blob:|assets\//.test(l))
    .slice(0, 5)
    .map((l) =>
      l.replace(
        /\.(ts|js):(\d+):(\d+)/,
        (_, x: string, line: string, col: string) => `.${x}:${Number(line) - 2}:${col}`,
      ),
    )
    .join("\n");
}
