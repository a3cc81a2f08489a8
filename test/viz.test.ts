/**
 * The pictures' structure (not pixels): the ring all-reduce's time-space diagram has one lane
 * per rank and one arrow per message of the trace, with step guides and labels; the deadlock
 * picture and its DOT show the cycle's ranks and edges; the text table agrees with the formula.
 */
import { describe, expect, it } from "vitest";
import { defaultTraceCall, sendSendDeadlock, traceOnSim } from "../src/cli/trace.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import type { TraceEvent } from "../src/trace.js";
import { lineChartSvg, logAxis, type Marker, type Series } from "../src/viz/chart.js";
import { deadlockDot, deadlockSvg, waitForGraph } from "../src/viz/deadlock.js";
import { commonDetail, pairMessages, stepOf, stepStarts } from "../src/viz/diagram.js";
import { type Box, estimateWidth, overlaps, textBox } from "../src/viz/labels.js";
import { eventNotes, stepThrough } from "../src/viz/steps.js";
import { svgSize } from "../src/viz/svg.js";
import { traceTable } from "../src/viz/table.js";
import { traceSvg } from "../src/viz/trace.js";
import { assertWellFormed, count } from "./fixtures/viz/check.js";

const site = { op: "test" };

async function ringTrace(n: number): Promise<TraceEvent[]> {
  const alg = findAlgorithm("allreduce", "ring", site);
  return traceOnSim(alg, defaultTraceCall(alg, n));
}

/** Text labels of an SVG and their boxes as the layout estimated them, for overlap checks without a browser. */
function labelBoxes(svg: string): { text: string; box: Box }[] {
  const out: { text: string; box: Box }[] = [];
  const re =
    /<text class="label[^"]*" x="([\d.-]+)" y="([\d.-]+)" font-size="(\d+)"(?: text-anchor="(\w+)")?[^>]*>([^<]*)<\/text>/g;
  for (const m of svg.matchAll(re)) {
    const text = (m[5] as string)
      .replace(/&amp;/g, "&")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"');
    const c = textBox(text, Number(m[1]), Number(m[2]), Number(m[3]), (m[4] ?? "start") as "start", estimateWidth);
    out.push({ text, box: c.box });
  }
  return out;
}

function labelOverlaps(svg: string): string[] {
  const boxes = labelBoxes(svg);
  const bad: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++)
      if (overlaps((boxes[i] as { box: Box }).box, (boxes[j] as { box: Box }).box)) {
        bad.push(`${boxes[i]?.text} / ${boxes[j]?.text}`);
      }
  return bad;
}

function viewBox(svg: string): number[] {
  const m = /viewBox="([^"]+)"/.exec(svg);
  return (m?.[1] ?? "").split(" ").map(Number);
}

