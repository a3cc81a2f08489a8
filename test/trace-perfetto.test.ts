/**
 * Issue 13's Perfetto/Chrome export: a sim run and an MPI run (cclab trace --backend mpi
 * --format perfetto) written as Trace Event JSON and held to what ui.perfetto.dev and
 * chrome://tracing need: known phases, integer pids/tids with names, per thread timestamps in
 * order and slices nested or apart (never half-overlapping), a flow from every send slice to the
 * receive slice it matched ('s' and 'f' paired by id, each inside its slice), bytes/peer/step
 * args on every transfer. The MPI part skips, saying why, where MPI or mpirun is missing.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultTraceCall, sendSendDeadlock, traceOnSim } from "../src/cli/trace.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { Trace } from "../src/trace.js";
import { pairMessages } from "../src/viz/diagram.js";
import { type PerfettoTrace, type TraceEventJson, toPerfetto } from "../src/viz/perfetto.js";
import { eventNotes, stepThrough } from "../src/viz/steps.js";
import { mpiSkipReason } from "./support/mpi.js";

const PHASES = new Set(["M", "X", "s", "f", "i"]);
const METADATA = new Set(["process_name", "process_sort_index", "process_labels", "thread_name", "thread_sort_index"]);

/** Checks a Trace Event JSON object; returns its slices and flows for further checks. */
function validate(json: unknown): { slices: TraceEventJson[]; flows: Map<number, TraceEventJson[]> } {
  const t = json as PerfettoTrace;
  expect(Array.isArray(t.traceEvents)).toBe(true);
  const processes = new Set<number>();
  const threads = new Set<string>();
  const slices: TraceEventJson[] = [];
  const flows = new Map<number, TraceEventJson[]>();
  const tracks = new Map<string, TraceEventJson[]>();
  let lastTs = Number.NEGATIVE_INFINITY;
  for (const e of t.traceEvents) {
    expect(PHASES.has(e.ph), `phase ${e.ph}`).toBe(true);
    expect(typeof e.name).toBe("string");
    expect(Number.isInteger(e.pid) && e.pid >= 0, `pid ${e.pid}`).toBe(true);
    expect(Number.isInteger(e.tid) && e.tid >= 0, `tid ${e.tid}`).toBe(true);
    if (e.ph === "M") {
      expect(METADATA.has(e.name), e.name).toBe(true);
      expect(e.args).toBeDefined();
      if (e.name === "process_name") processes.add(e.pid);
      if (e.name === "thread_name") threads.add(`${e.pid}/${e.tid}`);
      continue;
    }
    expect(typeof e.ts === "number" && Number.isFinite(e.ts) && e.ts >= 0, `ts ${e.ts}`).toBe(true);
    // Timed events come in time order (so per track too).
    expect(e.ts as number).toBeGreaterThanOrEqual(lastTs);
    lastTs = e.ts as number;
    expect(processes.has(e.pid), `pid ${e.pid} has a process_name`).toBe(true);
    expect(threads.has(`${e.pid}/${e.tid}`), `${e.pid}/${e.tid} has a thread_name`).toBe(true);
    if (e.ph === "X") {
      expect(e.dur as number).toBeGreaterThan(0);
      slices.push(e);
      const key = `${e.pid}/${e.tid}`;
      tracks.set(key, [...(tracks.get(key) ?? []), e]);
    } else if (e.ph === "s" || e.ph === "f") {
      expect(typeof e.id).toBe("number");
      flows.set(e.id as number, [...(flows.get(e.id as number) ?? []), e]);
      if (e.ph === "f") expect(e.bp).toBe("e");
    }
  }
  // Slices of one thread nest or are apart: Perfetto drops half-overlapping ones.
  for (const [key, list] of tracks) {
    const open: number[] = [];
    for (const s of list) {
      const a = s.ts as number;
      const b = a + (s.dur as number);
      while (open.length > 0 && (open[open.length - 1] as number) <= a) open.pop();
      const top = open[open.length - 1];
      expect(top === undefined || b <= top, `${key}: slice at ${a} overlaps its neighbour`).toBe(true);
      open.push(b);
    }
  }
  // Flows paired: one 's' and one 'f' per id, in time order, each inside a slice of its thread.
  const inside = (e: TraceEventJson) =>
    (tracks.get(`${e.pid}/${e.tid}`) ?? []).filter(
      (s) => (s.ts as number) <= (e.ts as number) && (e.ts as number) <= (s.ts as number) + (s.dur as number),
    );
  for (const [id, pair] of flows) {
    expect(pair.map((p) => p.ph).sort(), `flow ${id}`).toEqual(["f", "s"]);
    const s = pair.find((p) => p.ph === "s") as TraceEventJson;
    const f = pair.find((p) => p.ph === "f") as TraceEventJson;
    expect(f.ts as number).toBeGreaterThanOrEqual(s.ts as number);
    const from = inside(s);
    const to = inside(f);
    expect(from).toHaveLength(1);
    expect(to).toHaveLength(1);
    expect(from[0]?.name).toBe(`send → ${f.pid}`);
    expect(to[0]?.name).toBe(`recv ← ${s.pid}`);
    expect(from[0]?.args?.bytes).toBe(to[0]?.args?.bytes);
  }
  for (const s of slices) {
    if (!/^(send|recv)/.test(s.name)) continue;
    expect(s.args?.bytes).toBeGreaterThan(0);
    expect(typeof s.args?.peer).toBe("number");
    expect(typeof s.args?.step).toBe("number");
  }
  return { slices, flows };
}

