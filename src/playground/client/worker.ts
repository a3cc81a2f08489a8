/**
 * The playground's Worker: it loads the workspace's files (loader.ts) and runs, verifies or
 * explains the main one on the simulator, posting printed lines and progress as they come. The
 * page bounds every job in time and terminates this worker to stop one, so a program that
 * never yields (while (true) {}) costs the page nothing but a new worker.
 */
// First: bounds the buffers every module below allocates (limits.ts).
import "./limits.js";
import { MODULES } from "cclab-playground:modules";
import fc from "fast-check";
import { allocate, invoke } from "../../collectives/dispatch.js";
import { useTopology } from "../../collectives/plans.js";
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
import { formatLine } from "./format.js";
import { type Exports, makeLoader } from "./loader.js";
import { clipLine, Kept } from "./output.js";
import {
  type ExplainJob,
  type FromWorker,
  type Job,
  KEEP_HEAD,
  KEEP_TAIL,
  MAX_DEADLOCKS,
  MAX_EVENTS,
  type Printed,
  type Result,
  type RunJob,
  type Traced,
  type VerifyJob,
} from "./protocol.js";
import { setSink } from "./run-shim.js";
import { onShape, shapeOfText } from "./topology.js";

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

/**
 * Printed lines on their way to the page: each stream's first KEEP_HEAD lines, then only the
 * last KEEP_TAIL since the previous flush (with a count of those skipped), sent at most every
 * 50 ms or 5,000 lines, so a program printing without end sends the page a bounded trickle.
 */
class Outbox {
  private readonly streams = new Map<number, { printed: number; head: string[]; tail: Kept }>();
  private pending = 0;
  private last = 0;
  constructor(private readonly id: number) {}

  add(rank: number, line: string): void {
    let s = this.streams.get(rank);
    if (!s) {
      s = { printed: 0, head: [], tail: new Kept(0, KEEP_TAIL) };
      this.streams.set(rank, s);
    }
    s.printed++;
    if (s.printed <= KEEP_HEAD) s.head.push(clipLine(line));
    else s.tail.add(clipLine(line));
    this.pending++;
    const now = performance.now();
    if (this.pending >= 5000 || now - this.last >= 50) {
      this.last = now;
      this.flush();
    }
  }

  /** Lines each rank printed, for ranks 0..n-1. */
  printed(n: number): number[] {
    return Array.from({ length: n }, (_, r) => this.streams.get(r)?.printed ?? 0);
  }

  flush(): void {
    const out: Printed[] = [];
    for (const [rank, s] of this.streams) {
      if (s.head.length > 0) out.push({ rank, skipped: 0, lines: s.head.splice(0) });
      if (s.tail.total > 0) {
        out.push({ rank, skipped: s.tail.dropped, lines: s.tail.takeTail() });
        s.tail = new Kept(0, KEEP_TAIL);
      }
    }
    this.pending = 0;
    if (out.length > 0) post({ kind: "print", id: this.id, streams: out });
  }
}

/** A trace that keeps the first MAX_EVENTS events and MAX_DEADLOCKS deadlocks, counting the rest. */
class BoundedTrace extends Trace {
  dropped = 0;
  override record(e: Parameters<Trace["record"]>[0]): void {
    if (this.events.length >= MAX_EVENTS) this.dropped++;
    else super.record(e.label === undefined ? e : { ...e, label: clip(e.label, 500) });
  }
  override recordDeadlock(d: Parameters<Trace["recordDeadlock"]>[0]): void {
    if (this.deadlocks.length >= MAX_DEADLOCKS) this.dropped++;
    else
      super.recordDeadlock({
        ...d,
        message: clip(d.message),
        blocked: d.blocked.map((b) => (b.label === undefined ? b : { ...b, label: clip(b.label, 500) })),
      });
  }
  note(notes: string[]): void {
    if (this.dropped > 0)
      notes.push(
        `the diagram shows the first ${MAX_EVENTS} operations (and ${MAX_DEADLOCKS} deadlocks) of the run; ${this.dropped} more were not kept`,
      );
  }
}

