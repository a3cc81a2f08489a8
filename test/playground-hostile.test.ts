import type { Page } from "puppeteer-core";
import { describe, expect, it } from "vitest";
import { checkFromWorker, checkShared } from "../src/playground/client/check.js";
import { runnerAddress, windowRunnerAddress } from "../src/playground/client/host.js";
import { clipLine, Kept } from "../src/playground/client/output.js";
import { encodeShared, type Shared } from "../src/playground/client/share.js";
import { serveSite } from "../src/playground/serve.js";
import { CHROME_ARGS, findChromium } from "./support/chromium.js";
import { underLoad } from "./support/load.js";
import { builtPlayground } from "./support/playground.js";

const chromium = findChromium();
if (!chromium)
  console.log("playground-hostile.test.ts skipped: no chromium on PATH (Debian: apt-get install -y chromium)");

const built = builtPlayground("cclab-playground-hostile-", chromium, 120_000);
const dir = built.dir;
const url = built.url;

interface Handle {
  ready: boolean;
  getSource(): string;
  setSource(text: string): void;
  busy(): boolean;
  invalidSeen(): number;
  runner(): { replaced: number; isolated: boolean; window: boolean };
  lastResult(): unknown;
}
declare const playground: Handle;

/** What a payload would do if it ever ran: count itself on the page. */
const PAYLOADS = [
  `<img src=x onerror="window.__pwned=(window.__pwned||0)+1">`,
  `"><svg onload="window.__pwned=(window.__pwned||0)+1">`,
  `<script>window.__pwned=(window.__pwned||0)+1</script>`,
];
const X = PAYLOADS.join(" ");

const open = built.open;

const close = built.close;

async function idle(page: Page, timeout = 60_000): Promise<void> {
  await page.waitForFunction(() => !playground.busy(), { timeout, polling: 50 });
}

const status = (page: Page) => page.$eval("#status", (e) => e.textContent ?? "");

/** No payload ran, and nothing the page did not build itself is in it. */
async function clean(page: Page, what: string): Promise<void> {
  // An onerror fires after the image fails to load: give it the time.
  await new Promise((r) => setTimeout(r, 300));
  const found = await page.evaluate(() => ({
    pwned: (window as { __pwned?: number }).__pwned,
    img: document.querySelectorAll("img").length,
    inlineScripts: [...document.querySelectorAll("script")].filter((s) => !s.src).length,
    handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name)))
      .length,
    foreign: document.querySelectorAll("foreignObject, object, embed").length,
    // The one frame is the page's own runner.
    frames: [...document.querySelectorAll("iframe")].map((f) => `${f.id} ${new URL(f.src).pathname.split("/").pop()}`),
  }));
  expect(found, what).toEqual({
    pwned: undefined,
    img: 0,
    inlineScripts: 0,
    handlers: 0,
    foreign: 0,
    frames: ["runner runner.html"],
  });
}

/** A share link whose program is `source` (the main file `name`). */
async function link(source: string, name = "examples/mine.ts", extra: Partial<Shared> = {}): Promise<string> {
  const state: Shared = {
    files: { [name]: source },
    main: name,
    current: name,
    n: 2,
    semantics: "nccl",
    seed: 1,
    lo: 1,
    hi: 4,
    runs: 5,
    limit: 20,
    action: "run",
    step: 0,
    ...extra,
  };
  return `${url()}#${await encodeShared(state)}`;
}

/** A program that posts `message` to the page, as the Worker would, under the first job ids. */
function forger(message: unknown): string {
  return [
    "export async function main(comm) {",
    "  if (comm.rank !== 0) return;",
    `  const m = ${JSON.stringify(message)};`,
    "  for (let id = 0; id < 50; id++) self.postMessage(typeof m === 'object' && m !== null && !Array.isArray(m) ? { ...m, id } : m);",
    "}",
  ].join("\n");
}