describe("time-space diagram", () => {
  it("draws ring all-reduce on 4 ranks: 4 lanes, one arrow per message, 6 step guides, labels", async () => {
    const events = await ringTrace(4);
    const sends = events.filter((e) => e.kind === "send");
    expect(sends).toHaveLength(4 * 6);
    const { messages, unmatched } = pairMessages(events);
    expect(messages).toHaveLength(sends.length);
    expect(unmatched).toEqual([]);
    // Every message goes to the next rank on the ring and arrives no earlier than it was sent.
    for (const m of messages) {
      expect(m.recv.rank).toBe((m.send.rank + 1) % 4);
      expect(m.recv.end).toBeGreaterThanOrEqual(m.send.start);
      expect(stepOf(m.recv.label)).toBe(stepOf(m.send.label));
    }

    const ring = findAlgorithm("allreduce", "ring", site);
    const notes = eventNotes(stepThrough(ring, defaultTraceCall(ring, 4)), events);
    const svg = traceSvg(events, { title: "ring <n=4> & co", size: 4, notes });
    assertWellFormed(svg);
    expect(count(svg, /<line class="lane"/)).toBe(4);
    expect(count(svg, /<g class="msg" data-i=/)).toBe(messages.length);
    expect(count(svg, /marker-end="url\(#arrow-\d\)"/)).toBe(messages.length + 1); // + the legend's
    expect(count(svg, /class="step-guide"/)).toBe(6);
    expect(count(svg, /<rect class="reduce"/)).toBe(events.filter((e) => e.kind === "reduce").length);
    // The ring reads its input in place of a first copy: no local copies at all.
    expect(count(svg, /<rect class="copy"/)).toBe(0);
    for (let r = 0; r < 4; r++) expect(svg).toContain(`>rank ${r}</text>`);
    // Steps numbered as explain numbers them (1 to 6).
    expect(svg).toContain(">step 1: recvReduceSend</text>");
    expect(svg).toContain(">step 6: recvCopySend</text>");
    // A message's label says what it moves, in explain's words (rank 0 sends in[3] into rank 1's out[3]).
    expect(svg).toContain(">in[3]→out[3]</text>");
    expect(labelOverlaps(svg)).toEqual([]);
    expect(svg).toContain("<title>ring &lt;n=4&gt; &amp; co</title>");
    const [x, y, w, h] = viewBox(svg);
    expect([x, y]).toEqual([0, 0]);
    expect(svgSize(svg)).toEqual({ width: w, height: h });
    expect(w).toBeGreaterThan(600);
    expect(h).toBeGreaterThan(4 * 60);
    // Every coordinate lies inside the viewBox.
    for (const m of svg.matchAll(/\b(x|x1|x2|cx)="(-?[\d.]+)"/g)) expect(Number(m[2])).toBeLessThanOrEqual(w as number);
    for (const m of svg.matchAll(/\b(y|y1|y2|cy)="(-?[\d.]+)"/g)) expect(Number(m[2])).toBeLessThanOrEqual(h as number);
  });

  it("draws any trace the same way: a tree all-reduce's arrows match its messages, one guide per step", async () => {
    const alg = findAlgorithm("allreduce", "double_binary_tree", site);
    const events = await traceOnSim(alg, { size: 5, count: 8, root: 0, segment: 2 });
    const svg = traceSvg(events);
    assertWellFormed(svg);
    expect(count(svg, /<line class="lane"/)).toBe(5);
    expect(count(svg, /<g class="msg" data-i=/)).toBe(events.filter((e) => e.kind === "send").length);
    // Dataflow runs the two trees side by side, so steps need not start in order; each still has one start.
    const starts = stepStarts(events);
    expect(starts.length).toBeGreaterThan(3);
    expect(new Set(starts.map((s) => s.step)).size).toBe(starts.length);
  });

  it("labels never collide: double binary tree at n = 16 with labels none, auto and all", async () => {
    const alg = findAlgorithm("allreduce", "double_binary_tree", site);
    const events = await traceOnSim(alg, defaultTraceCall(alg, 16));
    const counts: Record<string, number> = {};
    for (const labels of ["none", "auto", "all"] as const) {
      const svg = traceSvg(events, { size: 16, labels });
      assertWellFormed(svg);
      expect(labelOverlaps(svg), labels).toEqual([]);
      counts[labels] = count(svg, /class="label msg-label"/);
      expect(count(svg, /class="label lane-label"/)).toBe(16);
    }
    expect(counts.none).toBe(0);
    expect(counts.auto).toBeGreaterThan(0);
    // 'all' widens the picture until (nearly) every message has its label.
    expect(counts.all).toBeGreaterThan(counts.auto as number);
  });

  it("step headers of a real-time trace do not pile up: close steps take rows, then shorter text, then only hover", () => {
    // An MPI-like trace: 12 steps whose first posts are microseconds apart, then a long gap.
    const events: TraceEvent[] = [];
    for (let k = 1; k <= 12; k++) {
      const t = k * 0.8 + (k > 6 ? 400 : 0);
      const label = `allreduce/ring step ${k} (recvReduceSend chunk ${k % 4})`;
      events.push(
        { rank: 0, kind: "send", peer: 1, count: 1, dtype: "float32", bytes: 4, label, start: t, end: t + 5 },
        { rank: 1, kind: "recv", peer: 0, count: 1, dtype: "float32", bytes: 4, label, start: t, end: t + 6 },
      );
    }
    const svg = traceSvg(events, { size: 2, unit: "µs" });
    expect(labelOverlaps(svg)).toEqual([]);
    const headers = [...svg.matchAll(/class="label step-label"[^>]*>([^<]*)</g)].map((m) => m[1]);
    expect(headers.length).toBeGreaterThan(3);
    expect(count(svg, /class="step-guide"/)).toBe(12);
    // Every guide keeps its full text as hover.
    expect(count(svg, /<title>step \d+: recvReduceSend chunk \d<\/title>/)).toBe(12);
  });

  it("names what a step's ranks share", () => {
    expect(commonDetail(["recvReduceSend chunk 0", "recvReduceSend chunk 12", "recvReduceSend chunk 1"])).toBe(
      "recvReduceSend",
    );
    expect(commonDetail(["copy input", "copy input"])).toBe("copy input");
    expect(commonDetail([])).toBe("");
  });

  it("prints bytes per rank per step next to the formula", async () => {
    const events = await ringTrace(4);
    const alg = findAlgorithm("allreduce", "ring", site);
    const maxBytes = alg.cost.sent.value(4, 4, 1) * 4;
    const notes = eventNotes(stepThrough(alg, defaultTraceCall(alg, 4)), events);
    const text = traceTable(events, 4, { text: alg.cost.sent.text, maxBytes }, notes);
    // Steps numbered as explain numbers them: 1 to 6, as in the diagram.
    expect(text).toMatch(/^1\s+recvReduceSend\s+4\s+4\s+4\s+4$/m);
    expect(text).toMatch(/^6\s+recvCopySend\s+4\s+4\s+4\s+4$/m);
    expect(text).not.toMatch(/^0\s/m);
    expect(text).toMatch(/^total\s+24\s+24\s+24\s+24$/m);
    expect(text).toContain("busiest rank sent 24 bytes: matches");
    expect(traceTable(events, 4, { text: "x", maxBytes: 8 })).toContain("DIFFERS (formula 8)");
  });
});

