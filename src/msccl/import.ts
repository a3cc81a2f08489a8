/**
 * An MSCCL program (ir.ts) as a cclab Algorithm, so that it is proved, explained, traced,
 * modelled and benched like any other (`cclab import msccl algo.xml`, `--algorithm-file algo.xml`).
 *
 * MSCCL runs a GPU's threadblocks concurrently: each runs its steps in order, a step with
 * depid/deps first waits for a step of another threadblock, and messages between two GPUs on a
 * channel pair in order. cclab's schedule is one program order per rank whose dataflow the plan
 * derives from memory (plan.ts). The bridge:
 *
 *  - every step becomes actions: its receive, its local copy or reduction, its send (a fused
 *    rcs/rrs/rrcs receives, reduces into a per-threadblock buffer or its destination, then sends);
 *  - actions are ordered by MSCCL's own rules: a threadblock's order, dependencies, and each
 *    message's send and receive. Sends are buffered (the executor's connections hold data until
 *    the receiver takes it), so a send does not hold up what follows it in its threadblock; a
 *    receive, a local operation and a dependency do. Each message is given a round with its send
 *    and receive in the same round, each action the earliest round these rules allow (a longest
 *    path over the constraint graph). Where no such rounds exist the rules contain a cycle: the
 *    program deadlocks, and the error names the steps of the cycle;
 *  - rank r's schedule is then its rounds in order, each one cclab step: the round's transfers
 *    posted together, then its local operations. Every MSCCL dependency and threadblock order is
 *    kept by this program order; the plan's memory-derived dependencies then keep the data flow,
 *    and the checker proves the result (in both of its orders);
 *  - MSCCL orders two threadblocks' accesses to the same memory only through dependencies
 *    (directly or through a chain of steps and messages). Where two threadblocks touch a chunk,
 *    one writing, with no such chain between them, the program races on the GPU and is
 *    rejected, naming both steps: only then is the one order cclab runs the result of every run.
 *
 * Chunks: a call of count elements splits the executor's buffer of count·(n for all-gather,
 * reduce-scatter and all-to-all, else 1) elements into nchunksperloop chunks, so the program is
 * defined for n = ngpus and counts that make whole chunks (Algorithm.domain).
 *
 * This module runs the phases in order and defines the Algorithm; the phases live in actions.ts
 * (actions per threadblock, messages), order.ts (constraint graph, rounds), races.ts (placer,
 * race check), graph.ts (SCC, cycles) and schedule.ts (per-GPU rounds, the schedule generator).
 */
import { AlgorithmFileError } from "../core/errors.js";
import { maxOf } from "../core/extent.js";
import { type Algorithm, defineAlgorithm, f } from "../schedule/dsl.js";
import { findSpec, makeCall, rankCall } from "../specs/index.js";
import type { CollectiveSpec } from "../specs/types.js";
import { buildActions, type Context, context, pairMessages, sameRef } from "./actions.js";
import { at, type MscclProgram, sizeMultiplier } from "./ir.js";
import { assignRounds, constraintGraph } from "./order.js";
import { type MscclLimits, parseMscclXml } from "./parse.js";
import { type Alias, checkRaces, placer } from "./races.js";
import { gpuRounds, scheduleOf } from "./schedule.js";

export interface Imported {
  readonly algorithm: Algorithm;
  readonly program: MscclProgram;
  /** Conventions applied, limits of some executors exceeded, producer/executor differences seen. */
  readonly notes: readonly string[];
  /** Rounds (cclab steps with transfers), the most any GPU takes, and chunks sent, the most any GPU sends. */
  readonly rounds: number;
  readonly chunksSent: number;
  readonly threadblocks: number;
}

export interface ImportOptions {
  /** Shown in messages; also the default name. */
  readonly file?: string;
  /** The algorithm's name (default: the file's base name, else the program's name). */
  readonly name?: string;
  /** Size limits (parse.ts; default MSCCL_LIMITS, raised by CCLAB_MSCCL_MAX_*). */
  readonly limits?: MscclLimits;
}

/** Reads MSCCL XML into a cclab Algorithm; structural errors throw AlgorithmFileError naming gpu, tb and step. */
export function importMsccl(text: string, options: ImportOptions = {}): Imported {
  const file = options.file ?? "<xml>";
  const { program, notes } = parseMscclXml(text, file, options.limits);
  return fromProgram(program, notes, options);
}