const traced = (over: Record<string, unknown> = {}) => ({
  title: X,
  size: 2,
  events: [
    { rank: 0, kind: "send", peer: 1, count: 1, dtype: "float32", bytes: 4, label: X, start: 0, end: 1 },
    { rank: 1, kind: "recv", peer: 0, count: 1, dtype: "float32", bytes: 4, label: X, start: 0, end: 1 },
  ],
  deadlocks: [
    {
      at: 1,
      blocked: [
        { rank: 0, kind: "send", peer: 1, count: 1, dtype: "float32", label: X },
        { rank: 1, kind: "send", peer: 0, count: 1, dtype: "float32", label: X },
      ],
      cycle: [0, 1],
      message: X,
    },
  ],
  ...over,
});

const steps = {
  ranks: 2,
  call: {
    collective: "allreduce",
    size: 2,
    count: 2,
    root: 0,
    dtype: "float32",
    op: "sum",
    inPlace: false,
    segment: 1,
  },
  steps: [{ label: X, ops: [X, X], indices: [[0], [0]], transfers: [[], []], rows: [{ name: X, cells: [X, X] }] }],
  errors: [X],
};

/** Forged messages of every kind the page accepts, each string a payload: shown as text. */
const WELL_FORMED: [string, unknown][] = [
  [
    "print",
    {
      kind: "print",
      streams: [
        { rank: 0, skipped: 3, lines: [X, X] },
        { rank: -1, skipped: 0, lines: [X] },
      ],
    },
  ],
  ["progress", { kind: "progress", done: 1, total: 2, what: X }],
  ["failed", { kind: "failed", message: X }],
  [
    "done: run with a deadlock",
    { kind: "done", result: { kind: "run", traced: traced(), printed: [0, 0], error: X, notes: [X] } },
  ],
  [
    "done: explain with steps",
    {
      kind: "done",
      result: { kind: "explain", traced: traced({ steps, explainText: X, checkErrors: [X] }), notes: [X] },
    },
  ],
  [
    "done: verify failed",
    {
      kind: "done",
      result: {
        kind: "verify",
        algorithm: X,
        staticCases: 1,
        propertyCases: 0,
        failure: { phase: "proof", message: X, replay: { n: 2, count: 3 }, command: X },
        notes: [X],
      },
    },
  ],
];

/** Forged messages of the wrong shape: refused, naming the field. */
const MALFORMED: [string, unknown, RegExp][] = [
  [
    "replay.n markup",
    {
      kind: "done",
      result: {
        kind: "verify",
        algorithm: "a",
        staticCases: 1,
        propertyCases: 0,
        failure: { phase: "proof", message: "m", replay: { n: X }, command: "c" },
        notes: [],
      },
    },
    /argument 'result\.failure\.replay\.n': expected an integer in 1\.\.64, got a string/,
  ],
  [
    "replay.count markup",
    {
      kind: "done",
      result: {
        kind: "verify",
        algorithm: "a",
        staticCases: 1,
        propertyCases: 0,
        failure: { phase: "property", message: "m", replay: { n: 2, count: X }, command: "c" },
        notes: [],
      },
    },
    /result\.failure\.replay\.count/,
  ],
  [
    "deadlock rank markup",
    {
      kind: "done",
      result: {
        kind: "run",
        traced: traced({
          deadlocks: [
            { at: 1, blocked: [{ rank: X, kind: "send", peer: 1, count: 1, dtype: "f" }], cycle: [], message: "" },
          ],
        }),
        printed: [],
        notes: [],
      },
    },
    /result\.traced\.deadlocks\[0\]\.blocked\[0\]\.rank/,
  ],
  [
    "event kind markup",
    {
      kind: "done",
      result: { kind: "run", traced: traced({ events: [{ ...traced().events[0], kind: X }] }), printed: [], notes: [] },
    },
    /result\.traced\.events\[0\]\.kind': expected one of send, recv/,
  ],
  [
    "a rank outside the run",
    {
      kind: "done",
      result: { kind: "run", traced: traced({ events: [{ ...traced().events[0], rank: 9 }] }), printed: [], notes: [] },
    },
    /events\[0\]\.rank': expected a rank below the run's size 2, got 9/,
  ],
  ["print rank markup", { kind: "print", streams: [{ rank: X, skipped: 0, lines: ["a"] }] }, /streams\[0\]\.rank/],
  ["print lines not text", { kind: "print", streams: [{ rank: 0, skipped: 0, lines: [{ x: 1 }] }] }, /lines\[0\]/],
  ["progress total markup", { kind: "progress", done: 1, total: X, what: "w" }, /argument 'total'/],
  ["failed without text", { kind: "failed", message: { toString: X } }, /argument 'message'/],
  ["an unknown kind", { kind: X }, /argument 'kind': expected one of print, progress, done, failed/],
  ["not an object", X, /expected an object, got a string/],
  ["an unknown result kind", { kind: "done", result: { kind: X } }, /result\.kind/],
];

