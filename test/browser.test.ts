/**
 * The pictures in a real browser (headless Chromium through puppeteer-core): the step-through
 * page for ring all-reduce at n = 8 and double binary tree at n = 16, driven with the keyboard,
 * must show after each step exactly the cells and operations `cclab explain` prints for that
 * step, with no two visible labels overlapping (labels none/auto/all, zoomed in and out); hover
 * on a message lights its ranks' columns. The static SVGs render with the colours they promise.
 * It also writes the PNG screenshots docs/teaching.md shows (docs/img/*.png), at a fixed
 * viewport and step, so they come out the same each run.
 * Skips, saying why, where Chromium is not installed (CI: apt-get install -y chromium).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultTraceCall, sendSendDeadlock, traceCommand, traceOnSim } from "../src/cli/trace.js";
import { explain, explainCall } from "../src/schedule/explain.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import type { Collective } from "../src/specs/index.js";
import { deadlockSvg } from "../src/viz/deadlock.js";
import { htmlPage, svgSize } from "../src/viz/svg.js";
import { traceSvg } from "../src/viz/trace.js";
import { decodePng, type Png, pngSize } from "./fixtures/viz/check.js";
import { CHROME_ARGS, findChromium } from "./support/chromium.js";

const chromium = findChromium();
if (!chromium) console.log("browser.test.ts skipped: no chromium on PATH (Debian: apt-get install -y chromium)");

const dir = mkdtempSync(join(tmpdir(), "cclab-browser-"));
const docsImg = join(import.meta.dirname, "..", "docs", "img");

let browser: Browser | undefined;
beforeAll(async () => {
  if (!chromium) return;
  const puppeteer = (await import("puppeteer-core")).default;
  browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: CHROME_ARGS });
});
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Renders an SVG in an HTML page to a PNG of exactly the SVG's size (Chromium's --screenshot). */
function screenshot(name: string, svg: string): { png: Buffer; width: number; height: number } {
  const { width, height } = svgSize(svg);
  const html = join(dir, `${name}.html`);
  const png = join(dir, `${name}.png`);
  const profile = mkdtempSync(join(dir, "profile-"));
  writeFileSync(html, htmlPage(name, svg));
  execFileSync(
    chromium as string,
    [
      "--headless",
      ...CHROME_ARGS,
      `--user-data-dir=${profile}`,
      `--screenshot=${png}`,
      `--window-size=${width},${height}`,
      `file://${html}`,
    ],
    { stdio: "ignore", timeout: 60_000 },
  );
  return { png: readFileSync(png), width, height };
}

/** Pixels within `tol` of an RGB colour. */
function pixelsNear(img: Png, rgb: [number, number, number], tol = 40): number {
  let n = 0;
  for (let i = 0; i < img.rgba.length; i += 4) {
    const d =
      Math.abs((img.rgba[i] as number) - rgb[0]) +
      Math.abs((img.rgba[i + 1] as number) - rgb[1]) +
      Math.abs((img.rgba[i + 2] as number) - rgb[2]);
    if (d <= tol) n++;
  }
  return n;
}

function ink(img: Png): number {
  return img.width * img.height - pixelsNear(img, [255, 255, 255], 30);
}

interface ExplainStep {
  readonly title: string;
  readonly ops: string[];
  readonly rows: { name: string; cells: string[] }[];
}

/**
 * explain's text, parsed: per step its title, each rank's line ('rank 0  copy input: ...') and
 * the state table, cut into columns where the header's 'rank r' begins (a rank with no such
 * element has an empty cell, so splitting on spaces would not do).
 */
function parseExplain(text: string, n: number): ExplainStep[] {
  const steps: ExplainStep[] = [];
  for (const block of text.split("\n\n")) {
    const lines = block.split("\n");
    const title = lines[0] ?? "";
    if (!/^step \d+/.test(title)) continue;
    const ops = lines.filter((l) => /^ {2}rank \d+ {2}/.test(l)).map((l) => l.trim());
    const head = lines.findIndex((l) => /^ {3,}rank 0\b/.test(l));
    const rows: { name: string; cells: string[] }[] = [];
    if (head >= 0) {
      const header = lines[head] as string;
      const starts = Array.from({ length: n }, (_, r) => header.search(new RegExp(`rank ${r}(?!\\d)`)));
      for (const line of lines.slice(head + 1)) {
        const name = line.trim().split(/\s+/)[0] as string;
        const cells = starts.map((s, r) => line.slice(s, starts[r + 1] ?? undefined).trim());
        rows.push({ name, cells });
      }
    }
    steps.push({ title, ops, rows });
  }
  return steps;
}

