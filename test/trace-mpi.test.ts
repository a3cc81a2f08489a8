/**
 * Issue 7, the same picture whichever backend recorded it. The tracing Comm wrapper
 * (src/tracing.ts) on sim's comms records what sim's own trace records: the same transfers,
 * paired, with the same bytes per rank, in world ranks, through splits too. Under a real
 * mpirun, `cclab trace --backend mpi` draws the same diagram as sim's (lanes, one arrow per
 * message). The mpi part skips, saying why, where MPI or mpirun is missing.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mpirunCommand } from "../src/backends/mpi/index.js";
import { defaultTraceCall, shapeFor, traceOnSim } from "../src/cli/trace.js";
import { allocate, invoke } from "../src/collectives/dispatch.js";
import { view, zeros } from "../src/core/buffer.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { spawn } from "../src/sim/index.js";
import { Trace, type TraceEvent } from "../src/trace.js";
import { mergeTraces, sharedClockMicros, TracingComm, withTracing } from "../src/tracing.js";
import { pairMessages, stepOf } from "../src/viz/diagram.js";
import { assertWellFormed, count } from "./fixtures/viz/check.js";
import { mpiSkipReason } from "./support/mpi.js";

const site = { op: "test" };
const ring = findAlgorithm("allreduce", "ring", site);

/** A clock that ticks by one on every read: deterministic, strictly increasing. */
function counter(): () => number {
  let t = 0;
  return () => ++t;
}

const kinds = (events: readonly TraceEvent[]) => {
  const out: Record<string, number> = {};
  for (const e of events) out[e.kind] = (out[e.kind] ?? 0) + 1;
  return out;
};

describe("TracingComm on sim's comms", () => {
  it("records every transfer of ring all-reduce n=4, paired, with sim's own bytes per rank", async () => {
    const call = defaultTraceCall(ring, 4);
    const simTrace = new Trace();
    const wrapped = new Trace();
    const now = counter();
    await spawn(
      4,
      async (comm) => {
        const c = shapeFor(ring, call, comm.rank);
        const traced = withTracing(comm, wrapped, { now });
        expect(traced.backend).toBe("sim");
        await invoke(traced, c, ring.name, allocate(traced, c));
      },
      { trace: simTrace, seed: 1 },
    );
    // The sim recorded by itself; the wrapper saw the same calls from above.
    expect(wrapped.bytesSent(4)).toEqual(simTrace.bytesSent(4));
    expect(wrapped.bytesSent(4)).toEqual([24, 24, 24, 24]);
    expect(kinds(wrapped.events)).toEqual(kinds(simTrace.events));
    const { messages, unmatched } = pairMessages(wrapped.events);
    expect(unmatched).toEqual([]);
    expect(messages).toHaveLength(simTrace.events.filter((e) => e.kind === "send").length);
    expect(messages).toHaveLength(4 * 6);
    for (const m of messages) {
      expect(m.recv.rank).toBe((m.send.rank + 1) % 4);
      expect(m.recv.peer).toBe(m.send.rank);
      expect(m.recv.bytes).toBe(m.send.bytes);
      expect(m.send.bytes).toBe(m.send.count * 4);
      expect(stepOf(m.recv.label)).toBe(stepOf(m.send.label));
      expect(m.send.label).toMatch(/^allreduce\/ring step \d+ \(/);
    }
    for (const e of wrapped.events) {
      expect(e.end).toBeGreaterThanOrEqual(e.start);
      expect(e.dtype).toBe("float32");
    }
    // The same multiset of (rank, kind, peer, bytes, label) as sim's own trace.
    const key = (e: TraceEvent) => `${e.rank} ${e.kind} ${e.peer ?? "-"} ${e.bytes} ${e.label ?? ""}`;
    const sorted = (es: readonly TraceEvent[]) =>
      es
        .filter((e) => e.peer !== undefined)
        .map(key)
        .sort();
    expect(sorted(wrapped.events)).toEqual(sorted(simTrace.events));
    // And the CLI's sim trace of the same call sends the same number of messages.
    const cli = await traceOnSim(ring, call);
    expect(cli.filter((e) => e.kind === "send")).toHaveLength(messages.length);
  });

  it("names world ranks on split comms, records isend/irecv once and local operations, into one Trace", async () => {
    const trace = new Trace();
    await spawn(4, async (comm) => {
      const traced = new TracingComm(comm, trace);
      const sub = await traced.split([3, 1]);
      expect(sub).toBeInstanceOf(TracingComm);
      if (comm.rank === 1 || comm.rank === 3) {
        const buf = view(zeros("int32", 3));
        // sub rank 0 is world 3, sub rank 1 is world 1.
        if (sub.rank === 0) {
          const w = sub.isend(buf, 1, { label: "to one" });
          await w.wait();
          expect(w.test()).toBe(true);
          await w.wait();
        } else {
          const w = sub.irecv(buf, 0, { label: "to one" });
          while (!w.test()) await new Promise((r) => setTimeout(r, 0));
          await w.wait();
        }
      }
      const a = view(zeros("float64", 2));
      traced.copy(a, view(zeros("float64", 2)));
      traced.reduceInto(a, view(zeros("float64", 2)), { name: "sum" });
      traced.scale(a, a, 1, 2);
    });
    const transfers = trace.events.filter((e) => e.peer !== undefined);
    expect(transfers.map((e) => [e.rank, e.kind, e.peer, e.bytes, e.label])).toEqual(
      expect.arrayContaining([
        [3, "send", 1, 12, "to one"],
        [1, "recv", 3, 12, "to one"],
      ]),
    );
    expect(transfers).toHaveLength(2);
    expect(kinds(trace.events)).toEqual({ send: 1, recv: 1, copy: 4, reduce: 4, scale: 4 });
    const t = sharedClockMicros();
    for (const e of trace.events) {
      expect(e.start).toBeGreaterThan(1e15); // microseconds since 1970
      expect(e.start).toBeLessThanOrEqual(t);
      expect(e.end).toBeGreaterThanOrEqual(e.start);
    }
  });

  it("merges per-rank traces from 0, in start order", () => {
    const e = (rank: number, start: number): TraceEvent => ({
      rank,
      kind: "copy",
      count: 1,
      dtype: "float32",
      bytes: 4,
      start,
      end: start + 0.5,
    });
    const merged = mergeTraces([[e(0, 1000.25), e(0, 1003)], [e(1, 1001)], []]);
    expect(merged.map((x) => [x.rank, x.start, x.end])).toEqual([
      [0, 0, 0.5],
      [1, 0.75, 1.25],
      [0, 2.75, 3.25],
    ]);
    expect(mergeTraces([])).toEqual([]);
  });
});

function cclab(args: string[], timeout = 60_000) {
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], {
    encoding: "utf8",
    timeout,
    env: { ...process.env, CCLAB_TIMEOUT: "30" },
  });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

