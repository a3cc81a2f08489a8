/**
 * Issue 13, trace any program: `cclab run --trace` records every collective and p2p call of a
 * user's program on sim (logical ticks, with the deadlocks sim finds) and on mpi (each rank's
 * TracingComm, merged by the launcher), as cclab's JSON, Perfetto JSON, the step-through page or
 * SVG; on sim --semantics and --seed choose how sends complete and the interleaving, so the same
 * program deadlocks under one semantics and not another. The mpi part skips, saying why, where
 * MPI or mpirun is missing.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TraceEvent } from "../src/trace.js";
import { pairMessages } from "../src/viz/diagram.js";
import { type PackedPageData, unpackView } from "../src/viz/page-codec.js";
import type { PageDeadlock, PageView } from "../src/viz/page-data.js";
import type { PerfettoTrace } from "../src/viz/perfetto.js";
import { mpiSkipReason } from "./support/mpi.js";

const dir = mkdtempSync(join(tmpdir(), "cclab-run-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cclab(args: string[]) {
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], {
    encoding: "utf8",
    timeout: 90_000,
    env: { ...process.env, CCLAB_TIMEOUT: "30" },
  });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

/** The step-through page's JSON data, unpacked as the page's script does. */
function pageData(file: string): { title: string; views: PageView[] } {
  const html = readFileSync(file, "utf8");
  const m = /<script id="cclab-data" type="application\/json">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error(`${file} carries no cclab-data`);
  const packed = JSON.parse(m[1] as string) as PackedPageData;
  return { title: packed.title, views: packed.views.map(unpackView) };
}

function events(file: string): TraceEvent[] {
  return JSON.parse(readFileSync(file, "utf8")) as TraceEvent[];
}

/** ring_all_reduce.ts on n ranks: 2(n-1) exchanges per rank, each a send to the next rank. */
function checkRing(ev: readonly TraceEvent[], n: number): void {
  const { messages, unmatched } = pairMessages(ev);
  expect(unmatched).toEqual([]);
  const ring = messages.filter((m) => m.send.label === undefined);
  expect(ring).toHaveLength(2 * (n - 1) * n);
  for (const m of ring) expect(m.recv.rank).toBe((m.send.rank + 1) % n);
  // Its barriers are collectives, traced too, with the executor's step labels.
  expect(messages.some((m) => /^barrier\//.test(m.send.label ?? ""))).toBe(true);
  expect(ev.filter((e) => e.kind === "reduce")).toHaveLength((n - 1) * n);
}

describe("cclab run --trace on sim", () => {
  it("examples/ring_all_reduce.ts: every p2p and collective call, as JSON and as the page", () => {
    const json = join(dir, "ring.json");
    const r = cclab(["run", "-n", "4", "--trace", json, "examples/ring_all_reduce.ts"]);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain("after AllGather");
    checkRing(events(json), 4);
    const html = join(dir, "ring.html");
    expect(cclab(["run", "-n", "4", "--trace", html, "examples/ring_all_reduce.ts"]).status).toBe(0);
    const data = pageData(html);
    expect(data.title).toBe("ring_all_reduce.ts on sim, n = 4, semantics nccl, seed 1");
    checkRing(data.views[0]?.events ?? [], 4);
  });

  it("examples/deadlock.ts: deadlocks under nccl semantics (drawn), not under buffered; --seed replays", () => {
    const html = join(dir, "deadlock.html");
    const r = cclab(["run", "-n", "2", "--trace", html, "examples/deadlock.ts"]);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain("caught DeadlockError");
    // The page's data: the deadlock sim found, with the wait-for graph Graphviz drew for it.
    const view = pageData(html).views[0] as PageView;
    expect(view.deadlocks).toHaveLength(1);
    const dl = view.deadlocks[0] as PageDeadlock;
    expect([...dl.record.cycle].sort()).toEqual([0, 1]);
    expect(dl.record.blocked.map((b) => `${b.rank}:${b.kind}->${b.peer}`).sort()).toEqual(["0:send->1", "1:send->0"]);
    expect(dl.svg.startsWith("<svg")).toBe(true);
    expect(dl.svg.includes("blocked in send(to 1, 2 x float32, &#39;exchange&#39;)")).toBe(true);
    // The fixes that follow ran and are in the trace: 3 exchanges of 2 messages.
    expect(pairMessages(view.events).messages).toHaveLength(6);

    const pf = (semantics: string, seed: string) => {
      const file = join(dir, `dl-${semantics}-${seed}.json`);
      const args = [
        "run",
        "-n",
        "2",
        "--semantics",
        semantics,
        "--seed",
        seed,
        "--trace",
        file,
        "--format",
        "perfetto",
      ];
      const out = cclab([...args, "examples/deadlock.ts"]);
      expect(out.status, out.out).toBe(0);
      return { out: out.out, text: readFileSync(file, "utf8") };
    };
    const nccl = pf("nccl", "5");
    const buffered = pf("buffered", "5");
    expect(buffered.out).toContain("no deadlock under these semantics");
    const marks = (t: string) => (JSON.parse(t) as PerfettoTrace).traceEvents.filter((e) => e.ph === "i").length;
    expect(marks(nccl.text)).toBe(2);
    expect(marks(buffered.text)).toBe(0);
    // The same seed, the same trace, byte for byte.
    expect(pf("buffered", "5").text).toBe(buffered.text);
  });

  it("--semantics and --seed are for sim; a wrong --trace name fails before any rank starts", () => {
    const r = cclab(["run", "-n", "2", "--backend", "mpi", "--semantics", "buffered", "examples/deadlock.ts"]);
    expect(r.status).not.toBe(0);
    expect(r.out).toContain("--semantics");
    expect(r.out).toContain("is for --backend sim");
    const bad = cclab(["run", "-n", "2", "--trace", join(dir, "x.png"), "examples/deadlock.ts"]);
    expect(bad.status).not.toBe(0);
    expect(bad.out).toContain("-o");
    expect(bad.out).not.toContain("Rank 0");
  });
});

const skip = mpiSkipReason("cclab run --trace mpi tests") !== "";

describe.skipIf(skip)("cclab run --trace on mpi", () => {
  it("examples/ring_all_reduce.ts: each rank's events, merged, in microseconds", () => {
    const json = join(dir, "ring-mpi.json");
    const r = cclab(["run", "-n", "4", "--backend", "mpi", "--trace", json, "examples/ring_all_reduce.ts"]);
    expect(r.status, r.out).toBe(0);
    const ev = events(json);
    checkRing(ev, 4);
    expect(Math.min(...ev.map((e) => e.start))).toBe(0);
    expect(new Set(ev.map((e) => e.rank))).toEqual(new Set([0, 1, 2, 3]));
  });

  it("examples/deadlock.ts: the three fixes' exchanges (the wrong order is skipped on a real backend)", () => {
    const json = join(dir, "deadlock-mpi.json");
    const r = cclab(["run", "-n", "2", "--backend", "mpi", "--trace", json, "examples/deadlock.ts"]);
    expect(r.status, r.out).toBe(0);
    const { messages, unmatched } = pairMessages(events(json));
    expect(unmatched).toEqual([]);
    expect(messages).toHaveLength(6);
  });
});