const ring = findAlgorithm("allreduce", "ring", { op: "test" });

describe("Perfetto export from sim", () => {
  it("ring all-reduce n = 8: a slice per operation, a flow per message, one process per rank", async () => {
    const call = defaultTraceCall(ring, 8);
    const events = await traceOnSim(ring, call);
    const notes = eventNotes(stepThrough(ring, call), events);
    const trace = toPerfetto(events, { title: "allreduce/ring on sim, n = 8", unit: "tick", size: 8, notes });
    // Through JSON text, as a viewer reads it.
    const { slices, flows } = validate(JSON.parse(JSON.stringify(trace)));
    expect(slices).toHaveLength(events.length);
    expect(flows.size).toBe(pairMessages(events).messages.length);
    expect(flows.size).toBe(8 * 14);
    const names = trace.traceEvents.filter((e) => e.name === "process_name").map((e) => e.args?.name);
    expect(names).toEqual(Array.from({ length: 8 }, (_, r) => `rank ${r}`));
    expect(slices.filter((s) => s.name === "reduce")).toHaveLength(events.filter((e) => e.kind === "reduce").length);
    // Steps as explain numbers them (1 to 14 at n = 8), and each transfer's region in explain's words.
    const sends = slices.filter((s) => s.name.startsWith("send"));
    expect([...new Set(sends.map((s) => s.args?.step))].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 14 }, (_, i) => i + 1),
    );
    const first = sends.find((s) => s.pid === 0 && s.args?.step === 1);
    expect(first?.args?.region).toBe("in[7]");
  });

  it("double binary tree n = 16: overlapping transfers go to extra threads, never half-overlap", async () => {
    const dbt = findAlgorithm("allreduce", "double_binary_tree", { op: "test" });
    const call = defaultTraceCall(dbt, 16);
    const events = await traceOnSim(dbt, call);
    const trace = toPerfetto(events, { title: "dbt", unit: "tick", notes: eventNotes(stepThrough(dbt, call), events) });
    const { flows } = validate(trace);
    expect(flows.size).toBe(events.filter((e) => e.kind === "send").length);
    const threads = trace.traceEvents.filter((e) => e.name === "thread_name").map((e) => e.args?.name);
    expect(threads).toContain("transfers 2");
  });

  it("a deadlock: an instant on each blocked rank, naming its wait", async () => {
    const t = new Trace();
    await sendSendDeadlock(2, t);
    const trace = toPerfetto(t.events, { title: "deadlock", unit: "tick", size: 2, deadlocks: t.deadlocks });
    validate(trace);
    const marks = trace.traceEvents.filter((e) => e.ph === "i");
    expect(marks.map((m) => m.name).sort()).toEqual([
      "deadlock: blocked in send to 0",
      "deadlock: blocked in send to 1",
    ]);
  });
});

const skip = mpiSkipReason("trace-perfetto mpi tests") !== "";

describe.skipIf(skip)("Perfetto export from an MPI run", () => {
  const dir = mkdtempSync(join(tmpdir(), "cclab-perfetto-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("cclab trace allreduce --backend mpi -n 4 --format perfetto: microsecond slices, every message a flow", () => {
    const file = join(dir, "ring.json");
    const r = spawnSync(
      process.execPath,
      ["src/cli/bin.js", "trace", "allreduce", "--algorithm", "ring", "-n", "4", "--backend", "mpi"].concat([
        "-o",
        file,
        "--format",
        "perfetto",
      ]),
      { encoding: "utf8", timeout: 60_000, env: { ...process.env, CCLAB_TIMEOUT: "30" } },
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const json = JSON.parse(readFileSync(file, "utf8")) as PerfettoTrace;
    const { slices, flows } = validate(json);
    expect(flows.size).toBe(4 * 6);
    expect(slices.filter((s) => s.name.startsWith("send"))).toHaveLength(24);
    expect(json.displayTimeUnit).toBe("ns");
    expect(JSON.stringify(json.metadata)).toContain("µs");
  });
});