/** What the page shows in its side panel. */
async function shown(page: Page): Promise<ExplainStep> {
  return page.evaluate(() => {
    const title = (document.getElementById("cells-title")?.textContent ?? "").replace(
      /^what each rank holds after /,
      "",
    );
    const ops = [...document.querySelectorAll("#ops li")].map((li) => li.textContent ?? "");
    const rows = [...document.querySelectorAll("#cells tbody tr")].map((tr) => ({
      name: tr.querySelector("th")?.textContent ?? "",
      cells: [...tr.querySelectorAll("td")].map((td) => td.textContent ?? ""),
    }));
    return { title, ops, rows };
  });
}

/** Visible labels whose boxes overlap (screen coordinates), as text pairs. */
async function overlappingLabels(page: Page): Promise<{ count: number; pairs: string[] }> {
  return page.evaluate(() => {
    const boxes = [...document.querySelectorAll<SVGTextElement>("#diagram text.label")]
      .map((t) => ({ t: t.textContent ?? "", b: t.getBoundingClientRect() }))
      .filter((x) => x.b.width > 0 && x.b.height > 0);
    const pairs: string[] = [];
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i]!.b;
        const c = boxes[j]!.b;
        const ox = Math.min(a.right, c.right) - Math.max(a.left, c.left);
        const oy = Math.min(a.bottom, c.bottom) - Math.max(a.top, c.top);
        // Glyph boxes include the font's line gap: a sliver of 1 px is not two labels on each other.
        if (ox > 1 && oy > 1) pairs.push(`'${boxes[i]!.t}' / '${boxes[j]!.t}'`);
      }
    return { count: boxes.length, pairs };
  });
}