/** Text cut to `max` characters, saying how many more it had (the page refuses longer text). */
const clip = (s: string, max = 20_000) =>
  s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more characters)`;

const errorText = (e: unknown) => clip(e instanceof Error ? `${e.name}: ${e.message}` : String(e));

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

/** The main file's module, loaded with a console whose lines go to `rank`'s stream (-1: none). */
function load(job: Job, out: Outbox, rank = -1): Exports {
  const console = {
    log: (...parts: unknown[]) => out.add(rank, formatLine(parts)),
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
 * '<name>_yours', and a note says so. Where nothing of the workspace is edited (`pristine`), the
 * file is the built-in itself, which runs under its own name.
 */
const registered = new Map<Algorithm, Algorithm>();
function registeredAs(alg: Algorithm, notes: string[], pristine = false): Algorithm {
  const had = registered.get(alg);
  if (had) return had;
  if (pristine) {
    try {
      return findAlgorithm(alg.collective, alg.name, { op: "playground" });
    } catch {
      // Not a built-in: registered below.
    }
  }
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
  const reg = registeredAs(alg, notes, job.pristine);
  const trace = new BoundedTrace();
  // The topology field: explained bound to its shape, and run on comms that have it (topology.ts).
  const shape = shapeOfText(job.topology, call.size);
  const shown = onShape(alg, shape);
  const explainText = explain(shown, call);
  const steps = stepThrough(shown, {
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
        if (shape) useTopology(comm, shape);
        const c = rankCall(call, comm.rank);
        await invoke(comm, c, reg.name, allocate(comm, c));
      },
      { trace, seed: job.seed, semantics: job.semantics },
    );
  } catch (e) {
    notes.push(`the run failed: ${errorText(e)}`);
  }
  trace.note(notes);
  return {
    title: `${clip(`${alg.collective}/${alg.name}`, 200)}, n = ${call.size}${shape ? ` on ${shape.name}` : ""}, count = ${call.count}, ${job.semantics}, seed ${job.seed}`,
    size: call.size,
    events: trace.events,
    deadlocks: trace.deadlocks,
    steps,
    explainText,
    checkErrors: checkAlgorithm(shown, call).errors,
  };
}

async function run(job: RunJob, out: Outbox): Promise<Result> {
  // Each rank loads the program for itself, as each process of a job does: its console.log
  // goes to its own panel, and module-level state is its own.
  const mods = Array.from({ length: job.n }, (_, rank) => load(job, out, rank));
  const mod = mods[0] as Exports;
  const notes: string[] = [];
  const main = mod.main;
  if (typeof main !== "function") {
    const alg = Object.values(mod).find(isAlgorithm);
    if (alg) {
      // An algorithm file: Run runs the collective once, as Explain does, under the chosen semantics.
      const ex: ExplainJob = { ...job, kind: "explain", call: { n: job.n } };
      const traced = await traceAlgorithm(alg, callOf(alg, ex), ex, notes);
      return { kind: "run", traced, printed: out.printed(job.n), notes };
    }
    throw new Error(`${job.main} exports no main(comm) to run (export async function main(comm) { ... })`);
  }
  const trace = new BoundedTrace();
  const shape = shapeOfText(job.topology, job.n);
  let error: string | undefined;
  try {
    await spawn(
      job.n,
      (comm: Comm) => {
        if (shape) useTopology(comm, shape);
        setSink(comm, (line) => out.add(comm.rank, line));
        const own = mods[comm.rank]?.main;
        if (typeof own !== "function") throw new Error(`${job.main} exports no main(comm) on rank ${comm.rank}`);
        return (own as (c: Comm, args: string[]) => Promise<void>)(comm, []);
      },
      { trace, seed: job.seed, semantics: job.semantics },
    );
  } catch (e) {
    // Where in the workspace's files the failing rank threw (RankError carries it as its cause).
    const where = stackOf((e as { cause?: unknown }).cause ?? e);
    error = where ? `${errorText(e)}\n${where}` : errorText(e);
  }
  trace.note(notes);
  return {
    kind: "run",
    traced: {
      title: `${job.main} on ${job.n} simulated ranks${shape ? ` (${shape.name})` : ""}, ${job.semantics}, seed ${job.seed}`,
      size: job.n,
      events: trace.events,
      deadlocks: trace.deadlocks,
    },
    printed: out.printed(job.n),
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

async function verify(job: VerifyJob, out: Outbox): Promise<Result> {
  const notes: string[] = [];
  if (job.topology?.trim()) notes.push("the topology applies to Run and Explain: Verify proves the flat schedule");
  const alg = algorithmOf(job, load(job, out));
  const name = clip(`${alg.collective}/${alg.name}`, 200);
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
          message: clip(report.errors.join("\n")),
          replay: { n: c.size, count: c.count, root: c.root, segment: c.segment, inPlace: c.inPlace },
          command: clip(`cclab explain ${alg.collective} ${fileFlag(job, alg)} ${call}`, 1000),
        },
        notes,
      };
    }
  }
  const reg = registeredAs(alg, notes, job.pristine);
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
        message: clip(`minimal counterexample after ${result.numShrinks} shrinks: ${err}`),
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
        command: clip(
          `cclab verify --collective ${alg.collective} ${fileFlag(job, alg)} --max-n ${job.hi} -n ${job.lo}..${job.hi} --seed ${job.seed} --runs ${job.runs}`,
          1000,
        ),
      },
      notes,
    };
  }
  return { kind: "verify", algorithm: name, staticCases: cases.length, propertyCases: result.numRuns, notes };
}

async function explainJob(job: ExplainJob, out: Outbox): Promise<Result> {
  const notes: string[] = [];
  const alg = algorithmOf(job, load(job, out));
  const traced = await traceAlgorithm(alg, callOf(alg, job), job, notes);
  return { kind: "explain", traced, notes };
}

self.onmessage = async (ev: MessageEvent<Job>) => {
  const job = ev.data;
  const out = new Outbox(job.id);
  try {
    const result =
      job.kind === "run"
        ? await run(job, out)
        : job.kind === "verify"
          ? await verify(job, out)
          : await explainJob(job, out);
    out.flush();
    post({ kind: "done", id: job.id, result });
  } catch (e) {
    out.flush();
    post({
      kind: "failed",
      id: job.id,
      message: clip(`${errorText(e)}\n${stackOf(e)}`.trim()),
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
