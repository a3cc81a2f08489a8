/**
 * The diagram tells what explain's table tells: for every algorithm at n = 4 and 8, the arrows the
 * SVG draws in step k are exactly the sends explain's table lists in step k (same sender, receiver
 * and region), each arrow's receiving end is a receive the table lists (same region), steps carry
 * explain's numbers, and each step's marker sits at its first arrow, not at a receive posted earlier.
 */
import { describe, expect, it } from "vitest";
import { defaultTraceCall, traceOnSim } from "../src/cli/trace.js";
import { allAlgorithms } from "../src/schedule/registry.js";
import { eventNotes, stepThrough } from "../src/viz/steps.js";
import { traceSvg } from "../src/viz/trace.js";

const unesc = (s: string) =>
  s
    .replace(/&gt;/g, ">")
    .replace(/&lt;/g, "<")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

interface Arrow {
  step: number;
  from: number;
  to: number;
  sent: string;
  into: string;
  x1: number;
}

/** The arrows of a static SVG: step, ends and regions (from each message's hover title), and where it starts. */
function arrowsOf(svg: string): Arrow[] {
  const re =
    /<g class="msg[^"]*" data-i="\d+" data-step="(\d*)" data-from="(\d+)" data-to="(\d+)"><title>([^<]*)<\/title>.*?<line class="arrow" x1="([\d.-]+)"/gs;
  return [...svg.matchAll(re)].map((m) => {
    const tip = unesc(m[4] as string);
    const r = /^step (\d+): rank (\d+) (\S+) -> rank (\d+) (\S+),/.exec(tip);
    if (!r) throw new Error(`an arrow's title does not say what it moves: ${tip}`);
    expect([r[1], r[2], r[4]]).toEqual([m[1], m[2], m[3]]);
    return {
      step: Number(m[1]),
      from: Number(m[2]),
      to: Number(m[3]),
      sent: r[3] as string,
      into: r[5] as string,
      x1: Number(m[5]),
    };
  });
}

const sorted = (xs: string[]) => [...xs].sort();

describe("the diagram is explain's table", () => {
  for (const alg of allAlgorithms()) {
    for (const n of [4, 8]) {
      it(`${alg.collective}/${alg.name} n = ${n}`, async () => {
        const call = defaultTraceCall(alg, n);
        const st = stepThrough(alg, call);
        expect(st.errors).toEqual([]);
        const events = await traceOnSim(alg, call);
        const svg = traceSvg(events, { size: n, labels: "auto", notes: eventNotes(st, events) });
        const arrows = arrowsOf(svg);
        expect(arrows.length).toBe(events.filter((e) => e.kind === "send").length);

        // The table's sends, per step, and its receives, from explain's printed text (an empty
        // region, 'in[0:0]', moves nothing and is sent by no one).
        const tableSends: string[] = [];
        const tableRecvs: string[] = [];
        for (const s of st.steps) {
          const k = Number(/^step (\d+)/.exec(s.label)?.[1]);
          s.ops.forEach((ops, r) => {
            const text = ops.replace(/\S+\[(\d+):\1\](->|<-)\d+/g, "");
            for (const m of text.matchAll(/(\S+)->(\d+)/g)) tableSends.push(`step ${k}: ${r} ${m[1]} -> ${m[2]}`);
            for (const m of text.matchAll(/(\S+)<-(\d+)/g)) tableRecvs.push(`${m[2]} -> ${r} ${m[1]}`);
          });
        }
        const drawnSends = arrows.map((a) => `step ${a.step}: ${a.from} ${a.sent} -> ${a.to}`);
        const drawnRecvs = arrows.map((a) => `${a.from} -> ${a.to} ${a.into}`);
        expect(sorted(drawnSends)).toEqual(sorted(tableSends));
        expect(sorted(drawnRecvs)).toEqual(sorted(tableRecvs));

        // Each step's marker is at its first arrow's start, and says explain's step number.
        const guides = new Map(
          [...svg.matchAll(/<line class="step-guide" data-step="(\d+)" x1="([\d.-]+)"/g)].map((m) => [
            Number(m[1]),
            Number(m[2]),
          ]),
        );
        const steps = new Set(arrows.map((a) => a.step));
        for (const k of steps) {
          const first = Math.min(...arrows.filter((a) => a.step === k).map((a) => a.x1));
          expect(guides.get(k), `step ${k}'s marker`).toBeCloseTo(first, 0);
        }
        const titles = new Set(st.steps.map((s) => Number(/^step (\d+)/.exec(s.label)?.[1])));
        for (const k of guides.keys()) expect(titles.has(k), `step ${k} is one of explain's`).toBe(true);
      });
    }
  }
});