// What needs no browser: these run wherever the suite does.
/**
 * A program that allocates without end: Stop answers at once while it runs; left to run, it
 * fills its runner's heap, the runner (`runner`: where it lived) ends, and the page lives, says
 * so, keeps the program and can run again.
 */
async function stopThenExhaust(page: Page, hog: string, runner: string): Promise<void> {
  await page.click("#run");
  await new Promise((r) => setTimeout(r, 1500));
  const t0 = Date.now();
  await page.click("#stop");
  await idle(page, underLoad(5000));
  expect(Date.now() - t0).toBeLessThan(underLoad(2000));
  expect(await status(page)).toMatch(/^stopped by you after/);
  await page.click("#run");
  await idle(page, 150_000);
  expect(await status(page)).toBe(
    `the program ran out of memory or crashed (its runner, ${runner}, stopped answering for 5 s); the page is fine and your program is kept: press Run to run it again`,
  );
  expect(await page.$eval("#status", (e) => e.className)).toBe("error");
  expect(await page.evaluate(() => playground.getSource())).toBe(hog);
  expect(await page.$eval("#run", (e) => (e as HTMLButtonElement).disabled)).toBe(false);
}

describe("the playground's bounds and checks, in Node", () => {
  it("a stream keeps its first and last lines and counts the rest, also across the Worker's skips", () => {
    const k = new Kept(3, 2);
    for (let i = 0; i < 10; i++) k.add(`l${i}`);
    expect(k.text()).toBe("l0\nl1\nl2\n… 5 lines not kept …\nl8\nl9");
    k.skip(100);
    k.add("l110");
    expect(k.text()).toBe("l0\nl1\nl2\n… 106 lines not kept …\nl9\nl110");
    expect(k.total).toBe(111);
    const few = new Kept(3, 2);
    few.add("a");
    few.add("b");
    expect(few.text()).toBe("a\nb");
    expect(clipLine("x".repeat(1500))).toBe(`${"x".repeat(1000)}… (500 more characters)`);
  });

  it("the runner is loaded from the other loopback name where the page is served (another site), else beside the page", () => {
    const at = (href: string) => {
      const u = new URL(href);
      return runnerAddress({ protocol: u.protocol, hostname: u.hostname, port: u.port, href });
    };
    expect(at("http://127.0.0.1:8377/")).toEqual({
      url: "http://localhost:8377/runner.html",
      origin: "http://localhost:8377",
      isolated: true,
      window: false,
    });
    expect(at("http://localhost:8377/index.html#s=x")).toEqual({
      url: "http://127.0.0.1:8377/runner.html",
      origin: "http://127.0.0.1:8377",
      isolated: true,
      window: false,
    });
    expect(at("file:///tmp/site/index.html")).toEqual({
      url: "file:///tmp/site/runner.html",
      origin: "*",
      isolated: false,
      window: false,
    });
    expect(at("https://course.example/play/index.html")).toEqual({
      url: "https://course.example/play/runner.html",
      origin: "https://course.example",
      isolated: false,
      window: false,
    });
    // Where a frame cannot have a process of its own, the window beside the page.
    expect(windowRunnerAddress({ href: "file:///tmp/site/index.html#s=x" })).toEqual({
      url: "file:///tmp/site/runner.html",
      origin: "*",
      isolated: true,
      window: true,
    });
  });

  it("the protocol check refuses a wrong shape by its field, and passes a good message through", () => {
    const good = { kind: "print", id: 3, streams: [{ rank: 0, skipped: 0, lines: ["a"] }] };
    expect(checkFromWorker(good)).toBe(good);
    for (const [, message, why] of MALFORMED) {
      const m = typeof message === "object" && message !== null ? { id: 1, ...message } : message;
      expect(() => checkFromWorker(m)).toThrow(why);
    }
    expect(() => checkFromWorker(null)).toThrow(/the Worker's message: expected an object, got null/);
    expect(() =>
      checkFromWorker({ kind: "print", id: 1, streams: [{ rank: 0, skipped: 0, lines: ["x".repeat(5000)] }] }),
    ).toThrow(/streams\[0\]\.lines\[0\]': expected text of at most 1100 characters, got a string of 5000 characters/);
    expect(() => checkShared({ files: { "../x.ts": "" }, main: "../x.ts" })).toThrow(/a file's name/);
    expect(checkShared({ n: 4, semantics: "nccl" })).toEqual({ n: 4, semantics: "nccl" });
  });
});

describe.skipIf(!chromium)("the playground against hostile input", () => {
  it("the page's policy forbids inline script: markup injected by hand cannot run", async () => {
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    const csp = await page.$eval('meta[http-equiv="Content-Security-Policy"]', (e) => e.getAttribute("content") ?? "");
    const scripts = /script-src ([^;]*)/.exec(csp)?.[1] ?? "";
    expect(scripts).toMatch(/^'self'/);
    expect(scripts).not.toContain("unsafe-inline");
    await page.evaluate((x) => {
      const d = document.createElement("div");
      d.id = "by-hand";
      d.innerHTML = x;
      document.body.append(d);
    }, X);
    await new Promise((r) => setTimeout(r, 300));
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    await close(page);
  });

  it("a shared link shows its program and waits for Run", async () => {
    const page = await open(await link(forger(WELL_FORMED[0]?.[1])));
    expect(await page.evaluate(() => playground.busy())).toBe(false);
    expect(await page.evaluate(() => playground.getSource())).toContain("self.postMessage");
    expect(await status(page)).toMatch(
      /^opened a shared program \(1 file, examples\/mine\.ts runs\): nothing has run yet/,
    );
    expect(await page.$eval("#output-out", (e) => e.classList.contains("hidden"))).toBe(true);
    expect(await page.$eval("#trace-out", (e) => e.classList.contains("hidden"))).toBe(true);
    await close(page);
  });

  it("forged Worker messages of every kind: what fits the protocol is shown as text, the rest refused by name", async () => {
    const page = await open(await link(forger({ kind: "progress", done: 0, total: 1, what: "x" })));
    await clean(page, "opened");
    for (const [what, message] of WELL_FORMED) {
      await page.evaluate((s) => playground.setSource(s), forger(message));
      await page.click("#run");
      await idle(page);
      await clean(page, what);
      expect(await page.evaluate(() => playground.invalidSeen()), what).toBe(0);
      const shown = await page.evaluate(() => document.body.textContent ?? "");
      if (what !== "progress") expect(shown, what).toContain(PAYLOADS[0]);
    }
    // The forged deadlock's blocked ranks and picture, drawn from the record as text.
    let seen = 0;
    for (const [what, message, why] of MALFORMED) {
      await page.evaluate((s) => playground.setSource(s), forger(message));
      await page.click("#run");
      await idle(page);
      await clean(page, what);
      const said = await status(page);
      expect(said, what).toMatch(
        /^the job was stopped: its Worker sent a message the page does not accept \(the Worker's message: /,
      );
      expect(said, what).toMatch(why);
      expect(await page.evaluate(() => playground.invalidSeen()), what).toBe(++seen);
    }
    // The page still runs a good program afterwards.
    await page.evaluate(() => playground.setSource("export async function main(comm) {}\n"));
    await page.click("#run");
    await idle(page);
    expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
    await close(page);
  });

  it("markup in printed output, console.log, thrown errors and algorithm names stays text", async () => {
    const program = [
      'import { printer } from "./_run.js";',
      `const X = ${JSON.stringify(X)};`,
      "export async function main(comm) {",
      "  printer(comm)(X);",
      "  console.log(X);",
      "  if (comm.rank === 1) throw new Error(X);",
      "}",
    ].join("\n");
    const page = await open(await link(program));
    await page.click("#run");
    await idle(page);
    await clean(page, "printed");
    // print() and console.log, both in rank 0's panel.
    expect(await page.$eval("#rank-0", (e) => e.textContent)).toBe(`${X}\n${X}`);
    expect(await status(page)).toContain(`Error: ${X}`);

    const alg = [
      'import { defineAlgorithm } from "../src/index.js";',
      'import { ring } from "../algorithms/allreduce/ring.js";',
      `export const mine = defineAlgorithm({ ...ring, name: ${JSON.stringify(X)} });`,
    ].join("\n");
    await page.evaluate((s) => playground.setSource(s), alg);
    for (const button of ["#verify", "#explain"]) {
      await page.click(button);
      await idle(page);
      await clean(page, `algorithm name, ${button}`);
    }
    await close(page);
  });

  it("a link whose file names or settings carry markup is refused as damaged, and nothing of it shown", async () => {
    const page = await open(await link("export async function main() {}", `examples/${PAYLOADS[0]}.ts`));
    await clean(page, "file name");
    expect(await status(page)).toMatch(
      /^this link is damaged: the share link: argument 'files \(a file's name\)': expected a relative path such as examples\/mine\.ts, got a string of \d+ characters; ask whoever sent it/,
    );
    expect(await page.evaluate(() => playground.getSource())).not.toContain("onerror");
    await close(page);
  });

  it("a damaged link says so and what to do, not 'Failed to fetch' or 'n.matchAll is not a function'", async () => {
    const good = await link("export async function main() {}\n");
    const cases: [string, RegExp][] = [
      [
        good.slice(0, good.length - 12),
        /^this link is damaged: its (program does not unpack|state is not JSON \([^)]*\)); ask whoever sent it for the whole link again/,
      ],
      [`${url()}#s=AAAA`, /^this link is damaged: its program does not unpack;/],
      [
        `${url()}#s=ab%3Ccd`,
        /^this link is damaged: its program does not unpack \(it holds characters base64url has not\)/,
      ],
      [
        `${url()}#${await encodeShared({ files: { "a.ts": 5 } } as unknown as Shared)}`,
        /^this link is damaged: the share link: argument 'files\['a\.ts'\]': expected text of at most \d+ characters, got 5/,
      ],
      [
        `${url()}#${await encodeShared({ files: { "a.ts": "" }, main: "b.ts" } as unknown as Shared)}`,
        /^this link is damaged: the share link: argument 'main': expected the name of one of the link's files \(a\.ts\)/,
      ],
      [
        `${url()}#example=examples/none.ts`,
        /^this link could not be opened: the site carries no file examples\/none\.ts/,
      ],
      [
        `${url()}#example=examples/send_recv.ts&n=abc`,
        /^this link is damaged: the share link: argument 'n': expected an integer in 1\.\.64, got NaN/,
      ],
    ];
    for (const [address, want] of cases) {
      const page = await open(address);
      const said = await status(page);
      expect(said, address).toMatch(want);
      expect(said, address).not.toMatch(/Failed to fetch|is not a function/);
      expect(said, address).toMatch(/Meanwhile the first example is open/);
      expect(await page.$eval("#status", (e) => e.className)).toBe("error");
      await close(page);
    }
  });
});

describe.skipIf(!chromium)("the playground's program cannot take the page down", () => {
  it("a program that allocates without end is stopped with a clear message, and the page still answers", async () => {
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    await page.evaluate(() =>
      playground.setSource(
        "export async function main(comm) {\n  const keep = [];\n  while (true) keep.push(new Float64Array(1 << 20));\n}\n",
      ),
    );
    const t0 = Date.now();
    await page.click("#run");
    await idle(page, 30_000);
    expect(Date.now() - t0).toBeLessThan(underLoad(20_000));
    expect(await status(page)).toMatch(
      /^the run failed: RankError: rank \d+ failed: InvalidArgumentError: new Float64Array: argument 'length': asks for 8 MiB more while the program's buffers already hold \d+ MiB; all its buffers together may hold at most 1024 MiB in the playground/,
    );
    // One buffer too large, by the simulator's own allocation (a tensor of the API).
    await page.evaluate(() =>
      playground.setSource(
        'import { zeros } from "../src/index.js";\nexport async function main(comm) {\n  zeros("float32", 2 ** 31);\n}\n',
      ),
    );
    await page.click("#run");
    await idle(page);
    expect(await status(page)).toMatch(
      /new Float32Array: argument 'length': asks for 8192 MiB; a buffer in the playground may hold at most 256 MiB/,
    );
    // The page answers and runs the next program.
    await page.evaluate(() => playground.setSource("export async function main(comm) {}\n"));
    await page.click("#run");
    await idle(page);
    expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
    await close(page);
  }, 90_000);

  it("a program that allocates plain objects until V8's heap is full ends its runner's process, not the page: the page says so, keeps the program, answers Stop, and runs again", async () => {
    // A browser of its own with small JavaScript heaps, so the program reaches V8's limit in seconds.
    const puppeteer = (await import("puppeteer-core")).default;
    const small = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: [...CHROME_ARGS, "--js-flags=--max-old-space-size=192"],
    });
    const { server, url: base } = await serveSite(dir, 0);
    try {
      const page = await small.newPage();
      const errors: string[] = [];
      let crashed = false;
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("error", () => {
        crashed = true;
      });
      // The page at 127.0.0.1, its runner at localhost: another site, a process of its own.
      await page.goto(`${base}#example=examples/send_recv.ts`);
      await page.waitForFunction(() => (globalThis as { playground?: Handle }).playground?.ready, { timeout: 30_000 });
      expect(await page.evaluate(() => playground.runner())).toEqual({ replaced: 0, isolated: true, window: false });
      const hog =
        "export async function main(comm) {\n  const keep = [];\n  for (let i = 0; ; i++) keep.push({ i, s: 'x' + i, a: [i, i] });\n}\n";
      await page.evaluate((t) => playground.setSource(t), hog);
      await page.$eval("#limit", (e) => {
        (e as HTMLInputElement).value = "150";
      });

      await stopThenExhaust(page, hog, "a process of its own");
      expect((await page.evaluate(() => playground.runner())).replaced).toBe(2);

      // Run again: the fresh runner runs the next program.
      await page.evaluate(() => playground.setSource("export async function main(comm) {}\n"));
      await page.click("#run");
      await idle(page);
      expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
      expect({ crashed, errors }).toEqual({ crashed: false, errors: [] });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await small.close();
    }
  }, 240_000);

  it("opened from a file, a program that allocates without end never takes the tab down: cclab's buffers are refused, plain arrays end its runner window's process; the page says so, answers Stop, and runs again", async () => {
    // A browser of its own with small JavaScript heaps, so the program reaches V8's limit in seconds.
    const puppeteer = (await import("puppeteer-core")).default;
    const small = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: [...CHROME_ARGS, "--js-flags=--max-old-space-size=192"],
    });
    try {
      const page = await small.newPage();
      const errors: string[] = [];
      let crashed = false;
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("error", () => {
        crashed = true;
      });
      await page.goto(`${url()}#example=examples/send_recv.ts`);
      await page.waitForFunction(() => (globalThis as { playground?: Handle }).playground?.ready, { timeout: 30_000 });

      // Through cclab's buffers: refused before the tab is at risk, by name and bound.
      await page.evaluate(() =>
        playground.setSource(
          'import { zeros } from "../src/index.js";\nexport async function main(comm) {\n  const keep = [];\n  while (true) keep.push(zeros("float64", 1 << 20));\n}\n',
        ),
      );
      await page.click("#run");
      await idle(page, 60_000);
      expect(await status(page)).toMatch(
        /^the run failed: RankError: rank \d+ failed: InvalidArgumentError: new Float64Array: argument 'length': asks for 8 MiB more while the program's buffers already hold \d+ MiB; all its buffers together may hold at most 1024 MiB in the playground/,
      );

      // Through plain arrays, which nothing in a browser can bound inside the tab's process.
      const hog =
        "export async function main(comm) {\n  const keep = [];\n  for (let i = 0; ; i++) keep.push({ i, s: 'x' + i, a: [i, i] }, new Array(1000).fill(i + 0.5));\n}\n";
      await page.evaluate((t) => playground.setSource(t), hog);
      await page.$eval("#limit", (e) => {
        (e as HTMLInputElement).value = "150";
      });
      await stopThenExhaust(page, hog, "a window of its own");
      // Stopped, the window was kept; gone, it was given up.
      expect(await page.evaluate(() => playground.runner())).toEqual({ replaced: 1, isolated: true, window: true });

      // Run again: a fresh runner window runs the next program.
      await page.evaluate(() => playground.setSource("export async function main(comm) {}\n"));
      await page.click("#run");
      await idle(page);
      expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
      expect({ crashed, errors }).toEqual({ crashed: false, errors: [] });
    } finally {
      await small.close();
    }
  }, 240_000);

  it("opened from a file, a runner window closed while its program runs, or one the browser never opens (a blocked pop-up), ends the job saying so; the next Run opens another", async () => {
    const browser = built.browser();
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    const spin = "export async function main(comm) {\n  while (true) {}\n}\n";
    await page.evaluate((t) => playground.setSource(t), spin);
    await page.click("#run");
    // The window opens beside the page; closed while the program runs, the job ends at once.
    let popup: Page | undefined;
    for (let i = 0; i < 100 && !popup; i++) {
      popup = (await browser.pages()).find((p) => /runner\.html#channel=[0-9a-f]{32}$/.test(p.url()));
      if (!popup) await new Promise((r) => setTimeout(r, 100));
    }
    if (!popup) throw new Error("no runner window opened");
    await popup.waitForFunction(() => document.readyState === "complete");
    await new Promise((r) => setTimeout(r, 500));
    await popup.close({ runBeforeUnload: true });
    await idle(page, 10_000);
    expect(await status(page)).toBe(
      "stopped: its runner window was closed (it runs your programs apart from the page); your program is kept: press Run to open another",
    );
    expect(await page.evaluate(() => playground.runner())).toEqual({ replaced: 1, isolated: true, window: true });

    // A pop-up the browser blocks: window.open opens nothing (as a blocker does with noopener).
    await page.evaluate(() => {
      const w = window as unknown as { open: typeof window.open; realOpen: typeof window.open };
      w.realOpen = w.open;
      w.open = () => null;
    });
    await page.click("#run");
    await idle(page, 60_000);
    expect(await status(page)).toMatch(
      /^the program did not start: its runner window \(file:\/\/\S+\/runner\.html\) did not answer within 30 s: the browser may have blocked it as a pop-up\. Allow pop-ups for this page, or serve the site \(cclab playground -o DIR --serve\), where no window is needed$/,
    );
    expect(await page.$eval("#run", (e) => (e as HTMLButtonElement).disabled)).toBe(false);

    // Pop-ups allowed again: the next Run opens a window that runs the program.
    await page.evaluate(() => {
      const w = window as unknown as { open: typeof window.open; realOpen: typeof window.open };
      w.open = w.realOpen;
    });
    await page.evaluate(() => playground.setSource("export async function main(comm) {}\n"));
    await page.click("#run");
    await idle(page, 60_000);
    expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
    expect(await page.evaluate(() => playground.runner())).toEqual({ replaced: 2, isolated: true, window: true });

    // The page closed, its runner window closes too.
    const windows = (await browser.pages()).filter((p) => /runner\.html#channel=/.test(p.url()));
    expect(windows.length).toBeGreaterThan(0);
    await close(page);
    const t0 = Date.now();
    while (windows.some((w) => !w.isClosed()) && Date.now() - t0 < underLoad(10_000))
      await new Promise((r) => setTimeout(r, 100));
    expect(windows.map((w) => w.isClosed())).toEqual(windows.map(() => true));
  }, 120_000);

  it("opened from a file, a job stopped while its runner window still loads leaves that window to the next Run: one window, not two", async () => {
    const browser = built.browser();
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    // A window that takes 2 s to open (a slow machine).
    await page.evaluate(() => {
      const real = window.open.bind(window);
      window.open = (...a: Parameters<typeof window.open>) => {
        setTimeout(() => real(...a), 2000);
        return null;
      };
    });
    await page.evaluate(() => playground.setSource("export async function main(comm) {\n  while (true) {}\n}\n"));
    const before = (await browser.pages()).length;
    await page.click("#run");
    await page.click("#stop");
    await idle(page, 5000);
    expect(await status(page)).toMatch(/^stopped by you after/);
    await new Promise((r) => setTimeout(r, 3000));
    await page.evaluate(() => playground.setSource("export async function main(comm) {}\n"));
    await page.click("#run");
    await idle(page, 60_000);
    expect(await status(page)).toMatch(/^ran to the end: no deadlock/);
    expect(await page.evaluate(() => playground.runner())).toEqual({ replaced: 0, isolated: true, window: true });
    expect((await browser.pages()).length).toBe(before + 1);
    await close(page);
  }, 120_000);

  it("200,000 printed lines leave the page responsive: first and last lines kept, the rest counted, Stop answers", async () => {
    const page = await open(`${url()}#example=examples/send_recv.ts`);
    await page.evaluate(() =>
      playground.setSource(
        'import { printer } from "./_run.js";\nexport async function main(comm) {\n  if (comm.rank !== 0) return;\n  const print = printer(comm);\n  for (let i = 0; i < 200000; i++) print("line " + i);\n}\n',
      ),
    );
    await page.click("#run");
    // The page answers while lines come.
    const t0 = Date.now();
    await page.evaluate(() => document.title);
    expect(Date.now() - t0).toBeLessThan(underLoad(1000));
    await idle(page, 60_000);
    const out = await page.$eval("#rank-0", (e) => e.textContent ?? "");
    const lines = out.split("\n");
    expect(lines.slice(0, 2)).toEqual(["line 0", "line 1"]);
    expect(lines[499]).toBe("line 499");
    expect(lines[500]).toBe("… 199000 lines not kept …");
    expect(lines[501]).toBe("line 199500");
    expect(lines.at(-1)).toBe("line 199999");
    expect(lines.length).toBe(1001);

    // Printing without end: Stop answers at once, and what was kept is shown.
    await page.evaluate(() =>
      playground.setSource(
        'import { printer } from "./_run.js";\nexport async function main(comm) {\n  const print = printer(comm);\n  for (let i = 0; ; i++) print("rank " + comm.rank + " line " + i);\n}\n',
      ),
    );
    await page.click("#run");
    await new Promise((r) => setTimeout(r, 1500));
    const t1 = Date.now();
    await page.click("#stop");
    await idle(page, 5000);
    expect(Date.now() - t1).toBeLessThan(underLoad(2000));
    expect(await status(page)).toMatch(/^stopped by you after/);
    await page.waitForFunction(() => /lines not kept/.test(document.getElementById("rank-0")?.textContent ?? ""), {
      timeout: 5000,
    });
    const kept = await page.$eval("#rank-0", (e) => e.textContent ?? "");
    expect(kept.startsWith("rank 0 line 0\nrank 0 line 1\n")).toBe(true);
    expect(kept.split("\n").length).toBeLessThanOrEqual(1001);
    await close(page);
  }, 120_000);
});
