/**
 * `cclab model` on a network (--topology, docs/network.md): one call timed by the flow model
 * (time, algbw and busbw as nccl-tests defines them, the critical rank, the engine and whether it
 * approximates, the machine, the hottest links), or several algorithms swept over rank counts or
 * over sizes with their crossovers, as a table, --json and (-o) a chart. Sizes are nccl-tests'
 * (as cclab bench): S bytes is the whole array, so per-rank collectives get S / n per rank.
 */
import { writeFileSync } from "node:fs";
import Table from "cli-table3";
import { NO_PROGRESS, progressBar } from "../bench/plan.js";
import type { DType } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { minOf } from "../core/extent.js";
import { simgridResult } from "../export/simgrid.js";
import { bandwidths, callOf, machineFor, type NetworkRequest, timeOnMachine } from "../model/machine.js";
import { AUTO_EXACT_MAX_RANKS, bytesByClass, hottestLinks, type LinkLoad } from "../model/network/index.js";
import { type GridSweep, gridChart, gridSweep, type PointResult } from "../model/sweep.js";
import type { Algorithm } from "../schedule/dsl.js";
import type { ModelParams } from "../schedule/model.js";
import { withShape } from "../schedule/shape.js";
import { type Collective, specOf } from "../specs/index.js";
import { busbwChartSvg, linkHeatmapSvg } from "../viz/network.js";
import { bytesText, htmlPage, timeText } from "../viz/svg.js";
import { printJson } from "./options.js";
import { shapeOfTopology } from "./topology-shape.js";

/** Links --json lists per call (by utilization, then id): enough for any heat map, bounded for 16,384 ranks. */
export const JSON_MAX_LINKS = 100;
/** Links the text report lists. */
export const REPORT_LINKS = 10;

export interface NetworkRunOptions {
  readonly collective: Collective;
  readonly nranks: number;
  readonly bytes: number;
  readonly dtype: DType;
  readonly root: number;
  readonly segment?: number;
  readonly gamma: number;
  readonly json?: boolean;
  readonly output?: string;
  /** A line on stderr (a terminal only) while a large call runs; --no-progress turns it off. */
  readonly progress?: boolean;
}

