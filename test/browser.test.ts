/**
 * The pictures in a real browser: headless Chromium renders the ring all-reduce's time-space
 * diagram and the seed 003 deadlock picture to PNGs, and we read them back (IHDR size, decoded
 * pixels): the right size, mostly white with enough ink, and the colours the pictures promise.
 * Skips, saying why, where Chromium is not installed (CI: apt-get install -y chromium).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultTraceCall, sendSendDeadlock, traceOnSim } from "../src/cli/trace.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { deadlockSvg } from "../src/viz/deadlock.js";
import { htmlPage, svgSize } from "../src/viz/svg.js";
import { traceSvg } from "../src/viz/trace.js";
import { decodePng, type Png, pngSize } from "./fixtures/viz/check.js";

function findChromium(): string | undefined {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      return execFileSync("which", [name], { encoding: "utf8" }).trim() || undefined;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const chromium = findChromium();
if (!chromium) console.log("browser.test.ts skipped: no chromium on PATH (Debian: apt-get install -y chromium)");

const dir = mkdtempSync(join(tmpdir(), "cclab-browser-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Renders an SVG in an HTML page to a PNG of exactly the SVG's size. */
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
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--hide-scrollbars",
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

describe.skipIf(!chromium)("pictures in headless Chromium", () => {
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