/** The phases in order: buffers in chunks, actions, messages, constraint graph, rounds, races, each GPU's rounds. */
export function fromProgram(
  program: MscclProgram,
  parseNotes: readonly string[],
  options: ImportOptions = {},
): Imported {
  const file = options.file ?? "<xml>";
  const ctx = context(program, file, [...parseNotes]);
  const { fail, notes } = ctx;
  const spec = collectiveOf(program, file, notes);
  const n = program.ngpus;
  const nchunks = program.nchunksperloop;
  const mult = sizeMultiplier(spec, n);
  const unit = nchunks / gcd(nchunks, mult);
  const root = spec.rooted ? (program.root ?? 0) : 0;
  if (spec.rooted && program.root === undefined) {
    notes.push(`${spec.name} with no root attribute (the executor takes the root at run time): read as root 0`);
  }
  if (n === 1) fail("<algo>", 'ngpus="1": one GPU needs no program');
  const alias = chunkLayout(ctx, spec, unit, mult, root);

  const tbs = buildActions(program);
  const { actions, count: tbg } = tbs;
  const msgs = pairMessages(ctx, tbs);
  const place = placer(alias, program.inplace);
  const graph = constraintGraph(ctx, tbs, msgs, place);
  const { roundOf, order } = assignRounds(ctx, tbs, msgs, graph);
  checkRaces(ctx, tbs, graph.hbPreds, order, place);
  const rounds = gpuRounds(program, actions, order, roundOf);
  const { stageAt } = graph;
  for (const a of actions) {
    if (a.kind === "copy" && a.src && sameRef(a.ref, a.src)) {
      notes.push(`${at(a.gpu, a.tb, a.step, a.type)} copies a chunk onto itself: nothing to do`);
    }
  }

  const perGpu = rounds.map((rs, gpu) => ({
    rounds: rs.filter((r) => r.transfers.length > 0).length,
    sent: actions.filter((a) => a.gpu === gpu && a.kind === "send").reduce((s, a) => s + a.ref.cnt, 0),
  }));
  const maxRounds = maxOf(
    perGpu.map((p) => p.rounds),
    0,
  );
  const maxSent = maxOf(
    perGpu.map((p) => p.sent),
    0,
  );
  const name = options.name ?? (baseName(options.file) || program.name || "msccl");
  const why = `an MSCCL program for ${n} GPUs, ${nchunks} chunks per loop${spec.rooted ? `, root ${root}` : ""}`;
  const algorithm = defineAlgorithm({
    collective: spec.name,
    name,
    summary: `MSCCL program${program.name ? ` '${program.name}'` : ""}: ${n} GPUs, ${tbg} threadblocks on ${program.nchannels} channel(s), ${program.proto}, ${[program.inplace ? "in place" : "", program.outofplace ? "out of place" : ""].filter(Boolean).join(" and ")}`,
    limits: `${why}: n = ${n} only, counts multiples of ${unit}${spec.rooted ? `, root ${root} only` : ""}`,
    source: `MSCCL XML ${file}`,
    cost: {
      steps: f(`${maxRounds}`, (k) => (k === n ? maxRounds : Number.NaN)),
      sent: f(`${maxSent}·count${mult > 1 ? "·n" : ""}/${nchunks}`, (k, count) =>
        k === n ? (maxSent * count * mult) / nchunks : Number.NaN,
      ),
    },
    domain: { sizes: [n], countMultiple: unit, ...(spec.rooted ? { roots: [root] } : {}), why },
    schedule: (c, mem) => scheduleOf(program, spec, c, mem, rounds[c.rank] ?? [], stageAt[c.rank] ?? [], mult),
    file: options.file,
  });
  return { algorithm, program, notes, rounds: maxRounds, chunksSent: maxSent, threadblocks: tbg };
}

/**
 * The collective's buffers in chunks, per GPU (at count = one unit: e elements per chunk): fails
 * where the program's chunks do not fit them; returns where an in-place call aliases them.
 */
function chunkLayout(ctx: Context, spec: CollectiveSpec, unit: number, mult: number, root: number): Alias[] {
  const { program, fail } = ctx;
  const n = program.ngpus;
  const nchunks = program.nchunksperloop;
  const e = (unit * mult) / nchunks;
  const chunksOf = (elements: number, what: string, gpu: number) => {
    if (elements % e !== 0) {
      fail(at(gpu), `${spec.name}'s ${what} is not whole chunks at nchunksperloop="${nchunks}" on ${n} GPUs`);
    }
    return elements / e;
  };
  const call = makeCall({ collective: spec.name, size: n, count: unit, root });
  const alias: Alias[] = [];
  for (const g of program.gpus) {
    const l = spec.layout(rankCall(call, g.id));
    const inChunks = chunksOf(l.inputCount, "input", g.id);
    const outChunks = chunksOf(l.outputCount, "output", g.id);
    if (g.iChunks > inChunks) {
      fail(
        at(g.id),
        `i_chunks="${g.iChunks}" but ${spec.name}'s input holds ${inChunks} chunks here (nchunksperloop="${nchunks}")`,
      );
    }
    if (g.oChunks > outChunks) {
      fail(
        at(g.id),
        `o_chunks="${g.oChunks}" but ${spec.name}'s output holds ${outChunks} chunks here (nchunksperloop="${nchunks}")`,
      );
    }
    const a = l.alias;
    alias.push(
      !a
        ? undefined
        : a.kind === "output-in-input"
          ? { mem: 0, off: chunksOf(a.offset, "in-place offset", g.id), of: "o" }
          : { mem: 1, off: a.kind === "same" ? 0 : chunksOf(a.offset, "in-place offset", g.id), of: "i" },
    );
  }
  return alias;
}

/** The collective a program names: cclab's spec, where it has the executor's sizes. */
function collectiveOf(p: MscclProgram, file: string, notes: string[]): CollectiveSpec {
  const spec = findSpec(p.coll);
  if (!spec) {
    throw new AlgorithmFileError(
      `${file}: <algo>: coll="${p.coll}" is not a collective cclab knows (msccl-tools writes "custom" for its own collectives, which have no definition to check against)`,
    );
  }
  if (!spec.counted || !spec.data) {
    throw new AlgorithmFileError(
      `${file}: <algo>: coll="${p.coll}": MSCCL programs are written in fixed chunks; ${spec.name}'s sizes come from elsewhere`,
    );
  }
  if (p.coll !== spec.name) {
    notes.push(`coll="${p.coll}" read as ${spec.name} (msccl-executor-nccl accepts only coll="${spec.name}")`);
  }
  return spec;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const baseName = (file?: string) =>
  file
    ?.split(/[\\/]/)
    .pop()
    ?.replace(/\.xml$/i, "")
    .replace(/[^A-Za-z0-9_.-]/g, "_") ?? "";