describe("cclab trace --backend nccl", () => {
  it("says it needs a GPU machine with the nccl backend, and exits non-zero", () => {
    const r = cclab(["trace", "allreduce", "--algorithm", "ring", "-n", "4", "--backend", "nccl"]);
    expect(r.status, r.out).toBe(1);
    expect(r.out).toContain("needs a GPU machine with the nccl backend");
  });
});

const skip = mpiSkipReason("trace --backend mpi tests") !== "";

describe.skipIf(skip)("cclab trace --backend mpi under mpirun", () => {
  const dir = mkdtempSync(join(tmpdir(), "cclab-trace-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("ring all-reduce n=4 -o x.svg: 4 lanes, one arrow per message of sim's trace of the same call", async () => {
    const file = join(dir, "ring.svg");
    const r = cclab(["trace", "allreduce", "--algorithm", "ring", "-n", "4", "--backend", "mpi", "-o", file]);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain(`wrote ${file}`);
    const svg = readFileSync(file, "utf8");
    assertWellFormed(svg);
    const sim = await traceOnSim(ring, defaultTraceCall(ring, 4));
    const sends = sim.filter((e) => e.kind === "send").length;
    expect(sends).toBe(24);
    expect(count(svg, /<line class="lane"/)).toBe(4);
    expect(count(svg, /<g class="msg" data-i=/)).toBe(sends);
    expect(count(svg, /<rect class="reduce"/)).toBe(sim.filter((e) => e.kind === "reduce").length);
    for (let k = 0; k < 4; k++) expect(svg).toContain(`>rank ${k}</text>`);
    expect(svg).toContain("allreduce/ring on mpi");
    expect(svg).toContain("time (µs)");
    expect(svg).toContain(">step 1: recvReduceSend</text>");
  });

  it("started inside the user's own mpirun: rank 0 gathers and prints the bytes table", () => {
    const r = spawnSync(
      "mpirun",
      [
        ...mpirunCommand(4, []).args,
        process.execPath,
        "src/cli/bin.js",
        "trace",
        "allreduce",
        "--algorithm",
        "ring",
        "--backend",
        "mpi",
      ],
      { encoding: "utf8", timeout: 60_000, env: { ...process.env, CCLAB_TIMEOUT: "30" } },
    );
    const out = `${r.stdout}\n${r.stderr}`;
    expect(r.status, out).toBe(0);
    expect(out).toMatch(/^total\s+24\s+24\s+24\s+24$/m);
    expect(out).toContain("busiest rank sent 24 bytes: matches");
    expect(out.match(/^allreduce\/ring on mpi/gm)).toHaveLength(1);
  });
});
