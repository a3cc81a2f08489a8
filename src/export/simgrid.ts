/**
 * SimGrid as a second opinion on cclab's network model: a call's schedule (program.ts) and the
 * machine it runs on (topology, placement) handed to src/export/simgrid_replay.py, which replays
 * it on SimGrid's own max-min flow model (CM02 without corrections) with one actor per rank, and
 * its time read back. Needs SimGrid's Python module (Debian's python3-simgrid); where it is
 * missing, simgridPython() says so and how to get it.
 *
 * Where the two models differ by design: cclab's model overlaps a queued message's latency with
 * the wait for the one before it on the same pair of ranks; the replay starts a queued message
 * (latency and all) when the one before it has arrived. Routes must be single-path (SimGrid has
 * one route per pair of hosts): a multipath routing is refused, naming it.
 *
 * May import: core, schedule, specs, model/network, export/program.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError, UnavailableError } from "../core/errors.js";
import type { NetworkResult, Placement, Topology } from "../model/network/index.js";
import type { Algorithm } from "../schedule/dsl.js";
import type { CollectiveCall } from "../specs/types.js";
import { type Program, type ProgramOp, programOf } from "./program.js";

export const SIMGRID_SCRIPT = fileURLToPath(new URL("./simgrid_replay.py", import.meta.url));

let found: string | null | undefined;

/** A python3 that imports simgrid: $CCLAB_SIMGRID_PYTHON, else /usr/bin/python3 (Debian's), else python3. */
export function simgridPython(): string | undefined {
  if (found !== undefined) return found ?? undefined;
  const asked = process.env.CCLAB_SIMGRID_PYTHON;
  const candidates = asked ? [asked] : ["/usr/bin/python3", "python3"];
  found = null;
  for (const py of candidates) {
    const r = spawnSync(py, ["-c", "import simgrid"], { stdio: "ignore", timeout: 20_000 });
    if (r.status === 0) {
      found = py;
      break;
    }
  }
  return found ?? undefined;
}

export const SIMGRID_MISSING =
  "SimGrid's Python module is not installed: apt-get install python3-simgrid (Debian, Ubuntu), or set CCLAB_SIMGRID_PYTHON to a python3 that can import simgrid";

/** The case the replay reads: ranks on hosts, the links and routes they use, every rank's program. */
export function simgridCase(p: Program, topology: Topology, placement: Placement): object {
  const linkIndex = new Map<number, number>();
  const links: number[] = [];
  const routes: Record<string, { links: number[]; latency: number }> = {};
  const hopUs = topology.hopLatency;
  for (let r = 0; r < p.nranks; r++) {
    for (const o of p.ranks[r] as readonly ProgramOp[]) {
      if (o.kind !== "send" || o.bytes === 0) continue;
      const a = placement[r] as number;
      const b = placement[o.peer] as number;
      const key = `${a} ${b}`;
      if (a === b || routes[key]) continue;
      const paths = topology.paths(a, b);
      if (paths.length !== 1) {
        throw new InvalidArgumentError(
          { op: "model", arg: "--engine" },
          `simgrid replays single-path routes only; ${topology.name} routes host ${a} to ${b} over ${paths.length} paths (${topology.routing}): choose a single-path routing`,
        );
      }
      const path = paths[0] as readonly number[];
      let latencyUs = 0;
      const ids = path.map((l) => {
        // The links' latencies and the per-hop switching latency, as simulate.ts charges a route.
        latencyUs += (topology.links.latency[l] as number) + hopUs;
        let i = linkIndex.get(l);
        if (i === undefined) {
          i = links.length;
          linkIndex.set(l, i);
          links.push((topology.links.bandwidth[l] as number) * 1e6); // bytes/µs -> bytes/s
        }
        return i;
      });
      routes[key] = { links: ids, latency: latencyUs * 1e-6 };
    }
  }
  const programs = p.ranks.map((ops) => {
    const lastPosted = new Map<string, number>();
    return ops.map((o, i) => {
      const out: Record<string, unknown> = { k: o.kind[0], p: o.peer, t: o.tag, b: o.bytes, ns: o.ns, d: o.deps };
      if (o.kind !== "calc") {
        // Sends and receives per (peer, channel) are posted in program order (the interpreter's rule).
        const key = `${o.kind} ${o.peer} ${o.channel ?? 0}`;
        const before = lastPosted.get(key);
        if (before !== undefined) out.a = [before];
        lastPosted.set(key, i);
      }
      return out;
    });
  });
  return { ranks: p.nranks, host: Array.from(placement.slice(0, p.nranks)), links, routes, programs };
}

/** The schedule's time on SimGrid, microseconds (the slowest rank's finish). */
export function simgridTime(
  p: Program,
  topology: Topology,
  placement: Placement,
  o: { readonly timeoutMs?: number } = {},
): { timeUs: number; finishUs: number[]; seconds: number } {
  const py = simgridPython();
  if (!py) throw new UnavailableError(SIMGRID_MISSING);
  const dir = mkdtempSync(join(tmpdir(), "cclab-simgrid-"));
  try {
    const file = join(dir, "case.json");
    writeFileSync(file, JSON.stringify(simgridCase(p, topology, placement)));
    const t0 = performance.now();
    const r = spawnSync(py, [SIMGRID_SCRIPT, file], {
      encoding: "utf8",
      timeout: o.timeoutMs ?? 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const seconds = (performance.now() - t0) / 1000;
    if (r.error || r.status !== 0) {
      const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
      throw new Error(
        `simgrid replay of ${p.collective}/${p.algorithm} on ${p.nranks} ranks failed (${why}): ${(r.stderr ?? "").trim().slice(-800)}`,
      );
    }
    const out = JSON.parse(r.stdout.trim().split("\n").pop() as string) as { time_us: number; finish_us: number[] };
    return { timeUs: out.time_us, finishUs: out.finish_us, seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One call timed by SimGrid, as cclab model reports a network engine's result: the time and the
 * rank that finishes last from SimGrid; messages, operations and each link's bytes from the
 * schedule and its routes (they do not depend on timing).
 */
export function simgridResult(
  alg: Algorithm,
  call: CollectiveCall,
  topology: Topology,
  placement: Placement,
  gamma = 0,
): NetworkResult {
  const p = programOf(alg, call, { gamma });
  const r = simgridTime(p, topology, placement);
  const linkBytes = new Float64Array(topology.links.count);
  let messages = 0;
  let operations = 0;
  p.ranks.forEach((ops, rank) => {
    operations += ops.length;
    for (const o of ops) {
      if (o.kind !== "send" || o.bytes === 0) continue;
      messages++;
      const a = placement[rank] as number;
      const b = placement[o.peer] as number;
      if (a !== b)
        for (const l of (topology.paths(a, b)[0] ?? []) as readonly number[])
          linkBytes[l] = (linkBytes[l] as number) + o.bytes;
    }
  });
  let criticalRank = 0;
  r.finishUs.forEach((t, k) => {
    if (t > (r.finishUs[criticalRank] as number)) criticalRank = k;
  });
  return {
    time: r.timeUs,
    criticalRank,
    messages,
    operations,
    engine: "simgrid",
    approximate: false,
    note: `SimGrid's max-min model (CM02 without corrections), ${r.seconds.toFixed(1)} s in SimGrid`,
    linkBytes,
    solves: 0,
    work: 0,
  };
}
