/**
 * The network model's pictures: the link heat map draws every family by its layout (every link
 * belongs to a drawn shape), is well-formed SVG, gives the hottest link the hottest colour,
 * aggregates at 16,384 hosts and stays under 2 MB there; the busbw chart draws one line per
 * algorithm; the step-through page's topology data routes each sending pair as the topology does.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { traceCommand } from "../src/cli/trace.js";
import { hottestLinks, networkTime, parseTopology, placeRanks } from "../src/model/network/index.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";
import { heatColor } from "../src/viz/chart.js";
import { busbwChartSvg, linkHeatmap, linkHeatmapSvg, pageNetwork } from "../src/viz/network.js";
import { CHROME_ARGS, findChromium } from "./support/chromium.js";

/** Every tag closed, in order (a small XML check: no DOM in Node). Returns the element count. */
function wellFormed(svg: string): number {
  const stack: string[] = [];
  let count = 0;
  const body = svg.replace(/<title>[^<]*<\/title>/g, "");
  for (const m of body.matchAll(/<(\/?)([a-zA-Z][\w-]*)((?:[^>"]|"[^"]*")*?)(\/?)>/g)) {
    const [, close, name, , self] = m;
    if (close) {
      expect(stack.pop(), `</${name}>`).toBe(name);
    } else {
      count++;
      if (!self) stack.push(name as string);
    }
  }
  expect(stack).toEqual([]);
  // No stray '<' left in text.
  expect(body.replace(/<(\/?)([a-zA-Z][\w-]*)((?:[^>"]|"[^"]*")*?)(\/?)>/g, "")).not.toContain("<");
  return count;
}

const HOTTEST = heatColor(1);

describe("linkHeatmapSvg", () => {
  const families = [
    ["full", 8],
    ["ring", 8],
    ["torus:4x4", 16],
    ["torus:3x3x3", 27],
    ["mesh:4x4", 16],
    ["fattree:leaves=4,hosts=4,over=2", 16],
    ["fattree:k=4", 16],
    ["rail:2x8", 16],
    [join(import.meta.dirname, "..", "examples", "topologies", "two-leaves.json"), 4],
  ] as const;
  for (const [spec, n] of families) {
    it(`draws ${spec.split("/").pop()}: every link in a shape, well-formed, the hottest link hottest`, () => {
      const t = parseTopology(spec, n, {});
      const alg = findAlgorithm("allreduce", "ring", { op: "test" });
      const call = makeCall({ collective: "allreduce", size: n, count: 4096 * n }, alg);
      const r = networkTime(alg, call, { topology: t, placement: placeRanks(t, n) });
      const h = linkHeatmap(t, r.linkBytes, r.time, { title: spec });
      for (let l = 0; l < t.links.count; l++) expect(h.geometry.shapeOf[l], `link ${l}`).toBeGreaterThanOrEqual(0);
      expect(wellFormed(h.svg)).toBeGreaterThan(h.geometry.shapes.length);
      const [hot] = hottestLinks(t, r.linkBytes, r.time, 1);
      expect(hot).toBeDefined();
      const s = h.geometry.shapeOf[hot?.link as number] as number;
      expect(h.colors[s]).toBe(HOTTEST);
      expect(h.maxUtilization).toBeCloseTo(hot?.utilization as number, 12);
      // The hottest link's line or cell is in the file with that colour, and its name in the caption.
      expect(h.svg).toContain(`="${HOTTEST}"`);
      expect(h.svg).toContain(`${hot?.from} → ${hot?.to}`);
      // Links that carried nothing are grey; a cooler shape gets a different colour.
      for (let k = 0; k < h.colors.length; k++) if (h.values[k] === 0) expect(h.colors[k]).toBe("#d9d9d9");
    });
  }

  it("colours by utilization: a link at half the hottest's is the middle of the scale", () => {
    const t = parseTopology("torus:4x4", 16, {});
    const bytes = new Float64Array(t.links.count);
    // Two x+ links of the same bandwidth, one with twice the bytes.
    const xs = [...Array(t.links.count).keys()].filter((l) => t.links.kind[l] === "x+");
    bytes[xs[0] as number] = 2e6;
    bytes[xs[5] as number] = 1e6;
    const h = linkHeatmap(t, bytes, 1000);
    expect(h.colors[h.geometry.shapeOf[xs[0] as number] as number]).toBe(HOTTEST);
    expect(h.colors[h.geometry.shapeOf[xs[5] as number] as number]).toBe(heatColor(0.5));
    expect(heatColor(0.5)).toBe("#21918c");
    expect(h.maxUtilization).toBeCloseTo(2e6 / (t.links.bandwidth[xs[0] as number] as number) / 1000, 12);
  });

  it("refuses link bytes of the wrong length, naming both counts", () => {
    const t = parseTopology("ring", 4, {});
    expect(() => linkHeatmapSvg(t, new Float64Array(3), 1)).toThrow(/3 entries.*16 links/);
  });

  for (const spec of ["torus:128x128", "fattree", "fattree:k=42", "rail:2048x8", "ring", "torus:32x32x16"]) {
    it(`aggregates ${spec} at 16,384 ranks and stays under 2 MB`, () => {
      const t = parseTopology(spec, 16384, {});
      const bytes = new Float64Array(t.links.count);
      for (let l = 0; l < bytes.length; l++) bytes[l] = (l * 7919) % 1000;
      const hot = (t.links.count * 3) >> 2;
      bytes[hot] = 1e9;
      const h = linkHeatmap(t, bytes, 1000);
      expect(h.svg.length).toBeLessThan(2e6);
      expect(h.geometry.shapes.length).toBeLessThan(t.links.count / 4);
      expect(h.svg).toMatch(/too many to draw each link|boxes of consecutive nodes|sectors of/);
      expect(h.colors[h.geometry.shapeOf[hot] as number]).toBe(HOTTEST);
      // Levels with thousands of hosts: hosts not drawn, their links bars under their switch.
      if (/^(fattree|rail)/.test(spec)) expect(h.svg).toContain(`${t.hosts} hosts not drawn`);
      wellFormed(h.svg);
    });
  }
});

describe("busbwChartSvg", () => {
  it("one line per algorithm, sizes on a log2 axis in bytes", () => {
    const svg = busbwChartSvg(
      [
        {
          name: "ring",
          points: [
            [1024, 0.5],
            [1048576, 20],
            [67108864, 40],
          ],
        },
        {
          name: "swing",
          points: [
            [1024, 1.5],
            [1048576, 25],
            [67108864, 38],
          ],
        },
      ],
      "busbw",
    );
    wellFormed(svg);
    expect(svg.match(/<polyline/g)?.length).toBe(2);
    expect(svg).toContain('data-name="swing"');
    expect(svg).toContain(">1 KiB<");
    expect(svg).toContain(">64 MiB<");
    expect(svg).toContain("busbw (GB/s)");
  });
});

describe("pageNetwork", () => {
  it("routes each sending pair by the placement, multipath shares summing to one path's worth", () => {
    const t = parseTopology("torus:4x4", 16, { routing: "minimal" });
    const placement = placeRanks(t, 16, "round-robin");
    const p = pageNetwork(t, placement, [
      [0, 5],
      [3, 3],
      [0, 5],
    ]);
    expect(Object.keys(p.routes)).toEqual(["0>5", "3>3"]);
    expect(p.routes["3>3"]).toEqual([]);
    const flat = p.routes["0>5"] as number[];
    const paths = t.paths(placement[0] as number, placement[5] as number);
    let share = 0;
    for (let i = 0; i < flat.length; i += 2) {
      const l = flat[i] as number;
      expect(paths.some((q) => q.includes(l))).toBe(true);
      share += (flat[i + 1] as number) * (t.links.bandwidth[l] as number);
    }
    // Every path has the same number of links, and the shares add up to that many links' worth.
    expect(share).toBeCloseTo((paths[0] as readonly number[]).length, 9);
    expect(p.shapeOf.length).toBe(t.links.count);
    expect(p.svg.match(/data-s="/g)?.length).toBeGreaterThan(0);
    wellFormed(p.svg);
  });

  it("cclab trace --topology: refused beyond 64 ranks, off the page, and --placement alone, each by name", async () => {
    const base = { algorithm: "ring", root: 0, backend: "sim", labels: "auto" as const };
    await expect(
      traceCommand("allreduce", { ...base, nranks: 80, topology: "torus:10x8", output: "/nonexistent/x.html" }),
    ).rejects.toThrow(/--topology.*at most 64 ranks, got -n 80/);
    await expect(
      traceCommand("allreduce", { ...base, nranks: 8, topology: "torus:4x2", output: "/nonexistent/x.svg" }),
    ).rejects.toThrow(/--topology.*step-through page only: write -o <file>\.html/);
    await expect(
      traceCommand("allreduce", { ...base, nranks: 8, placement: "round-robin", output: "/nonexistent/x.html" }),
    ).rejects.toThrow(/--placement.*give --topology too/);
  });

  it("refuses a topology too large for the page, naming it", () => {
    const t = parseTopology("torus:128x128", 16, {});
    expect(() => pageNetwork(t, placeRanks(t, 16), [])).toThrow(/at most 20000 links; torus:128x128 has 98304/);
  });
});

const chromium = findChromium();
if (!chromium)
  console.log("viz-network.test.ts: the page test skipped, no chromium on PATH (apt-get install -y chromium)");

describe.skipIf(!chromium)("the step-through page with --topology, in headless Chromium", () => {
  it("colours exactly the links the step's messages cross, the busiest hottest; writes docs/img/network-page.png", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-net-page-"));
    const puppeteer = (await import("puppeteer-core")).default;
    const browser = await puppeteer.launch({
      executablePath: chromium as string,
      headless: true,
      args: CHROME_ARGS,
    });
    try {
      const file = join(dir, "ring-on-ring.html");
      const code = await traceCommand("allreduce", {
        algorithm: "ring",
        nranks: 8,
        root: 0,
        backend: "sim",
        output: file,
        labels: "auto",
        topology: "ring:8",
      });
      expect(code).toBe(0);
      const t = parseTopology("ring:8", 8, {});
      const { shapeOf } = pageNetwork(t, placeRanks(t, 8), []);
      const page = await browser.newPage();
      await page.setViewport({ width: 1500, height: 900, deviceScaleFactor: 1 });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(`file://${file}`, { waitUntil: "load" });
      await page.waitForSelector("#net-box svg [data-s]");
      const loaded = () =>
        page.$$eval("#net-box [data-s]", (els) =>
          els
            .filter((e) => e.classList.contains("loaded"))
            .map(
              (e) =>
                [Number(e.getAttribute("data-s")), e.getAttribute(e.tagName === "line" ? "stroke" : "fill")] as const,
            ),
        );
      // Ring all-reduce on a ring, block placement: every step each rank sends to rank + 1, which
      // the ring routes over its x+ link (the host links at both ends too); no x- link is loaded.
      const want = new Set<number>();
      for (let l = 0; l < t.links.count; l++) if (t.links.kind[l] !== "x-") want.add(shapeOf[l] as number);
      for (const step of [0, 3]) {
        for (let k = 0; k < step; k++) await page.keyboard.press("ArrowRight");
        const got = await loaded();
        expect(new Set(got.map(([s]) => s)), `step ${step}`).toEqual(want);
        // x+ links (one link's bandwidth) carry the step's bytes; host links have twice the
        // bandwidth (the router's outgoing links together), so they are half as busy.
        for (let l = 0; l < t.links.count; l++) {
          const s = shapeOf[l] as number;
          const colour = got.find(([x]) => x === s)?.[1];
          if (t.links.kind[l] === "x+") expect(colour, `link ${l}`).toBe(HOTTEST);
          else if (t.links.kind[l] === "inject") expect(colour, `link ${l}`).toBe(heatColor(0.5));
        }
        expect(await page.$eval("#net-caption", (e) => e.textContent)).toMatch(
          /8 messages on 24 links; busiest r\d+ → r\d+ \(x\+\)/,
        );
      }
      expect(errors).toEqual([]);
      const png = await page.screenshot({ type: "png", clip: { x: 0, y: 100, width: 1045, height: 460 } });
      writeFileSync(join(import.meta.dirname, "..", "docs", "img", "network-page.png"), png);
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the heat map's bytes per link class", () => {
  it("says the bytes each kind of link carried (a dragonfly: local and global)", () => {
    const t = parseTopology("dragonfly:groups=2,routers=2,hosts=1", 4);
    const bytes = new Float64Array(t.links.count);
    for (let l = 0; l < t.links.count; l++) bytes[l] = t.links.kind[l] === "global" ? 3 * 2 ** 20 : 0;
    bytes[0] = 2 ** 20;
    const svg = linkHeatmapSvg(t, bytes, 100);
    expect(svg).toContain("bytes by link kind: inject 1 MiB (14.3%), global 6 MiB (85.7%)");
  });
});
