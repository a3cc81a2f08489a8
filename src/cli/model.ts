/**
 * `cclab model <collective> --algorithm <name> -n N --bytes B`: the alpha-beta time of a
 * schedule (src/schedule/model.ts) beside the header formula's estimate, or with --topology the
 * network model's (model-network.ts); with --sweep-n or --max-n, several algorithms over N with
 * their crossovers, as a table and (-o) an SVG or HTML line chart.
 */
import { writeFileSync } from "node:fs";
import { type Command, InvalidArgumentError as CommanderError, Option } from "commander";
import { parseBytes, sizeSweep } from "../bench/metrics.js";
import { dtypeInfo } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { maxOf, minOf } from "../core/extent.js";
import { callOf, type NetworkRequest } from "../model/machine.js";
import { MAX_TOPOLOGY_HOSTS } from "../model/network/index.js";
import { powersOfTwo, sweep, sweepChart } from "../model/sweep.js";
import type { Algorithm } from "../schedule/dsl.js";
import {
  betaFromGBps,
  formulaTime,
  MODEL_MAX_RANKS,
  type ModelParams,
  modelTime,
  paramsAt,
} from "../schedule/model.js";
import { findAlgorithm } from "../schedule/registry.js";
import { type Collective, type CollectiveCall, specOf } from "../specs/index.js";
import { selectAlgorithms } from "../verify/load.js";
import { bytesText, htmlPage, timeText } from "../viz/svg.js";
import { machineOptions } from "./model-machine.js";
import { type GridOptions, modelOnNetwork, reportGrid, runGrid } from "./model-network.js";
import { ncclTuner } from "./model-tuner.js";
import {
  addNetworkOptions,
  givenOptions,
  type NetworkFlags,
  networkRequest,
  refuseAlphaBeta,
} from "./network-options.js";
import { jsonOption, nranksOption, outputOption, parsers, printJson, StatusLine } from "./options.js";
import { checkOutputFile } from "./output-files.js";

/** '25GB/s' or '25 GB/s' -> µs per byte; a plain number is already µs per byte. */
export function parseBeta(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?(?:e-?\d+)?)\s*(GB\/s)?\s*$/i.exec(value);
  const v = m ? Number(m[1]) : Number.NaN;
  if (!m || !Number.isFinite(v) || v < 0 || (m[2] && v === 0)) {
    throw new CommanderError(
      `--beta must be microseconds per byte (e.g. 0.00004) or a bandwidth like 25GB/s, got '${value}'`,
    );
  }
  return m[2] ? betaFromGBps(v) : v;
}