/** cli-table3 without a rule between rows. */
const COMPACT = { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" };

const gbps = (x: number) => `${x.toFixed(2)} GB/s`;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function linkRow(l: LinkLoad): string[] {
  return [String(l.link), l.from, l.to, l.kind, bytesText(Math.round(l.bytes)), pct(l.utilization)];
}

/** One call of one algorithm on the network. */
export function modelOnNetwork(given: Algorithm, request: NetworkRequest, o: NetworkRunOptions): void {
  if (o.output && !/\.(svg|html)$/i.test(o.output)) {
    throw new InvalidArgumentError(
      { op: "model", arg: "--output" },
      `${o.output}: one call writes the link heat map as .svg or .html (--json has the links' bytes)`,
    );
  }
  const n = o.nranks;
  const machine = machineFor(request, n);
  // The algorithm sees the machine it is timed on (a torus's dimensions, ranks where --placement puts them).
  const alg = withShape(given, shapeOfTopology(machine.topology, machine.placement), {
    op: "model",
    arg: "--topology",
  });
  const { call, size } = callOf(alg, n, o.bytes, { dtype: o.dtype, root: o.root, segment: o.segment });
  // On a terminal, a bar over the distinct rounds the phases engine solves, or the messages the
  // exact engine starts (stderr); --no-progress turns it off.
  const busy = n > AUTO_EXACT_MAX_RANKS && o.progress !== false && process.stderr.isTTY === true;
  const bar = busy ? progressBar(`cclab model ${alg.name} on ${n} ranks`) : NO_PROGRESS;
  let started = false;
  let shown = 0;
  const t0 = performance.now();
  const r = request.simgrid
    ? simgridResult(alg, call, machine.topology, machine.placement, o.gamma)
    : timeOnMachine(
        alg,
        call,
        machine,
        o.gamma,
        busy
          ? (done, total, what) => {
              if (!started) {
                bar.start(total);
                started = true;
              }
              if (done > shown) {
                bar.tick(what, done - shown);
                shown = done;
              }
            }
          : undefined,
      );
  const seconds = (performance.now() - t0) / 1000;
  if (started) bar.stop();
  const bw = bandwidths(o.collective, n, size, r.time);
  const t = machine.topology;
  const links = hottestLinks(t, r.linkBytes, r.time, JSON_MAX_LINKS);
  let used = 0;
  for (const b of r.linkBytes) if (b > 0) used++;
  const classes = bytesByClass(t, r.linkBytes);
  if (o.output) {
    const title = `${o.collective}/${alg.name}, ${bytesText(size)} on ${n} ranks: link utilization on ${t.name}`;
    const svg = linkHeatmapSvg(t, r.linkBytes, r.time, { title });
    writeFileSync(
      o.output,
      o.output.toLowerCase().endsWith(".html") ? htmlPage(`cclab model ${o.collective}`, svg) : svg,
    );
  }
  if (o.json) {
    printJson({
      collective: o.collective,
      algorithm: alg.name,
      nranks: n,
      bytes: o.bytes,
      size,
      count: call.count,
      dtype: o.dtype,
      segment: call.segment,
      gamma: o.gamma,
      topology: {
        spec: request.topology,
        name: t.name,
        family: t.family,
        hosts: t.hosts,
        links: t.links.count,
        routing: t.routing,
        description: machine.description,
      },
      placement: request.placement ?? (t.placement ? "file" : "block"),
      engine: r.engine,
      engineAsked: machine.engine,
      approximate: r.approximate,
      ...(r.symmetry ? { symmetry: r.symmetry } : {}),
      ...(r.note ? { note: r.note } : {}),
      timeUs: r.time,
      algbw: bw.algbw,
      busbw: bw.busbw,
      criticalRank: r.criticalRank,
      messages: r.messages,
      operations: r.operations,
      solves: r.solves,
      work: r.work,
      seconds,
      linksUsed: used,
      bytesByClass: classes,
      links,
      ...(o.output ? { output: o.output } : {}),
    });
    return;
  }
  const say = (line: string) => console.log(line);
  say(
    `${o.collective}/${alg.name}: n = ${n}, S = ${bytesText(size)} (nccl-tests' bytes; ${call.count} x ${o.dtype}${specOf(o.collective).perRank ? " per rank" : ""}), segment ${call.segment} elements`,
  );
  for (const line of machine.description) say(line);
  say(
    `placement ${request.placement ?? (t.placement ? "the file's ranks" : "block")}${o.gamma ? `, gamma ${o.gamma} µs/B` : ""}`,
  );
  // The phases engine's note starts by saying it approximates; the exact engine's has none.
  const how =
    r.engine === "simgrid"
      ? ""
      : r.approximate
        ? r.note?.startsWith("approximate")
          ? ""
          : " (approximate)"
        : " (every operation walked)";
  say(`engine: ${r.engine}${how}${r.note ? `: ${r.note}` : ""}`);
  say(
    `time ${timeText(r.time)}  algbw ${gbps(bw.algbw)}  busbw ${gbps(bw.busbw)}  last to finish: rank ${r.criticalRank}  (${r.messages} messages, ${r.operations} operations, ${r.solves} rate solves scanning ${r.work.toLocaleString("en")} link crossings; ${seconds.toFixed(2)} s)`,
  );
  if (links.length === 0) {
    say("no link carried a byte (every message stayed on its host, or there were none)");
    return;
  }
  const table = new Table({
    head: ["link", "from", "to", "kind", "bytes", "utilization"],
    colAligns: ["right", "left", "left", "left", "right", "right"],
    style: { head: [], border: [] },
    chars: COMPACT,
  });
  for (const l of links.slice(0, REPORT_LINKS)) table.push(linkRow(l));
  say(
    `bytes by link kind: ${classes
      .filter((c) => c.bytes > 0)
      .map((c) => `${c.kind} ${bytesText(Math.round(c.bytes))} (${(100 * c.share).toFixed(1)}%)`)
      .join(", ")}`,
  );
  say(`hottest links (mean utilization over the call: bytes / (bandwidth x time)), ${used} of ${t.links.count} used:`);
  say(table.toString());
  if (o.output) say(`wrote ${o.output} (the link heat map)`);
}

export interface GridOptions {
  readonly collective: Collective;
  readonly over: "n" | "bytes";
  readonly ns: readonly number[];
  readonly sizes: readonly number[];
  readonly dtype: DType;
  readonly root: number;
  readonly segment?: number;
  readonly gamma: number;
  readonly params?: ModelParams;
  readonly network?: NetworkRequest;
  readonly json?: boolean;
  readonly output?: string;
  readonly progress: boolean;
}

/** Runs a sweep with a progress bar on stderr (a terminal, --progress) and returns it. */
export function runGrid(given: readonly Algorithm[], o: GridOptions): GridSweep {
  // Over sizes at one n the algorithms see the machine they are timed on; over n each point is
  // another machine, and they keep the flat view.
  const n = o.ns[0];
  const machine = o.network && o.over === "bytes" && n !== undefined ? machineFor(o.network, n) : undefined;
  const shape = machine && shapeOfTopology(machine.topology, machine.placement);
  const algs = shape ? given.map((a) => withShape(a, shape, { op: "model", arg: "--topology" })) : given;
  const points = (o.over === "n" ? o.ns.length : o.sizes.length) * algs.length;
  const bar = o.progress ? progressBar(`cclab model ${o.collective}`) : NO_PROGRESS;
  bar.start(points);
  // Piped (a log, a pipe): a line per point once the sweep has run 2 s, so a long one never sits
  // silent (the bar above draws only on a terminal); --no-progress turns it off.
  const piped = o.progress && process.stderr.isTTY !== true;
  const t0 = Date.now();
  let done = 0;
  try {
    return gridSweep(algs, {
      over: o.over,
      ns: o.ns,
      sizes: o.sizes,
      dtype: o.dtype,
      root: o.root,
      segment: o.segment,
      network: o.network,
      params: o.params,
      gamma: o.gamma,
      onPoint: (what) => {
        bar.tick(what);
        done++;
        const s = (Date.now() - t0) / 1000;
        if (piped && s >= 2)
          process.stderr.write(
            `cclab model ${o.collective}: ${done} of ${points} points (${what}), ${s.toFixed(0)} s so far\n`,
          );
      },
    });
  } finally {
    bar.stop();
  }
}

/** Prints (or --json) a sweep and writes -o's chart. */
export function reportGrid(r: GridSweep, o: GridOptions): void {
  const where = o.network ? `on ${o.network.topology}` : "alpha-beta model";
  const what =
    o.over === "n"
      ? `S = ${bytesText(o.sizes[0] as number)} (nccl-tests' bytes)`
      : `n = ${o.ns[0]}, S from ${bytesText(o.sizes[0] as number)} to ${bytesText(o.sizes[o.sizes.length - 1] as number)}`;
  const title = `${o.collective} ${where}: ${o.over === "n" ? `time against N, S = ${bytesText(o.sizes[0] as number)}` : `busbw against size, n = ${o.ns[0]}`}`;
  if (o.output) {
    const svg =
      r.over === "bytes"
        ? busbwChartSvg(
            r.algorithms.map((name, i) => ({
              name,
              points: r.rows
                .filter((row) => Number.isFinite(row.results[i]?.time))
                .map((row) => [row.size, (row.results[i] as PointResult).busbw] as [number, number]),
            })),
            title,
          )
        : gridChart(r, title);
    writeFileSync(o.output, o.output.endsWith(".html") ? htmlPage(`cclab model ${o.collective}`, svg) : svg);
  }
  if (o.json) {
    printJson({
      collective: o.collective,
      over: r.over,
      algorithms: r.algorithms,
      dtype: o.dtype,
      ...(o.network ? { topology: o.network.topology, description: r.topology } : { params: o.params }),
      rows: r.rows.map((row) => ({
        nranks: row.n,
        size: row.size,
        count: row.count,
        results: row.results.map((p, i) => ({ algorithm: r.algorithms[i], ...p })),
      })),
      crossovers: r.crossovers,
      seconds: r.seconds,
      ...(o.output ? { output: o.output } : {}),
    });
    return;
  }
  const say = (line: string) => console.log(line);
  say(`${o.collective} ${where}: ${r.algorithms.join(" vs ")}, ${what}, ${o.dtype}`);
  for (const line of r.topology ?? []) say(line);
  const head = [o.over === "n" ? "N" : "size", ...r.algorithms.flatMap((a) => [`${a} time`, "busbw"]), "fastest"];
  const table = new Table({
    head,
    style: { head: [], border: [] },
    chars: COMPACT,
    colAligns: head.map(() => "right"),
  });
  const notes: string[] = [];
  for (const row of r.rows) {
    const times = row.results.map((p) => p.time);
    const finite = times.filter(Number.isFinite);
    const best = finite.length ? times.indexOf(minOf(finite)) : -1;
    table.push([
      o.over === "n" ? String(row.n) : bytesText(row.size),
      ...row.results.flatMap((p, i) => {
        if (p.error)
          notes.push(`${r.algorithms[i]} at ${o.over === "n" ? `N = ${row.n}` : bytesText(row.size)}: ${p.error}`);
        return p.error ? ["-", "-"] : [`${timeText(p.time)}${p.approximate ? "~" : ""}`, p.busbw.toFixed(2)];
      }),
      best >= 0 ? (r.algorithms[best] as string) : "-",
    ]);
  }
  say(table.toString());
  if (r.rows.some((row) => row.results.some((p) => p.approximate))) {
    say("~ approximate: the phases engine (logical rounds solved once; docs/network.md)");
  }
  for (const note of notes) say(`not modelled: ${note}`);
  if (r.crossovers.length === 0) say("no crossover in this range");
  for (const c of r.crossovers) {
    const at = o.over === "n" ? `N ≈ ${Math.round(c.at)}` : `S ≈ ${bytesText(Math.round(c.at))}`;
    const between =
      o.over === "n"
        ? `${c.between[0]} and ${c.between[1]}`
        : `${bytesText(c.between[0])} and ${bytesText(c.between[1])}`;
    say(`crossover: ${c.a} = ${c.b} at ${at} (between ${between}); ${c.fasterAbove} is faster above`);
  }
  say(`${r.rows.length} points x ${r.algorithms.length} algorithms modelled in ${r.seconds.toFixed(1)} s`);
  if (o.output) say(`wrote ${o.output}`);
}
