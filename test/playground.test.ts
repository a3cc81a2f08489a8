/**
 * The playground (`cclab playground -o site/`) in headless Chromium through puppeteer-core, as
 * test/browser.test.ts drives the step-through page. The site is built once for the file and
 * opened from file://: the send-send deadlock example under nccl shows its wait-for cycle with
 * the blocked sends named, and passes under buffered; ring all-reduce with one send's peer
 * swapped fails Verify with a counterexample, and the fixed one's Explain table is `cclab
 * explain`'s, character for character; `while (true) {}` is stopped at its time bound and the
 * tab stays responsive; a shared link reopens the same files, settings and step; the site also
 * loads from the --serve server. It measures the site's gzipped size and the first load, and
 * writes the screenshots docs/teaching.md shows (docs/img/playground-*.png).
 * Skips, saying why, where Chromium is not installed (CI: apt-get install -y chromium).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import type { Page } from "puppeteer-core";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../src/playground/build.js";
import { makeLoader, transpile } from "../src/playground/client/loader.js";
import { importsOf, resolvePath } from "../src/playground/client/paths.js";
import { decodeShared, encodeShared, type Shared } from "../src/playground/client/share.js";
import { serveSite } from "../src/playground/serve.js";
import { findChromium } from "./support/chromium.js";
import { underLoad } from "./support/load.js";
import { builtPlayground } from "./support/playground.js";

const chromium = findChromium();
if (!chromium) console.log("playground.test.ts skipped: no chromium on PATH (Debian: apt-get install -y chromium)");

const ROOT = join(import.meta.dirname, "..");
const docsImg = join(ROOT, "docs", "img");
const built = builtPlayground("cclab-playground-", chromium, 120_000);
const dir = built.dir;
const url = built.url;

interface Handle {
  ready: boolean;
  getSource(): string;
  setSource(text: string): void;
  busy(): boolean;
  progressSeen(): number;
  share(): Promise<string>;
  step(): number;
  workspace(): { files: Record<string, string>; main: string; current: string };
}
declare const playground: Handle;

/** A new page at `address`, once the playground says it is ready. */
const open = built.open;

/** Closes a page; an uncaught error on it fails the test. */
const close = built.close;

async function idle(page: Page, timeout = 60_000): Promise<void> {
  await page.waitForFunction(() => !playground.busy(), { timeout, polling: 50 });
}

const text = (page: Page, sel: string) => page.$eval(sel, (e) => e.textContent ?? "");
const status = (page: Page) => text(page, "#status");

async function setValue(page: Page, sel: string, value: string): Promise<void> {
  await page.$eval(
    sel,
    (e, v) => {
      const el = e as HTMLInputElement;
      el.value = v;
      el.dispatchEvent(new Event("change"));
    },
    value,
  );
}

