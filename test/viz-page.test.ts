/**
 * The step-through page without a browser: its data is explain's table exactly (stepThrough
 * against explain's own text), it packs and unpacks losslessly (cells kept as changes between
 * steps, runs of ranks shortened), events tie to explain's step numbers, and the page is one
 * self-contained file (no external script, style or font) of a reasonable size.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultTraceCall, sendSendDeadlock, traceOnSim } from "../src/cli/trace.js";
import { parseTopology, placeRanks } from "../src/model/network/index.js";
import { explain, explainCall } from "../src/schedule/explain.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { Trace } from "../src/trace.js";
import { pageNetwork } from "../src/viz/network.js";
import { pageView, stepPageHtml } from "../src/viz/page.js";
import { packCell, packView, unpackCell, unpackView } from "../src/viz/page-codec.js";
import { stepThrough } from "../src/viz/steps.js";

const site = { op: "test" };

describe("stepThrough", () => {
  for (const [collective, name, n] of [
    ["allreduce", "ring", 8],
    ["allreduce", "double_binary_tree", 16],
    ["allgather", "bruck", 6],
    ["gather", "binomial", 5],
    ["alltoallv", "pairwise", 4],
  ] as const) {
    it(`${collective}/${name} n = ${n}: explain's text, step by step`, () => {
      const alg = findAlgorithm(collective, name, site);
      const call = defaultTraceCall(alg, n);
      const st = stepThrough(alg, call);
      const text = explain(alg, { ...explainCall(alg, n), count: call.count, root: call.root, segment: call.segment });
      // Every step's title, each rank's operations and each table row appear in explain's text in order.
      let at = 0;
      for (const s of st.steps) {
        at = text.indexOf(`\n${s.label}\n`, at);
        expect(at, s.label).toBeGreaterThanOrEqual(0);
        s.ops.forEach((o, r) => {
          expect(text.indexOf(`  rank ${r}  ${o}`, at)).toBeGreaterThan(at);
        });
        for (const row of s.rows) {
          const line = text.slice(text.indexOf(`  ${row.name} `, at)).split("\n")[0] as string;
          expect(line.trim().split(/\s+/).slice(1)).toEqual(row.cells.filter((c) => c !== ""));
        }
      }
    });
  }
});

describe("the page's data", () => {
  it("packs and unpacks losslessly: ring n = 8, double binary tree n = 16, a deadlock", async () => {
    for (const [name, n] of [
      ["ring", 8],
      ["double_binary_tree", 16],
    ] as const) {
      const alg = findAlgorithm("allreduce", name, site);
      const call = defaultTraceCall(alg, n);
      const v = await pageView({
        name,
        title: name,
        size: n,
        unit: "tick",
        events: await traceOnSim(alg, call),
        steps: stepThrough(alg, call),
      });
      const packed = packView(v);
      expect(unpackView(JSON.parse(JSON.stringify(packed)))).toEqual(v);
      // Packed is much smaller than plain.
      expect(JSON.stringify(packed).length).toBeLessThan(JSON.stringify(v).length / 2);
      // Every message's events carry explain's step number.
      for (const [i, e] of v.events.entries()) if (e.kind === "send") expect(v.eventSteps?.[i]).not.toBeNull();
    }
    const t = new Trace();
    await sendSendDeadlock(2, t);
    const dl = await pageView({
      name: "d",
      title: "d",
      size: 2,
      unit: "tick",
      events: t.events,
      deadlocks: t.deadlocks,
    });
    expect(unpackView(JSON.parse(JSON.stringify(packView(dl))))).toEqual(dl);
  });

  it("carries the machine of --topology through packing unchanged", async () => {
    const alg = findAlgorithm("allreduce", "ring", site);
    const call = defaultTraceCall(alg, 4);
    const events = await traceOnSim(alg, call);
    const t = parseTopology("torus:2x2", 4, {});
    const network = pageNetwork(
      t,
      placeRanks(t, 4),
      events.flatMap((e) => (e.kind === "send" && e.peer !== undefined ? [[e.rank, e.peer] as const] : [])),
    );
    expect(Object.keys(network.routes).sort()).toEqual(["0>1", "1>2", "2>3", "3>0"]);
    const v = await pageView({ name: "ring", title: "ring", size: 4, unit: "tick", events, network });
    expect(unpackView(JSON.parse(JSON.stringify(packView(v))))).toEqual(v);
    expect(v.network).toBe(network);
  });

  it("shortens runs of ranks in cells, and only those", () => {
    for (const c of ["[0+1+2+3+7]", "[0]", "[0+1]", ".", "", "[3+4+5+9+10+11+12]", "[0:1+1:1]", "[2+2+3+4]"]) {
      expect(unpackCell(packCell(c))).toBe(c);
    }
    expect(packCell("[0+1+2+3+7]")).toBe("[0~3+7]");
    expect(packCell("[0+1]")).toBe("[0+1]");
  });

  it("is one self-contained file: no external script, style, font or image", async () => {
    const alg = findAlgorithm("allreduce", "ring", site);
    const call = defaultTraceCall(alg, 8);
    const v = await pageView({
      name: "ring",
      title: "ring",
      size: 8,
      unit: "tick",
      events: await traceOnSim(alg, call),
      steps: stepThrough(alg, call),
    });
    const html = await stepPageHtml({ title: "ring", labels: "auto", views: [v], selected: 0 });
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+href=/);
    expect(html).not.toMatch(/url\(\s*['"]?https?:/);
    expect(html).not.toMatch(/@import/);
    expect(html.length).toBeLessThan(250_000);
  });
});

describe("docs/teaching.md", () => {
  it("shows only pictures that exist (the browser test and the CLI write them into docs/img)", () => {
    const dir = join(import.meta.dirname, "..", "docs");
    const md = readFileSync(join(dir, "teaching.md"), "utf8");
    const imgs = [...md.matchAll(/!\[[^\]]*\]\((img\/[^)]+)\)/g)].map((m) => m[1] as string);
    expect(imgs.length).toBeGreaterThanOrEqual(5);
    for (const img of imgs) expect(existsSync(join(dir, img)), img).toBe(true);
  });
});
