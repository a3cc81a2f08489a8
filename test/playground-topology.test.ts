/**
 * The playground's topology field (src/playground/client/topology.ts) in headless Chromium: Explain
 * of swing_latency on torus:4x4 is `cclab explain --topology torus:4x4`'s text, character for
 * character (the multiport schedule), and differs from the flat one; a program Run with the field
 * set sends to torus neighbours only (rank 0 to 1, 3, 4 and 12; flat, to 1, 3, 11 and 15); the
 * field travels in a share link; a bad topology is an error naming the field, shown as text
 * (a payload in it never runs). Skips, saying why, where Chromium is not installed.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { Page } from "puppeteer-core";
import { describe, expect, it } from "vitest";
import { findChromium } from "./support/chromium.js";
import { builtPlayground } from "./support/playground.js";

const chromium = findChromium();
if (!chromium)
  console.log("playground-topology.test.ts skipped: no chromium on PATH (Debian: apt-get install -y chromium)");

const ROOT = join(import.meta.dirname, "..");
const built = builtPlayground("cclab-playground-topology-", chromium, 180_000);
const url = built.url;

interface Handle {
  ready: boolean;
  setSource(text: string): void;
  busy(): boolean;
  share(): Promise<string>;
  lastResult(): { traced: { events: { kind: string; rank: number; peer?: number }[] } } | undefined;
}
declare const playground: Handle;

const open = built.open;

const close = built.close;

async function idle(page: Page): Promise<void> {
  await page.waitForFunction(() => !playground.busy(), { timeout: 60_000, polling: 50 });
}

const text = (page: Page, sel: string) => page.$eval(sel, (e) => e.textContent ?? "");

async function setValue(page: Page, sel: string, value: string): Promise<void> {
  await page.$eval(
    sel,
    (e, v) => {
      (e as unknown as { value: string }).value = v;
      e.dispatchEvent(new Event("change"));
    },
    value,
  );
}

/** `cclab explain` as the command line prints it. */
function cliExplain(...args: string[]): string {
  return execFileSync(process.execPath, [join(ROOT, "src/cli/bin.js"), "explain", "allreduce", ...args], {
    encoding: "utf8",
    cwd: ROOT,
  });
}

/** The peers each rank sent to in the last Run's trace. */
async function peersOf(page: Page): Promise<Map<number, number[]>> {
  const events = await page.evaluate(() => playground.lastResult()?.traced.events ?? []);
  const m = new Map<number, Set<number>>();
  for (const e of events)
    if (e.kind === "send" && e.peer !== undefined) (m.get(e.rank) ?? m.set(e.rank, new Set()).get(e.rank))?.add(e.peer);
  return new Map([...m].map(([r, s]) => [r, [...s].sort((a, b) => a - b)]));
}

/** A program as a student writes one: one all-reduce with Swing, latency-optimal. */
const PROGRAM = `import { allReduce, type Comm } from "../src/index.js";

export async function main(comm: Comm): Promise<void> {
  const a = new Float32Array(8).fill(comm.rank);
  await allReduce(comm, a, { algorithm: "swing_latency" });
  console.log(String(a[0]));
}
`;

describe.skipIf(!chromium)("the playground's topology field", () => {
  it("Explain of swing_latency on torus:4x4 is cclab explain --topology torus:4x4's text; blank, the flat one's", async () => {
    const page = await open(`${url()}#example=algorithms/allreduce/swing_latency.ts&n=16&topology=torus:4x4&explain=1`);
    await idle(page);
    expect(await page.$eval("#topology", (e) => (e as unknown as { value: string }).value)).toBe("torus:4x4");
    const shaped = `${await text(page, "#explain-text")}\n`;
    expect(shaped).toBe(cliExplain("--algorithm", "swing_latency", "-n", "16", "--topology", "torus:4x4"));
    expect(await text(page, "#status")).toContain("n = 16 on torus:4x4");
    await setValue(page, "#topology", "");
    await page.click("#explain");
    await idle(page);
    const flat = `${await text(page, "#explain-text")}\n`;
    expect(flat).toBe(cliExplain("--algorithm", "swing_latency", "-n", "16"));
    expect(flat).not.toBe(shaped);
    await close(page);
  }, 120_000);

  it("Run: a program's swing_latency sends to torus neighbours on torus:4x4 (rank 0: 1, 3, 4, 12), flat to 1, 3, 11, 15", async () => {
    const page = await open(`${url()}#example=examples/all_reduce.ts&n=16`);
    await page.evaluate((src) => playground.setSource(src), PROGRAM);
    await setValue(page, "#topology", "torus:4x4");
    await page.click("#run");
    await idle(page);
    expect(await page.$eval("#status", (e) => e.className), await text(page, "#status")).toBe("ok");
    const shaped = await peersOf(page);
    expect(shaped.get(0)).toEqual([1, 3, 4, 12]);
    expect(shaped.get(5)).toEqual([1, 4, 6, 9]);
    // The field travels in a share link: the link opens with it set.
    const link = await page.evaluate(() => playground.share());
    const again = await open(link);
    expect(await again.$eval("#topology", (e) => (e as unknown as { value: string }).value)).toBe("torus:4x4");
    await close(again);
    await setValue(page, "#topology", "");
    await page.click("#run");
    await idle(page);
    expect((await peersOf(page)).get(0)).toEqual([1, 3, 11, 15]);
    await close(page);
  }, 120_000);

  it("a bad topology is an error naming the field, shown as text: a payload in it never runs", async () => {
    const page = await open(`${url()}#example=algorithms/allreduce/swing_latency.ts&n=4`);
    for (const [value, says] of [
      ["torus:4xq", "playground: argument 'topology': --topology: 'torus:4xq'"],
      ["ring:2", "playground: argument 'topology': 'ring:2': has 2 hosts, fewer than the 4 ranks (n)"],
      ["fattree:k=4", "the playground takes ring[:N], torus:AxB[xC...] or mesh:AxB[xC...]"],
      ['<img src=x onerror="window.__pwned=1">', "'<img src=x onerror=\"window.__pwned=1\">': the playground takes"],
    ] as const) {
      await setValue(page, "#topology", value);
      await page.click("#explain");
      await idle(page);
      expect(await page.$eval("#status", (e) => e.className), value).toBe("error");
      expect(await text(page, "#status")).toContain(says);
    }
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.$$eval("#status img", (els) => els.length)).toBe(0);
    await close(page);
  }, 120_000);
});