/** A screenshot of the page for docs/img, at the viewport's size. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(docsImg, `playground-${name}.png`) as `${string}.png` });
}

// What needs no browser (Node has CompressionStream too): these run wherever the suite does.
describe("the playground's parts, in Node", () => {
  it("resolves imports as a checkout would, and names the packages it has", () => {
    expect(resolvePath("examples/deadlock.ts", "../src/index.js")).toBe("src/index");
    expect(resolvePath("algorithms/allreduce/ring.ts", "../lib/ring.js")).toBe("algorithms/lib/ring");
    expect(resolvePath("algorithms/allreduce/ring.ts", "../../src/schedule/dsl.js")).toBe("src/schedule/dsl");
    expect(resolvePath("examples/algorithms/sliced_ring_broken.ts", "./sliced_ring.js")).toBe(
      "examples/algorithms/sliced_ring",
    );
    expect(resolvePath("mine.ts", "cclab")).toBe("src/index");
    expect(resolvePath("mine.ts", "cclab/dsl")).toBe("src/schedule/dsl");
    expect(resolvePath("mine.ts", "lodash")).toBeUndefined();
    expect(resolvePath("mine.ts", "../../x.js")).toBeUndefined();
    expect(importsOf('import a from "./a.js";\nimport { b } from "../b.js";\nexport { a } from "./a.js";')).toEqual([
      "./a.js",
      "../b.js",
    ]);
  });

  it("every import of every file the site carries resolves to a carried file or a bundled module", () => {
    const files = sourceFiles();
    const carried = new Set(files.map((f) => f.path.replace(/\.ts$/, "")));
    const bad: string[] = [];
    for (const f of files) {
      for (const spec of importsOf(f.text)) {
        const key = resolvePath(f.path, spec);
        const bundled =
          key !== undefined &&
          (carried.has(key) ||
            key === "src/index" ||
            key === "examples/_run" ||
            key === "examples/_tensor" ||
            /^src\/(core|specs|schedule|sim|collectives)\//.test(key));
        if (!bundled) bad.push(`${f.path}: ${spec}`);
      }
    }
    expect(bad).toEqual([]);
    expect(files.filter((f) => f.group === "programs").map((f) => f.path)).toContain("examples/deadlock.ts");
  });

  it("loads a file: types stripped, lines kept, imports from the workspace first, then the bundled modules", () => {
    const api = { answer: 42 };
    const files = {
      "examples/main.ts":
        'import { answer } from "../src/index.js";\nimport { twice } from "./lib.js";\nexport const x: number = twice(answer);\n',
      "examples/lib.ts": "export const twice = (n: number): number => 2 * n;\n",
    };
    const loaded = makeLoader(files, { "src/index": api }, console).load("examples/main.ts");
    expect(loaded.x).toBe(84);
    // sucrase keeps each line where it was, so a stack trace's line is the editor's.
    const js = transpile("a.ts", "const a: number = 1;\ninterface I { x: number }\nexport const b = a;\n");
    expect(js.split("\n")[2]).toContain("const b = a;");
    expect(() =>
      makeLoader(
        { "examples/m.ts": 'import { x } from "../src/runtime/init.js";\nexport const y = x;' },
        {},
        console,
      ).load("examples/m.ts"),
    ).toThrow(
      /^examples\/m\.ts: import '\.\.\/src\/runtime\/init\.js' \(src\/runtime\/init\.ts\): not in the playground/,
    );
    expect(() =>
      makeLoader({ "m.ts": 'import fs from "node:fs";\nexport const y = fs;' }, {}, console).load("m.ts"),
    ).toThrow(/^m\.ts: import 'node:fs': the playground resolves relative paths into the repository and 'cclab'/);
  });

  it("a shared state round-trips through the URL's fragment; the readable form opens an example", async () => {
    const state: Shared = {
      files: { "examples/deadlock.ts": "// é ✓ <script>\nexport async function main() {}\n".repeat(50) },
      main: "examples/deadlock.ts",
      current: "examples/deadlock.ts",
      n: 3,
      semantics: "buffered",
      seed: -5,
      lo: 2,
      hi: 9,
      runs: 40,
      limit: 7,
      action: "run",
      step: 4,
    };
    const hash = await encodeShared(state);
    expect(hash).toMatch(/^s=[A-Za-z0-9_-]+$/);
    // Deflated: 50 copies of a line take far less than their length.
    expect(hash.length).toBeLessThan(600);
    expect(await decodeShared(`#${hash}`)).toEqual(state);
    expect(await decodeShared("#example=examples/deadlock.ts&semantics=nccl&n=2&run=1&step=3")).toEqual({
      example: "examples/deadlock.ts",
      semantics: "nccl",
      n: 2,
      action: "run",
      step: 3,
    });
    expect(await decodeShared("")).toBeUndefined();
    await expect(decodeShared("#s=AAAA")).rejects.toThrow();
  });
});

describe.skipIf(!chromium)("the playground in Chromium", () => {
  it("builds a site under 2 MB gzipped and loads from file:// (first load measured)", async () => {
    const r = built.site();
    expect(r.files.map((f) => f.path).sort()).toEqual([
      "assets/graphviz.js",
      "assets/playground.js",
      "assets/runner.js",
      "assets/sources.js",
      "assets/worker.js",
      "index.html",
      "runner.html",
    ]);
    expect(r.gzipBytes).toBeLessThan(2 * 1024 * 1024);
    const page = await open(url());
    // Interactive: the editor holds the first example and the buttons work (performance.now() at ready).
    const ms = Number(await page.evaluate(() => document.body.dataset.ready));
    console.log(
      `playground: ${r.files.map((f) => `${f.path} ${(f.gzipBytes / 1024).toFixed(1)} KiB`).join(", ")}; ` +
        `total ${(r.bytes / 1024).toFixed(1)} KiB, ${(r.gzipBytes / 1024).toFixed(1)} KiB gzipped; first load from file:// interactive at ${ms} ms`,
    );
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThan(underLoad(10_000));
    expect(await page.evaluate(() => playground.getSource())).toContain("export async function main");
    await close(page);
  });

  it("send-send deadlock: the cycle under nccl with the blocked sends named; it passes under buffered", async () => {
    const page = await open(`${url()}#example=examples/deadlock.ts&semantics=nccl`);
    expect(await page.$eval("#semantics", (e) => (e as HTMLSelectElement).value)).toBe("nccl");
    await page.click("#run");
    await idle(page);
    expect(await text(page, "#deadlock .deadlock-title")).toBe(
      "deadlock at round 0: wait-for cycle rank 0 → rank 1 → rank 0",
    );
    const blocked = await page.$$eval("#deadlock .blocked li", (els) => els.map((e) => e.textContent));
    expect(blocked).toEqual([
      "rank 0 blocked in send(to 1, 2 x float32, 'exchange')",
      "rank 1 blocked in send(to 0, 2 x float32, 'exchange')",
    ]);
    // Drawn at once as a circle, then laid out by Graphviz (loaded on this first deadlock), as the step-through page does.
    await page.waitForSelector('#deadlock .graph[data-layout="graphviz"]', { timeout: 30_000 });
    const graph = await page.$$eval("#deadlock .graph svg text", (els) => els.map((e) => e.textContent ?? ""));
    expect(graph).toContain("blocked in send(to 1, 2 x float32, 'exchange')");
    expect(graph).toContain("blocked in send(to 0, 2 x float32, 'exchange')");
    expect(graph.filter((t) => t === "waits for (send)")).toHaveLength(2);
    expect(await text(page, "#rank-0")).toContain("Rank 0: caught DeadlockError in send(to 1)");
    expect(await text(page, "#rank-1")).toContain("fix c (isend and irecv first, then wait on both)");
    await shoot(page, "deadlock");

    await page.select("#semantics", "buffered");
    await page.click("#run");
    await idle(page);
    expect(await page.$$eval("#deadlock *", (els) => els.length)).toBe(0);
    expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
    expect(await text(page, "#rank-0")).toContain("Rank 0: no deadlock under these semantics (sends were buffered)");
    await close(page);
  });

  it("ring all-reduce with one send's peer swapped fails Verify with a counterexample; fixed, Explain is cclab explain's", async () => {
    const page = await open(`${url()}#example=algorithms/allreduce/ring.ts&n=4`);
    await page.select("#imports", "algorithms/lib/ring.ts");
    const lib = await page.evaluate(() => playground.getSource());
    const send = "send(next, chunkOf(from, out))";
    // Two such sends: the reduce-scatter's, then the all-gather's; the all-gather's goes the wrong way.
    expect(lib.split(send).length).toBe(3);
    const at = lib.lastIndexOf(send);
    const broken = `${lib.slice(0, at)}send(prev, chunkOf(from, out))${lib.slice(at + send.length)}`;
    await page.evaluate((t) => playground.setSource(t), broken);
    await setValue(page, "#hi", "6");
    await page.click("#verify");
    await idle(page);
    expect(await text(page, "#verify-verdict")).toBe("FAILED (static proof)");
    const cex = await text(page, "#counterexample");
    // n = 2 has next = prev, so the first size the swap breaks is 3.
    expect(cex).toMatch(/^allreduce\/ring \(n=3, count=\d+/);
    expect(await page.$eval("#replay", (e) => e.textContent)).toContain("n = 3");
    await shoot(page, "verify");
    await page.click("#replay");
    await idle(page);
    expect(await text(page, "#verdict")).toMatch(/^the static checker rejects this call.*\(n=3, /);

    // Fixed: the import as it was; Explain at n = 4 prints what the command line prints.
    await page.evaluate((t) => playground.setSource(t), lib);
    await page.select("#file", "algorithms/allreduce/ring.ts");

    // A bug the static proof's counts miss (it checks counts up to 2n + 3): the property tests find it.
    const alg = await page.evaluate(() => playground.getSource());
    const gather = "yield* ringAllGather(rank, size, output, chunks);";
    expect(alg).toContain(gather);
    await page.evaluate(
      (t) => playground.setSource(t),
      alg.replace(
        gather,
        "yield* ringAllGather(rank, size, output, count > 2 * size + 3 ? [...chunks].reverse() : chunks);",
      ),
    );
    await setValue(page, "#lo", "2");
    await setValue(page, "#hi", "4");
    await setValue(page, "#runs", "50");
    await page.click("#verify");
    await idle(page);
    expect(await text(page, "#verify-verdict")).toBe("FAILED (property test)");
    const found = await text(page, "#counterexample");
    const m =
      /^minimal counterexample after \d+ shrinks: allreduce\/ring, n=(\d+), count=(\d+), .*: rank \d+ output\[\d+\] = /.exec(
        found,
      );
    expect(m, found).not.toBeNull();
    const [n, count] = [Number(m?.[1]), Number(m?.[2])];
    expect(count).toBeGreaterThan(2 * n + 3);
    expect(await text(page, "#verify-out")).toContain(
      "cclab verify --collective allreduce --algorithm ring --max-n 4 -n 2..4 --seed 1 --runs 50",
    );
    await page.click("#replay");
    await idle(page);
    expect(await text(page, "#trace-title")).toContain(`n = ${n}, count = ${count}`);
    expect(await text(page, "#verdict")).toMatch(
      new RegExp(
        `^the static checker rejects this call.*\\(n=${n}, count=${count}\\): rank \\d+: output\\[\\d+\\] holds`,
      ),
    );
    await page.evaluate((t) => playground.setSource(t), alg);
    await setValue(page, "#lo", "1");
    await setValue(page, "#runs", "25");
    const before = await page.evaluate(() => playground.progressSeen());
    await page.click("#verify");
    await idle(page);
    expect(await text(page, "#verify-verdict")).toBe("verified");
    expect(await text(page, "#verify-out pre")).toMatch(
      /^allreduce\/ring: static proof, \d+ cases; property tests, 25 cases: all pass$/,
    );
    // Progress came as it went (at most one message per 50 ms, and always the last).
    expect(await page.evaluate(() => playground.progressSeen())).toBeGreaterThan(before);
    await page.click("#explain");
    await idle(page);
    const cli = execFileSync(
      process.execPath,
      [join(ROOT, "src/cli/bin.js"), "explain", "allreduce", "--algorithm", "ring", "-n", "4"],
      { encoding: "utf8" },
    );
    expect(`${await text(page, "#explain-text")}\n`).toBe(cli);
    // The step table beside the diagram, after the slider's third step, is explain's step 3.
    await page.$eval("#step", (e) => {
      (e as HTMLInputElement).value = "2";
      e.dispatchEvent(new Event("input"));
    });
    const ops = await page.$$eval("#ops li", (els) => els.map((e) => e.textContent ?? ""));
    const step3 = cli.slice(cli.indexOf("\nstep 3\n"));
    for (const o of ops) expect(step3).toContain(`  ${o}\n`);
    await shoot(page, "explain");
    await close(page);
  });

  it("while (true) {} is stopped at its time bound, the tab stays responsive, Stop ends a job at once, a throw names its line", async () => {
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    await page.evaluate(() => playground.setSource("export async function main() {\n  while (true) {}\n}\n"));
    await setValue(page, "#limit", "2");
    const t0 = Date.now();
    await page.click("#run");
    // The page answers while the worker spins.
    expect(await page.evaluate(() => playground.busy())).toBe(true);
    await idle(page, 20_000);
    const took = Date.now() - t0;
    expect(await status(page)).toContain("ran past its limit of 2 s");
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(underLoad(6000));

    await setValue(page, "#limit", "60");
    await page.click("#run");
    expect(await page.evaluate(() => playground.busy())).toBe(true);
    const t1 = Date.now();
    await page.click("#stop");
    await idle(page, 5000);
    expect(Date.now() - t1).toBeLessThan(underLoad(2000));
    expect(await status(page)).toMatch(/^stopped by you after/);

    // A rank that throws: the run fails naming the rank, and the line is the editor's.
    await page.evaluate(() =>
      playground.setSource(
        "export async function main(comm) {\n  // rank 1 fails\n  if (comm.rank === 1) throw new Error('boom');\n}\n",
      ),
    );
    await page.click("#run");
    await idle(page);
    expect(await status(page)).toMatch(
      /^the run failed: RankError: rank 1 failed: Error: boom\n\s+at main \(examples\/send_recv\.ts:3:\d+\)/,
    );
    await close(page);
  });

  it("a shared link reopens the same files, settings and step", async () => {
    const page = await open(`${url()}#example=examples/deadlock.ts`);
    const edited = `// my lesson\n${await page.evaluate(() => playground.getSource())}`;
    await page.evaluate((t) => playground.setSource(t), edited);
    await page.select("#semantics", "mpi-eager");
    await setValue(page, "#seed", "7");
    await page.click("#run");
    await idle(page);
    await page.$eval("#step", (e) => {
      (e as HTMLInputElement).value = "1";
      e.dispatchEvent(new Event("input"));
    });
    // The address bar keeps the state as it changes (a reload keeps the code), Share or not.
    await page.waitForFunction((t) => location.hash.startsWith("#s=") && playground.getSource() === t, {}, edited);
    await page.waitForFunction(() => playground.step() === 1);
    // It is written a moment after the last change: wait until it holds the step, then reload.
    for (let tries = 0; ; tries++) {
      const kept = await decodeShared(await page.evaluate(() => location.hash));
      if (kept?.step === 1 && kept.files?.[kept.main ?? ""] === edited) break;
      expect(tries, "the address bar never held step 1").toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 50));
    }
    await page.reload();
    await page.waitForFunction(() => (globalThis as { playground?: Handle }).playground?.ready);
    expect(await page.evaluate(() => playground.getSource())).toBe(edited);
    // A link's own program waits for Run (test/playground-hostile.test.ts holds why); Run shows the step it kept.
    const waits = async (p: Page) => {
      expect(await p.evaluate(() => playground.busy())).toBe(false);
      expect(await p.$eval("#trace-out", (e) => e.classList.contains("hidden"))).toBe(true);
      expect(await status(p)).toMatch(/nothing has run yet; read it, then press Run$/);
      await p.click("#run");
      await idle(p);
    };
    await waits(page);
    expect(await page.evaluate(() => playground.step())).toBe(1);
    const link = await page.evaluate(() => playground.share());
    expect(link).toMatch(/#s=[A-Za-z0-9_-]+$/);
    const caption = await text(page, "#step-text");
    await close(page);

    const again = await open(link);
    await waits(again);
    expect(await again.evaluate(() => playground.getSource())).toBe(edited);
    expect(await again.$eval("#semantics", (e) => (e as HTMLSelectElement).value)).toBe("mpi-eager");
    expect(await again.$eval("#seed", (e) => (e as HTMLInputElement).value)).toBe("7");
    expect(await again.evaluate(() => playground.step())).toBe(1);
    expect(await text(again, "#step-text")).toBe(caption);
    await close(again);
  });

  it("every lesson's link in docs/teaching.md opens its program and runs or explains it", async () => {
    const doc = readFileSync(join(ROOT, "docs", "teaching.md"), "utf8");
    const links = [...doc.matchAll(/\]\(\.\.\/site\/index\.html(#[^)]+)\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThanOrEqual(5);
    for (const hash of links) {
      const page = await open(`${url()}${hash}`);
      await idle(page);
      const example = new URLSearchParams(hash.slice(1)).get("example");
      expect(await page.evaluate(() => playground.workspace().main), hash).toBe(example);
      expect(await page.$eval("#status", (e) => e.className), `${hash}: ${await status(page)}`).not.toBe("error");
      const shown = hash.includes("explain=1") ? "#explain-text" : "#trace-title";
      expect(await text(page, shown), hash).toMatch(/\S/);
      await close(page);
    }
  });

  it("every file of the Examples menu runs (a program) or explains (an algorithm) at n = 4 without an error", async () => {
    const page = await open(url());
    // The site's own files: the menu opens your kept copy of a file, and earlier tests edited some.
    await page.evaluate(() => localStorage.clear());
    const menu = await page.$$eval("#examples option", (els) => els.map((e) => (e as HTMLOptionElement).value));
    const files = menu.filter((p) => !/^algorithms\/(lib|topology)\//.test(p));
    expect(files).toContain("examples/deadlock.ts");
    expect(files).toContain("algorithms/allreduce/ring.ts");
    expect(files).toContain("examples/algorithms/sliced_ring_broken.ts");
    const failed: string[] = [];
    for (const path of files) {
      await page.select("#examples", path);
      const program = path.startsWith("examples/") && !path.startsWith("examples/algorithms/");
      await page.click(program ? "#run" : "#explain");
      await idle(page);
      const [cls, said] = await page.$eval("#status", (e) => [e.className, e.textContent ?? ""]);
      if (cls === "error") failed.push(`${path}: ${said}`);
    }
    expect(failed).toEqual([]);
    await close(page);
  });

  it("loads over HTTP from the --serve server too", async () => {
    const { server, url: base } = await serveSite(dir, 0);
    try {
      const page = await open(`${base}#example=examples/send_recv.ts&run=1`);
      await idle(page);
      expect(await text(page, "#rank-3")).toMatch(/\S/);
      await close(page);
    } finally {
      // Chromium may hold a connection it opened ahead and never used: close() alone waits on it.
      (server as Server).closeAllConnections();
      await new Promise((r) => (server as Server).close(r));
    }
  });
});

describe.skipIf(!chromium)("the playground keeps your work and shows your output", () => {
  it("console.log inside a rank goes to that rank's panel, and a tensor prints as its values", async () => {
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    await page.evaluate(() =>
      playground.setSource(
        [
          'import { tensor } from "../src/index.js";',
          'import { printer } from "./_run.js";',
          "export async function main(comm) {",
          '  const t = tensor("float32", [comm.rank, 1.5]);',
          "  console.log('rank', comm.rank, t);",
          "  printer(comm)(t, new Int32Array([7, 8]), { n: 2n });",
          "}",
        ].join("\n"),
      ),
    );
    await page.click("#run");
    await idle(page);
    for (const r of [0, 1, 2, 3]) {
      expect(await text(page, `#rank-${r}`)).toBe(
        `rank ${r} tensor([${r}, 1.5], dtype=float32)\ntensor([${r}, 1.5], dtype=float32) Int32Array(2) [7, 8] {"n":"2n"}`,
      );
    }
    expect(await page.$eval("#console", (e) => e.classList.contains("hidden"))).toBe(true);
    await close(page);
  });

  it("edits survive switching examples and a reload; Revert asks; a switch that would discard a link's program asks first", async () => {
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    const original = await page.evaluate(() => playground.getSource());
    const edited = `// mine\n${original}`;
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
    await page.evaluate((t) => playground.setSource(t), edited);
    await page.select("#examples", "examples/deadlock.ts");
    expect(await page.evaluate(() => playground.workspace().main)).toBe("examples/deadlock.ts");
    await page.select("#examples", "examples/send_recv.ts");
    expect(await page.evaluate(() => playground.getSource())).toBe(edited);
    expect(await status(page)).toMatch(/^opened your edited copy of examples\/send_recv\.ts \(kept in this browser/);
    expect(dialogs).toEqual([]);
    // Back returns to the example opened before, in the page (it left for about:blank).
    await page.goBack();
    await page.waitForFunction(() => playground.workspace().main === "examples/deadlock.ts");
    expect(page.url()).not.toBe("about:blank");
    await page.goForward();
    await page.waitForFunction(() => playground.workspace().main === "examples/send_recv.ts");
    expect(await page.evaluate(() => playground.getSource())).toBe(edited);
    // The page opened again with no link: the last example, with your edits.
    await page.goto(url());
    await page.waitForFunction(() => (globalThis as { playground?: Handle }).playground?.ready);
    expect(await page.evaluate(() => playground.getSource())).toBe(edited);
    await page.click("#revert");
    expect(dialogs).toEqual(["Discard your edits to examples/send_recv.ts and show the site's text?"]);
    expect(await page.evaluate(() => playground.getSource())).toBe(original);
    await close(page);

    // A shared link's program is kept nowhere else: switching away asks, and Cancel keeps it.
    const state: Shared = {
      files: { "examples/mine.ts": "export async function main() {}\n" },
      main: "examples/mine.ts",
      current: "examples/mine.ts",
      n: 2,
      semantics: "nccl",
      seed: 1,
      lo: 1,
      hi: 4,
      runs: 5,
      limit: 10,
    };
    const linked = await open(`${url()}#${await encodeShared(state)}`);
    const asked: string[] = [];
    let answer = false;
    linked.on("dialog", (d) => {
      asked.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    });
    await linked.select("#examples", "examples/deadlock.ts");
    expect(asked[0]).toMatch(/^Open examples\/deadlock\.ts\? examples\/mine\.ts is kept nowhere else/);
    expect(await linked.evaluate(() => playground.workspace().main)).toBe("examples/mine.ts");
    answer = true;
    await linked.select("#examples", "examples/deadlock.ts");
    expect(asked.length).toBe(2);
    expect(await linked.evaluate(() => playground.workspace().main)).toBe("examples/deadlock.ts");
    await close(linked);
  });

  it("a new program and a new algorithm start from templates with an API hint, and each runs as it says", async () => {
    const page = await open(url());
    await page.evaluate(() => localStorage.clear());
    const groups = await page.$$eval("#examples optgroup", (els) => els.map((e) => e.getAttribute("label")));
    expect(groups[0]).toBe("start your own: a new program (Run) or a new algorithm (Verify, Explain)");
    expect(groups).toContain("programs: main(comm), press Run");
    await page.select("#examples", "examples/mine.ts");
    expect(await page.evaluate(() => playground.getSource())).toMatch(
      /^\/\/ A program: main\(comm\) runs on every simulated rank; press Run\. API: /,
    );
    await page.click("#run");
    await idle(page);
    expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
    expect(await text(page, "#rank-1")).toBe("rank 1 of 4: tensor([6, 10], dtype=float32)");
    await page.select("#examples", "examples/algorithms/mine.ts");
    expect(await page.evaluate(() => playground.getSource())).toMatch(/^\/\/ An algorithm: .* API: yield step\(/);
    await setValue(page, "#hi", "6");
    await page.click("#verify");
    await idle(page);
    expect(await status(page)).toMatch(/^broadcast\/mine verified/);
    await close(page);
  });

  it("a built-in algorithm runs under its own name until it is edited, then as '<name>_yours'", async () => {
    const page = await open(`${url()}#example=algorithms/allreduce/ring.ts&n=4&explain=1`);
    await idle(page);
    expect(await status(page)).not.toContain("yours runs as");
    await page.evaluate(() => playground.setSource(`// mine\n${playground.getSource()}`));
    await page.click("#explain");
    await idle(page);
    expect(await status(page)).toContain("allreduce has a built-in 'ring': yours runs as 'ring_yours'");
    await close(page);
  });

  it("the student's exercise, end to end: a send-first program deadlocks, fixed it runs; ring verifies, broken it fails, its counterexample replays", async () => {
    const page = await open(url());
    await page.evaluate(() => localStorage.clear());
    await page.select("#examples", "examples/mine.ts");
    await setValue(page, "#n", "2");
    const program = (fixed: boolean) =>
      [
        'import { type Comm, tensor, view, zeros } from "../src/index.js";',
        "export async function main(comm: Comm): Promise<void> {",
        "  const peer = 1 - comm.rank;",
        '  const mine = tensor("float32", [comm.rank]);',
        '  const theirs = zeros("float32", 1);',
        fixed ? "  if (comm.rank === 1) await comm.recv(view(theirs), peer);" : "",
        "  await comm.send(view(mine), peer);",
        fixed
          ? "  if (comm.rank === 0) await comm.recv(view(theirs), peer);"
          : "  await comm.recv(view(theirs), peer);",
        "}",
      ].join("\n");
    await page.evaluate((t) => playground.setSource(t), program(false));
    await page.click("#run");
    await idle(page);
    expect(await page.$eval("#status", (e) => e.className)).toBe("error");
    expect(await text(page, "#deadlock .deadlock-title")).toContain("wait-for cycle rank 0 → rank 1 → rank 0");
    // The deadlock's message once, below; the status only says what happened.
    expect(await status(page)).toBe(
      "the run failed: it deadlocked (the wait-for cycle and every blocked operation below)",
    );
    const body = await page.evaluate(() => document.body.textContent ?? "");
    expect(body.split("every unfinished rank is blocked").length).toBe(2);
    await page.evaluate((t) => playground.setSource(t), program(true));
    await page.click("#run");
    await idle(page);
    expect(await status(page)).toMatch(/^ran to the end: no deadlock/);

    await page.select("#examples", "algorithms/allreduce/ring.ts");
    await setValue(page, "#hi", "6");
    await setValue(page, "#runs", "10");
    await page.click("#verify");
    await idle(page);
    expect(await text(page, "#verify-verdict")).toBe("verified");
    const gather = "yield* ringAllGather(rank, size, output, chunks);";
    const source = await page.evaluate(() => playground.getSource());
    expect(source).toContain(gather);
    await page.evaluate(
      (t) => playground.setSource(t),
      source.replace(gather, "yield* ringAllGather(rank, size, output, [...chunks].reverse());"),
    );
    await page.click("#verify");
    await idle(page);
    expect(await text(page, "#verify-verdict")).toMatch(/^FAILED/);
    expect(await text(page, "#counterexample")).toMatch(/\S/);
    await page.click("#replay");
    await idle(page);
    expect(await text(page, "#trace-title")).toMatch(/^allreduce\/ring, n = \d+/);
    expect(await text(page, "#explain-text")).toMatch(/\S/);
    await close(page);
  });

  it("the editor does not double a typed closing brace, and wraps long lines", async () => {
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    await page.evaluate(() => playground.setSource(""));
    await page.click(".cm-content");
    await page.keyboard.type("function f() {");
    await page.keyboard.press("Enter");
    await page.keyboard.type("return 1;");
    await page.keyboard.press("Enter");
    await page.keyboard.type("}");
    expect(await page.evaluate(() => playground.getSource())).toBe("function f() {\n  return 1;\n}");
    expect(await page.$eval(".cm-content", (e) => e.classList.contains("cm-lineWrapping"))).toBe(true);
    await close(page);
  });
});