async function openPage(file: string): Promise<Page> {
  const page = await (browser as Browser).newPage();
  await page.setViewport({ width: 1500, height: 1000, deviceScaleFactor: 1 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`file://${file}`, { waitUntil: "load" });
  await page.waitForSelector("#diagram text.lane-label");
  expect(errors).toEqual([]);
  return page;
}

/** Waits for the diagram's next frame (it redraws on requestAnimationFrame). */
async function frame(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(docsImg, { recursive: true });
  // No focus ring, no hover: the same pixels every run.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.mouse.move(0, 0);
  await frame(page);
  const png = await page.screenshot({ type: "png", fullPage: true });
  writeFileSync(join(docsImg, name), png);
}

interface Case {
  readonly collective: Collective;
  readonly algorithm: string;
  readonly n: number;
  /** The step the screenshot shows. */
  readonly shotAt: number;
  readonly png: string;
}

const CASES: Case[] = [
  { collective: "allreduce", algorithm: "ring", n: 8, shotAt: 4, png: "step-ring-allreduce-n8.png" },
  { collective: "allreduce", algorithm: "double_binary_tree", n: 16, shotAt: 6, png: "step-dbt-allreduce-n16.png" },
];

describe.skipIf(!chromium)("the step-through page in headless Chromium", () => {
  for (const c of CASES) {
    it(`${c.collective}/${c.algorithm} at n = ${c.n}: after each step the DOM shows explain's table, labels never overlap`, async () => {
      const file = join(dir, `${c.algorithm}-${c.n}.html`);
      const code = await traceCommand(c.collective, {
        algorithm: c.algorithm,
        nranks: c.n,
        root: 0,
        backend: "sim",
        output: file,
        labels: "auto",
      });
      expect(code).toBe(0);
      const alg = findAlgorithm(c.collective, c.algorithm, { op: "test" });
      const call = defaultTraceCall(alg, c.n);
      const text = explain(alg, {
        ...explainCall(alg, c.n),
        count: call.count,
        root: call.root,
        segment: call.segment,
      });
      const want = parseExplain(text, c.n);
      expect(want.length).toBeGreaterThan(3);

      const page = await openPage(file);
      expect(await page.$eval("#alg", (s) => (s as HTMLSelectElement).selectedOptions[0]?.textContent)).toBe(
        c.algorithm,
      );
      await page.focus("#step");
      for (let k = 0; k < want.length; k++) {
        if (k > 0) await page.keyboard.press("ArrowRight");
        const w = want[k] as ExplainStep;
        const got = await shown(page);
        expect(got.title, `slider at ${k}`).toBe(w.title);
        expect(got.ops).toEqual(w.ops);
        expect(got.rows).toEqual(w.rows);
        // The slider says where it is.
        expect(await page.$eval("#step", (s) => (s as HTMLInputElement).value)).toBe(String(k));
        if (k % 3 === 0 || k === want.length - 1) {
          await frame(page);
          const o = await overlappingLabels(page);
          expect(o.pairs, `labels overlap at step ${k}`).toEqual([]);
          expect(o.count).toBeGreaterThan(c.n); // lane labels, step headers, axis, messages
        }
      }
      // One more press stays on the last step.
      await page.keyboard.press("ArrowRight");
      expect((await shown(page)).title).toBe(want[want.length - 1]?.title);
      // Left arrow from the page (not the slider) steps back too.
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.keyboard.press("ArrowLeft");
      expect((await shown(page)).title).toBe(want[want.length - 2]?.title);

      // Every label mode, zoomed out and zoomed in: never two labels on each other.
      const counts: Record<string, number> = {};
      for (const mode of ["none", "auto", "all"]) {
        await page.select("#labels", mode);
        await frame(page);
        const o = await overlappingLabels(page);
        expect(o.pairs, `labels ${mode}`).toEqual([]);
        counts[mode] = await page.$$eval("#diagram text.msg-label", (ts) => ts.length);
      }
      expect(counts.none).toBe(0);
      expect(counts.all).toBeGreaterThanOrEqual(counts.auto as number);
      const box = await page.$eval("#diagram", (s) => {
        const r = s.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      });
      await page.mouse.move(box.x, box.y);
      for (let i = 0; i < 4; i++) await page.mouse.wheel({ deltaY: -300 });
      await frame(page);
      const zoomed = await overlappingLabels(page);
      expect(zoomed.pairs, "labels overlap zoomed in").toEqual([]);
      const lanesShown = await page.$$eval("#diagram line.lane", (ls) => ls.length);
      expect(lanesShown).toBeLessThan(c.n); // zoomed in: only some lanes in view
      await page.click("#reset");
      await frame(page);
      expect(await page.$$eval("#diagram line.lane", (ls) => ls.length)).toBe(c.n);

      // Hover on a message: its sender's and receiver's columns light up in the table.
      await page.select("#labels", "auto");
      await page.focus("#step");
      await page.keyboard.press("Home");
      for (let k = 0; k < c.shotAt; k++) await page.keyboard.press("ArrowRight");
      await frame(page);
      const current = await page.$eval("#diagram", (s) => s.getAttribute("data-current"));
      // The diagram emphasises the step the table shows.
      expect(current).toBe(/^step (\d+)/.exec((await shown(page)).title)?.[1]);
      const sel = `#diagram g.msg[data-p="${current}"]`;
      const msg = await page.$(`${sel} line.arrow`);
      expect(msg).not.toBeNull();
      const ends = await page.$eval(sel, (g) => [g.getAttribute("data-from"), g.getAttribute("data-to")]);
      await msg?.hover();
      const lit = await page.$$eval("#cells td.hl", (tds) => [
        ...new Set(tds.map((td) => td.getAttribute("data-rank"))),
      ]);
      expect(lit.sort()).toEqual([...new Set(ends)].sort());
      // ... and the message shows its send's and receive's spans on their lanes, and its hover text.
      expect(await page.$$eval(`${sel} .op-bar`, (bars) => bars.map((b) => getComputedStyle(b).visibility))).toEqual([
        "visible",
        "visible",
      ]);
      // It names the step as the table does and the regions it moves, in explain's words.
      expect(await page.$eval(`${sel} title`, (t) => t.textContent)).toMatch(
        new RegExp(`^step ${current}: rank ${ends[0]} \\S+\\[[\\d:]+\\] -> rank ${ends[1]} \\S+\\[[\\d:]+\\], `),
      );

      await shoot(page, c.png);
      await page.close();
    });
  }

  it("the deadlock page: the run's blocked sends in the diagram, Graphviz's wait-for cycle below", async () => {
    const file = join(dir, "deadlock.html");
    expect(await traceCommand("deadlock", { nranks: 2, root: 0, backend: "sim", output: file, labels: "auto" })).toBe(
      0,
    );
    const page = await openPage(file);
    expect(await page.$$eval("#diagram g.blocked", (gs) => gs.length)).toBe(2);
    const graph = await page.$eval("#deadlocks", (d) => ({
      title: d.querySelector("h2")?.textContent ?? "",
      nodes: d.querySelectorAll("svg g.node").length,
      edges: d.querySelectorAll("svg g.edge").length,
      text: d.querySelector("svg")?.textContent ?? "",
    }));
    expect(graph.title).toMatch(/wait-for cycle rank \d → rank \d → rank \d/);
    expect(graph.nodes).toBe(2);
    expect(graph.edges).toBe(2);
    expect(graph.text).toContain("blocked in send(to 1, 2 x float32, 'exchange')");
    // No message arrived: the step line says so, not "(1 of 0)" after an empty caption.
    expect(await page.$eval("#step-text", (e) => e.textContent)).toBe("no message arrived: nothing to step through");
    expect((await overlappingLabels(page)).pairs).toEqual([]);
    await shoot(page, "step-deadlock.png");
    await page.close();
  });

  it("a program's trace (cclab run --trace, examples/deadlock.ts): the deadlock, then the three fixes", async () => {
    const file = join(dir, "run-deadlock.html");
    const r = spawnSync(
      process.execPath,
      ["src/cli/bin.js", "run", "-n", "2", "--trace", file, "examples/deadlock.ts"],
      {
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    const page = await openPage(file);
    // A program has no explain table: the slider steps through time, the side panel counts bytes.
    expect(await page.$eval("#step-text", (s) => s.textContent)).toMatch(/^up to t = \d+/);
    expect(await page.$$eval("#totals tbody tr", (trs) => trs.length)).toBe(2);
    expect(await page.$$eval("#diagram g.blocked", (gs) => gs.length)).toBe(2);
    expect(await page.$$eval("#diagram g.msg", (gs) => gs.length)).toBe(6);
    expect(await page.$$eval("#deadlocks svg g.node", (gs) => gs.length)).toBe(2);
    expect((await overlappingLabels(page)).pairs).toEqual([]);
    await shoot(page, "run-deadlock.png");
    await page.close();
  });

  it("Bruck all-gather at n = 6 (teaching lesson 3)", async () => {
    const file = join(dir, "bruck.html");
    const code = await traceCommand("allgather", {
      algorithm: "bruck",
      nranks: 6,
      root: 0,
      backend: "sim",
      output: file,
      labels: "auto",
    });
    expect(code).toBe(0);
    const page = await openPage(file);
    await page.focus("#step");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    expect((await shown(page)).title).toBe("step 2");
    expect((await overlappingLabels(page)).pairs).toEqual([]);
    await shoot(page, "step-bruck-allgather-n6.png");
    await page.close();
  });
});

describe.skipIf(!chromium)("static pictures in headless Chromium", () => {
  it("renders the ring all-reduce diagram (n = 4) at its size, with arrows and reduction boxes", async () => {
    const alg = findAlgorithm("allreduce", "ring", { op: "test" });
    const svg = traceSvg(await traceOnSim(alg, defaultTraceCall(alg, 4)), { title: "allreduce/ring, n = 4" });
    const shot = screenshot("ring", svg);
    expect(pngSize(shot.png)).toEqual({ width: shot.width, height: shot.height });
    expect(shot.png.length).toBeGreaterThan(10_000);
    const img = decodePng(shot.png);
    const area = img.width * img.height;
    // Mostly background, but lanes, arrows and text make a real share of ink.
    expect(ink(img)).toBeGreaterThan(area * 0.02);
    expect(ink(img)).toBeLessThan(area * 0.5);
    expect(pixelsNear(img, [255, 127, 14], 30)).toBeGreaterThan(18 * 8); // 18 orange reduction boxes, partly under arrows
    expect(pixelsNear(img, [44, 160, 44], 40)).toBeGreaterThan(200); // step 1's green arrows
  });

  it("renders the seed 003 deadlock picture with its red cycle", async () => {
    const svg = deadlockSvg(await sendSendDeadlock(2));
    const shot = screenshot("deadlock", svg);
    expect(pngSize(shot.png)).toEqual({ width: shot.width, height: shot.height });
    const img = decodePng(shot.png);
    expect(ink(img)).toBeGreaterThan(img.width * img.height * 0.02);
    expect(pixelsNear(img, [214, 39, 40], 40)).toBeGreaterThan(500); // the red edges and borders
    expect(pixelsNear(img, [253, 232, 232], 12)).toBeGreaterThan(2 * 200 * 30); // two pink boxes
  });
});