describe("deadlock pictures", () => {
  it("seed 003's send-send on 2 ranks: both ranks in the cycle, both edges red", async () => {
    const err = await sendSendDeadlock(2);
    expect([...err.cycle].sort()).toEqual([0, 1]);
    const svg = deadlockSvg(err);
    assertWellFormed(svg);
    expect(count(svg, /<g class="node cycle" data-rank="\d+">/)).toBe(2);
    expect(count(svg, /<g class="edge cycle" data-from="\d+" data-to="\d+">/)).toBe(2);
    expect(svg).toContain('data-from="0" data-to="1"');
    expect(svg).toContain('data-from="1" data-to="0"');
    expect(svg).toContain("blocked in send(to 1, 2 x float32, &apos;exchange&apos;)".replace(/&apos;/g, "'"));
    expect(svg).toMatch(/<title>deadlock: wait-for cycle rank \d -&gt; rank \d -&gt; rank \d<\/title>/);
    const [, , w, h] = viewBox(svg);
    expect(svgSize(svg)).toEqual({ width: w, height: h });

    const dot = deadlockDot(err);
    expect(dot).toMatch(/^digraph deadlock \{/);
    expect(dot).toMatch(/r0 -> r1 \[[^\]]*penwidth=2.5\]/);
    expect(dot).toMatch(/r1 -> r0 \[[^\]]*penwidth=2.5\]/);
    expect(count(dot, /^\s+r\d \[label=/m)).toBe(2);
    expect(dot.trimEnd().endsWith("}")).toBe(true);
  });

  it("a 5-rank cycle, and an edge outside the cycle drawn plainly", () => {
    const blocked = [0, 1, 2, 3, 4].map((r) => ({
      rank: r,
      kind: "send" as const,
      peer: (r + 1) % 5,
      count: 1,
      dtype: "float32",
    }));
    const err = {
      blocked: [...blocked, { rank: 5, kind: "recv" as const, peer: 2, count: 3, dtype: "int32", label: 'a "q"' }],
      cycle: [2, 3, 4, 0, 1],
    };
    const g = waitForGraph(err);
    expect(g.nodes.map((n) => n.rank)).toEqual([2, 3, 4, 0, 1, 5]);
    const svg = deadlockSvg(err);
    assertWellFormed(svg);
    expect(count(svg, /class="node cycle"/)).toBe(5);
    expect(count(svg, /class="node"/)).toBe(1);
    expect(count(svg, /class="edge cycle"/)).toBe(5);
    expect(count(svg, /class="edge"/)).toBe(1);
    expect(svg).toContain("&quot;q&quot;");
    const dot = deadlockDot(err);
    expect(dot).toContain("r5 -> r2");
    expect(dot).toContain('\\"q\\"');
    expect(count(dot, /^\s+r\d -> r\d /m)).toBe(6);
  });
});