function sizeList(value: string): number[] {
  const parts = value.split(",").map((s) => s.trim());
  const out: number[] = [];
  for (const p of parts) {
    // '2,4,...,4096' means the powers of two in between.
    if (p === "..." && out.length > 0) continue;
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > MAX_TOPOLOGY_HOSTS) {
      throw new CommanderError(
        `--sweep-n must list group sizes in [1, ${MAX_TOPOLOGY_HOSTS}], like 2,4,...,16384; got '${p}'`,
      );
    }
    if (parts[parts.indexOf(p) - 1] === "..." && out.length > 0) {
      let m = (out[out.length - 1] as number) * 2;
      while (m < n) {
        out.push(m);
        m *= 2;
      }
    }
    out.push(n);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

/** '1K,64K,1M': sizes in bytes, nccl-tests' syntax, sorted and distinct. */
function bytesList(value: string): number[] {
  const out = value.split(",").map((part) => {
    try {
      return parseBytes(part);
    } catch (e) {
      throw new InvalidArgumentError({ op: "model", arg: "--sweep-bytes" }, (e as Error).message);
    }
  });
  return [...new Set(out)].sort((a, b) => a - b);
}

interface ModelOptions extends NetworkFlags {
  algorithm?: string;
  algorithms?: string;
  algorithmFile?: string;
  nranks: number;
  json?: boolean;
  bytes: number;
  root: number;
  alpha: number;
  beta: number;
  gamma: number;
  /** From --machine: the copy cost and the costs by buffer size. */
  copy?: number;
  bySize?: ModelParams["bySize"];
  segment?: number;
  contention: string;
  sweepN?: number[];
  maxN?: number;
  output?: string;
  /** A sweep over sizes: -b, -e, -f (as bench) or --sweep-bytes. */
  minbytes?: number;
  maxbytes?: number;
  stepfactor?: number;
  sweepBytes?: number[];
  /** The progress bar of sweeps (on a terminal); --no-progress turns it off. */
  progress?: boolean;
  /** --nccl-tuner FILE: NCCL's example tuner plugin's CSV of the fastest algorithm per size. */
  ncclTuner?: string;
  /** Options given on the command line (not defaults), to refuse the alpha-beta ones on a network. */
  given?: readonly string[];
}

function checkAlphaBetaRanks(flag: string, n: number): void {
  if (n > MODEL_MAX_RANKS) {
    throw new InvalidArgumentError(
      { op: "model", arg: flag },
      `${n} ranks: the alpha-beta model walks every rank's whole plan and holds at most ${MODEL_MAX_RANKS}; the network model goes further: give --topology (e.g. --topology full --engine auto for the same one-switch machine, or torus:128x128)`,
    );
  }
}

function paramsOf(o: ModelOptions): ModelParams {
  if (o.contention !== "shared" && o.contention !== "none") {
    throw new InvalidArgumentError(
      { op: "model", arg: "--contention" },
      `must be 'shared' or 'none', got '${o.contention}'`,
    );
  }
  return { alpha: o.alpha, beta: o.beta, gamma: o.gamma, copy: o.copy, bySize: o.bySize, contention: o.contention };
}

/** The parameters, at the call's buffer size `bytes` where the machine file measured several. */
function paramText(p: ModelParams, bytes?: number): string {
  const at = bytes !== undefined && p.bySize ? paramsAt(p, bytes) : p;
  const gbps = at.beta > 0 ? ` (${Number((1 / at.beta / 1e3).toPrecision(3))} GB/s)` : "";
  const num = (x: number) => Number(x.toPrecision(3));
  const sized = p.bySize
    ? bytes !== undefined
      ? `, at ${bytesText(bytes)} from the machine's sizes`
      : ", by size"
    : "";
  return `alpha ${Number(at.alpha.toPrecision(4))} µs, beta ${num(at.beta)} µs/B${gbps}${at.gamma ? `, gamma ${num(at.gamma)} µs/B` : ""}${at.copy ? `, copy ${num(at.copy)} µs/B` : ""}${sized}, contention ${p.contention}`;
}

async function algorithmsFor(collective: string, o: ModelOptions, sweeping: boolean): Promise<Algorithm[]> {
  collective = specOf(collective, { op: "cclab model" }).name;
  const fromFile = o.algorithmFile ? await selectAlgorithms({ collective, algorithmFile: o.algorithmFile }) : [];
  const site = { op: "model" };
  if (o.algorithms) return o.algorithms.split(",").map((name) => findAlgorithm(collective, name.trim(), site));
  if (o.algorithm) return [findAlgorithm(collective, o.algorithm, site)];
  // As explain: a file's own algorithms of this collective, when no name is given.
  if (fromFile.length > 0) return [...fromFile];
  const pair = specOf(collective).compare;
  if (sweeping && pair) return pair.map((name) => findAlgorithm(collective, name, site));
  throw new InvalidArgumentError(
    { op: "model", arg: "--algorithm" },
    "is required (or --algorithms a,b with a sweep); cclab list names them",
  );
}

export async function model(collective: string, o: ModelOptions): Promise<void> {
  if (specOf(collective, { op: "model" }).name === "alltoallv") {
    throw new InvalidArgumentError(
      { op: "model", arg: "collective" },
      "alltoallv moves a different count to each peer, which one size cannot say: model alltoall (its equal-count case) with --bytes",
    );
  }
  const params = paramsOf(o);
  const sizes = o.sweepN ?? (o.maxN !== undefined ? powersOfTwo(o.maxN) : undefined);
  const network = networkRequest("model", o, o.nranks);
  const bytesSweep =
    o.sweepBytes ??
    (o.minbytes !== undefined || o.maxbytes !== undefined || o.given?.includes("stepfactor")
      ? sizeRange(o.minbytes ?? 1024, o.maxbytes ?? 256 * 1024 ** 2, o.stepfactor ?? 2)
      : undefined);
  if (o.ncclTuner !== undefined) checkOutputFile("model", "--nccl-tuner", o.ncclTuner);
  if (network || bytesSweep || o.ncclTuner !== undefined) {
    await modelGrid(collective, o, network, sizes, bytesSweep);
    return;
  }
  for (const n of sizes ?? [o.nranks]) checkAlphaBetaRanks(sizes ? "--sweep-n" : "-n", n);
  const algs = await algorithmsFor(collective, o, sizes !== undefined);
  collective = specOf(collective, { op: "model" }).name;
  const dtype = specOf(collective, { op: "model" }).defaultDtype;
  // Each algorithm's call as the front API would make it for S bytes in nccl-tests' meaning (callOf,
  // as the network model, the size sweeps and bench take --bytes), with the one default segment.
  const shaped = algs.map((a) => callOf(a, o.nranks, o.bytes, { dtype, root: o.root, segment: o.segment }));
  const calls = shaped.map((c) => c.call);
  const count = (calls[0] as CollectiveCall).count;
  const perRank = specOf(collective).perRank === true;
  const segments = calls.map((c) => c.segment);
  const segmentText =
    new Set(segments).size === 1
      ? `segment ${segments[0]} elements`
      : `segments ${algs.map((a, i) => `${segments[i]} (${a.name})`).join(", ")} elements`;
  // Said as the network model's header says it (model-network.ts).
  const elements =
    sizes && perRank
      ? `S / (N x ${dtypeInfo(dtype).bytes}) x ${dtype} per rank`
      : `${count} x ${dtype}${perRank ? " per rank" : ""}`;
  const what = `S = ${bytesText(o.bytes)} (nccl-tests' bytes; ${elements}), ${segmentText}`;
  const out = (line: string) => {
    if (!o.json) console.log(line);
  };

  if (!sizes) {
    const alg = algs[0] as Algorithm;
    const call = calls[0] as CollectiveCall;
    const segment = call.segment;
    const t0 = performance.now();
    const m = modelTime(alg, call, params);
    const ms = performance.now() - t0;
    const formula = formulaTime(alg, call, params);
    if (o.json) {
      printJson({
        collective,
        algorithm: alg.name,
        nranks: o.nranks,
        bytes: o.bytes,
        count,
        dtype,
        segment,
        params,
        modelUs: m.time,
        formulaUs: formula,
        steps: m.steps,
        messages: m.messages,
        maxBytesSent: m.maxBytesSent,
        criticalRank: m.criticalRank,
      });
      return;
    }
    out(`${collective}/${alg.name}: n = ${o.nranks}, ${what}`);
    out(paramText(params, call.count * dtypeInfo(call.dtype).bytes));
    out(
      `model:   ${timeText(m.time)}  critical path over the schedule's steps (${m.steps} communication steps, ${m.messages} messages, busiest rank sends ${bytesText(m.maxBytesSent)}, last to finish: rank ${m.criticalRank}; ${ms.toFixed(0)} ms)`,
    );
    out(`formula: ${timeText(formula)}  ${alg.cost.steps.text} steps · alpha + beta · (${alg.cost.sent.text}) · s`);
    const why = whyTheyDiffer(m.time, formula, params);
    if (why) out(why);
    return;
  }

  // Progress on stderr, written synchronously (the sweep blocks the event loop): redrawn in place
  // on a terminal, else (piped, logged) a line per group size once it has run 2 s, so a sweep of
  // minutes never sits silent; --no-progress turns it off.
  const status = new StatusLine(`cclab model ${collective}`);
  const t0 = Date.now();
  const piped = o.progress !== false && process.stderr.isTTY !== true;
  let last = t0;
  const r = sweep(algs, {
    sizes,
    bytes: o.bytes,
    dtype,
    root: o.root,
    segment: o.segment,
    params,
    onSize: (n, i, total) => {
      // The model's work grows faster than N: the size before's time lets a reader guess this one's.
      const now = Date.now();
      const before = i > 0 ? `; N = ${sizes[i - 1]} took ${((now - last) / 1000).toFixed(0)} s` : "";
      last = now;
      const what = `modelling N = ${n} (${i + 1} of ${total})`;
      if (piped && now - t0 >= 2000)
        process.stderr.write(
          `cclab model ${collective}: ${what}, ${((now - t0) / 1000).toFixed(0)} s so far${before}\n`,
        );
      else if (o.progress !== false) status.update(what);
    },
  });
  status.done();
  if (o.output) {
    const svg = sweepChart(r, collective, o.bytes, params);
    writeFileSync(o.output, o.output.endsWith(".html") ? htmlPage(`cclab model ${collective}`, svg) : svg);
  }
  if (o.json) {
    printJson({
      collective,
      algorithms: r.algorithms,
      bytes: o.bytes,
      count,
      dtype,
      params,
      rows: r.rows.map((row) => ({ nranks: row.n, modelUs: row.times, formulaUs: row.formulas })),
      crossovers: r.crossovers.map((c) => ({
        a: c.a,
        b: c.b,
        at: c.at,
        between: c.between,
        fasterAbove: c.fasterAbove,
      })),
      seconds: r.seconds,
      ...(o.output ? { output: o.output } : {}),
    });
    return;
  }
  out(`${collective}: ${r.algorithms.join(" vs ")}, ${what}`);
  out(paramText(params));
  // The model's times answer which is faster; the header formulas (in --json) would only add a second opinion.
  const head = ["N", ...r.algorithms, "fastest"];
  const rows = r.rows.map((row) => {
    const best = row.times.indexOf(minOf(row.times));
    return [String(row.n), ...row.times.map(timeText), r.algorithms[best] ?? ""];
  });
  const widths = head.map((h, i) =>
    maxOf(
      rows.map((x) => (x[i] ?? "").length),
      h.length,
    ),
  );
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join("  ");
  out(line(head));
  for (const row of rows) out(line(row));
  if (r.crossovers.length === 0) out("no crossover in this range");
  for (const c of r.crossovers) {
    out(
      `crossover: ${c.a} = ${c.b} at N ≈ ${Math.round(c.at)} (between ${c.between[0]} and ${c.between[1]}); ${c.fasterAbove} is faster above`,
    );
  }
  out(`${sizes.length} sizes up to N = ${maxOf(sizes)} modelled in ${r.seconds.toFixed(1)} s`);
  if (o.output) out(`wrote ${o.output}`);
}

/**
 * Why the model's time and the header formula's differ, where they do (by more than 1%): the
 * model is the time to use, the formula the header's closed form for reading the algorithm.
 */
export function whyTheyDiffer(model: number, formula: number, params: ModelParams): string | undefined {
  if (!(model > 0) || !(formula > 0) || Math.abs(model - formula) <= 0.01 * model) return undefined;
  const what =
    "the model (the time to go by) walks every message of the schedule; the formula is the header's closed form, steps x alpha plus the busiest rank's bytes sent x beta, as if no message waited and none overlapped another";
  const pct = (a: number, b: number) =>
    a >= 2 * b ? `${(a / b).toFixed(1)} times` : `${Math.round((100 * (a - b)) / b)}% above`;
  const here =
    model > formula
      ? `the model is ${pct(model, formula)} the formula: messages queue for their sender's outgoing and their receiver's incoming link (a rank receiving from several peers takes them one after another) and wait for the data they carry${(params.contention ?? "shared") === "shared" ? "; --contention none times them without the queueing" : ""}`
      : `the formula is ${pct(formula, model)} the model: the schedule overlaps what the formula adds up in series (pipelined segments, steps on different links at once)`;
  return `why they differ: ${what}. Here ${here}.`;
}

/** -b/-e/-f as bench reads them, errors naming model's flags. */
function sizeRange(min: number, max: number, factor: number): number[] {
  if (min < 1)
    throw new InvalidArgumentError({ op: "model", arg: "-b" }, `a size sweep starts at 1 byte or more, got ${min}`);
  if (max < min) throw new InvalidArgumentError({ op: "model", arg: "-e" }, `${max} is smaller than -b ${min}`);
  if (!(factor > 1)) throw new InvalidArgumentError({ op: "model", arg: "-f" }, `must be > 1, got ${factor}`);
  return sizeSweep(min, max, factor);
}

/**
 * The network model (--topology), and sweeps over sizes on either model: one call, or several
 * algorithms over N (--sweep-n, --max-n) or over sizes (-b/-e/-f, --sweep-bytes); --nccl-tuner
 * writes NCCL's tuner CSV from a size sweep.
 */
async function modelGrid(
  collective: string,
  o: ModelOptions,
  network: NetworkRequest | undefined,
  ns: number[] | undefined,
  bytesSweep: number[] | undefined,
): Promise<void> {
  const spec = specOf(collective, { op: "model" });
  refuseAlphaBeta("model", o.given ?? [], network);
  if (!network) {
    for (const n of ns ?? [o.nranks]) checkAlphaBetaRanks(ns ? "--sweep-n" : "-n", n);
  }
  if (ns && bytesSweep) {
    throw new InvalidArgumentError(
      { op: "model", arg: "--sweep-n" },
      "sweeps N at one size; -b/-e/-f and --sweep-bytes sweep sizes at one N: give one of them",
    );
  }
  if (bytesSweep && o.given?.includes("bytes")) {
    throw new InvalidArgumentError(
      { op: "model", arg: "--bytes" },
      "is one size; -b/-e/-f (or --sweep-bytes) sweep sizes: give one of them",
    );
  }
  const dtype = spec.defaultDtype;
  const common = {
    collective: spec.name as Collective,
    dtype,
    root: o.root,
    segment: o.segment,
    gamma: o.gamma,
    json: o.json,
    output: o.output,
  };
  if (network?.simgrid && (ns || bytesSweep || o.ncclTuner !== undefined)) {
    throw new InvalidArgumentError(
      { op: "model", arg: "--engine" },
      "simgrid times one call (one -n, one --bytes); sweeps and --nccl-tuner use exact, phases or auto",
    );
  }
  if (o.ncclTuner !== undefined) {
    ncclTuner(o.ncclTuner, { ...o, params: paramsOf(o) }, { ...common, network, ns, bytesSweep });
    return;
  }
  if (!ns && !bytesSweep) {
    const algs = await algorithmsFor(spec.name, o, false);
    modelOnNetwork(algs[0] as Algorithm, network as NetworkRequest, {
      ...common,
      nranks: o.nranks,
      bytes: o.bytes,
      progress: o.progress,
    });
    return;
  }
  const algs = await algorithmsFor(spec.name, o, true);
  const g: GridOptions = {
    ...common,
    over: ns ? "n" : "bytes",
    ns: ns ?? [o.nranks],
    sizes: bytesSweep ?? [o.bytes],
    params: network ? undefined : paramsOf(o),
    network,
    progress: o.progress !== false,
  };
  reportGrid(runGrid(algs, g), g);
}

export function registerModel(program: Command): void {
  const p = parsers("model");
  const cmd = program
    .command("model")
    .description(
      "time an algorithm's schedule: the alpha-beta model, or with --topology a network model (flows on links); sweep N or sizes for crossovers",
    )
    .argument("<collective>", "allreduce, broadcast, ... (torch's names too)")
    .option("--algorithm <name>", "the algorithm (see cclab list)")
    .option("--algorithms <a,b>", "algorithms to compare in a sweep (default for allreduce: ring,double_binary_tree)")
    .option("--algorithm-file <file>", "your own algorithm file")
    .addOption(
      nranksOption(
        `ranks (the alpha-beta model: up to ${MODEL_MAX_RANKS}; with --topology up to the topology's hosts and the engine's reach)`,
        p.int("-n", 1, MAX_TOPOLOGY_HOSTS),
        8,
      ),
    )
    .addOption(
      new Option("--size <n>", "old spelling of --nranks").argParser(p.int("--size", 1, MAX_TOPOLOGY_HOSTS)).hideHelp(),
    )
    .option(
      "--bytes <size>",
      "message size S, nccl-tests' bytes (the whole array; per-rank collectives get S / n per rank): 8, 64K, 1M, 1G",
      p.size("--bytes"),
      1024 * 1024,
    )
    .option("--root <n>", "root rank", p.int("--root", 0), 0)
    .option("--alpha <us>", "latency per message, microseconds", p.number("--alpha"), 5)
    .option("--beta <x>", "microseconds per byte, or a bandwidth like 25GB/s", parseBeta, betaFromGBps(25))
    .option("--gamma <us-per-byte>", "local reduction cost, microseconds per byte", p.number("--gamma"), 0)
    .option(
      "--segment <n>",
      "pipelining segment in elements (default: the algorithm's own, else 128 KiB, as the front API)",
      p.int("--segment", 1),
    )
    .option("--contention <mode>", "'shared': a rank's concurrent transfers share its link; 'none'", "shared")
    .option("--sweep-n <list>", "group sizes to sweep, e.g. 2,4,...,512", sizeList)
    .option("--max-n <n>", "sweep N = 2, 4, ..., max", p.int("--max-n", 2, MAX_TOPOLOGY_HOSTS))
    .option("-b, --minbytes <size>", "sweep sizes from this (nccl-tests' bytes, as bench): 1K, 1M", p.size("-b"))
    .option("-e, --maxbytes <size>", "sweep sizes up to this", p.size("-e"))
    .option("-f, --stepfactor <f>", "size sweep: multiply the size by f each step (default 2)", p.number("-f"))
    .option("--sweep-bytes <list>", "sizes to sweep, e.g. 1K,64K,1M,64M", bytesList)
    .option(
      "--no-progress",
      "no progress on stderr (sweeps: a bar or line on a terminal, and when piped a line per N or point once a sweep has run 2 s; a line while a call of more than 64 ranks runs)",
    )
    .option(
      "--nccl-tuner <file.csv>",
      "write NCCL's example tuner plugin CSV: the fastest of NCCL's algorithms (ring, tree, pat) per size range, over -b/-e/-f (default 1K to 256M)",
    )
    .addOption(
      outputOption(
        "a sweep: the chart (time against N, or busbw against size); one call on --topology: the link heat map (.svg or .html)",
      ),
    )
    .option(
      "--machine <file.json>",
      "alpha, and beta, gamma and copy by buffer size, measured on this machine (cclab calibrate -o FILE); --alpha/--beta/--gamma given override it",
    )
    .addOption(jsonOption());
  addNetworkOptions(cmd);
  cmd.action(async (collective: string, o: ModelOptions & { size?: number; machine?: string }, c: Command) => {
    const given = givenOptions(c);
    const measured = o.machine === undefined ? {} : machineOptions(o.machine, o, given, o.size ?? o.nranks);
    await model(collective, { ...o, ...measured, nranks: o.size ?? o.nranks, given });
  });
}