/** A log-time chart of these series, as `cclab model --sweep` draws one. */
function timeChart(series: Series[], markers?: Marker[]): string {
  return lineChartSvg({ title: "t", xLabel: "N", yLabel: "time", yIsTime: true, logY: true, series, markers });
}

describe("line chart", () => {
  it("one polyline per series, points on them, crossover markers", () => {
    const svg = timeChart(
      [
        {
          name: "ring",
          points: [
            [2, 10],
            [4, 30],
            [8, 70],
          ],
        },
        {
          name: "tree",
          points: [
            [2, 20],
            [4, 25],
            [8, 30],
          ],
        },
      ],
      [{ x: 3.5, label: "ring = tree at N ≈ 4" }],
    );
    assertWellFormed(svg);
    expect(count(svg, /<polyline /)).toBe(2);
    expect(count(svg, /<circle /)).toBe(6);
    expect(count(svg, /class="crossover"/)).toBe(1);
    expect(svg).toContain("ring = tree at N ≈ 4");
  });

  it("a log axis fits the data: 2.7 to 7.9 ms spans the plot, not a corner of 100 µs to 10 ms", () => {
    const a = logAxis(2700, 7900);
    expect(a.lo).toBeGreaterThan(2000);
    expect(a.hi).toBeLessThan(10_000);
    expect(a.ticks.length).toBeGreaterThanOrEqual(3);
    for (const t of a.ticks) expect(t >= a.lo && t <= a.hi).toBe(true);
    // Data within a factor of 1.2 still gets ticks; data over decades gets one per decade.
    expect(logAxis(100, 120).ticks.length).toBeGreaterThanOrEqual(3);
    expect(logAxis(1, 1e6).ticks).toEqual([1, 10, 100, 1000, 10_000, 100_000, 1_000_000]);
    // The labels reach the data: 3 to 15 ms ends at a 20 ms label, not at 10 with the data above it.
    const wide = logAxis(3000, 15_200);
    expect(wide.ticks.at(-1)).toBeGreaterThanOrEqual(15_200);
    expect(wide.hi).toBeGreaterThanOrEqual(wide.ticks.at(-1) as number);
    const svg = timeChart([
      {
        name: "ring",
        points: [
          [2, 2700],
          [256, 7900],
        ],
      },
      {
        name: "tree",
        points: [
          [2, 2800],
          [256, 7700],
        ],
      },
    ]);
    const ys = [...svg.matchAll(/<circle cx="[\d.]+" cy="([\d.]+)"/g)].map((m) => Number(m[1]));
    // The points use most of the plot's height (56 to 450).
    expect(Math.max(...ys) - Math.min(...ys)).toBeGreaterThan(0.8 * (520 - 56 - 70));
    expect(svg).not.toContain(">100 µs<");
  });
});
