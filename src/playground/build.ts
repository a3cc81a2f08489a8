/**
 * `cclab playground -o site/`: the playground as a static site, one page and its assets, no
 * server code. esbuild bundles the page (CodeMirror, the renderer of the step-through page) and
 * the Worker (sucrase, the simulator, the symbolic checker, explain, the property tests and
 * every algorithm) from cclab's own sources; the example programs and algorithm sources the
 * Examples menu opens are carried as text. Every asset is a classic script, and the Worker is
 * started (by the runner, runner.html in an iframe) from a Blob of its source, so the page works
 * from file:// as from any static host.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { Plugin } from "esbuild";
import { browserBundle } from "../viz/page.js";
import { playgroundHtml, runnerHtml } from "./html.js";

/** The repository (or package) root: src/playground/ is two folders below it. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const HERE = dirname(fileURLToPath(import.meta.url));
/** Sources are TypeScript: the site is built from a checkout (buildSite says so elsewhere). */
const ext = ".ts";
/** The browser code, bundled from its .ts sources. */
const client = (name: string) => join(HERE, "client", `${name}.ts`);

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

const repoPath = (abs: string) => relative(ROOT, abs).split("\\").join("/");
const isSource = (p: string) => /\.(ts|js)$/.test(p) && !/\.d\.ts$/.test(p);

/** One entry of the Examples menu: where it lives in the repository, its group, its text. */
export interface SourceFile {
  readonly path: string;
  readonly group: string;
  readonly text: string;
}

/**
 * What the Examples menu offers and imports may open: every program of examples/, the user
 * algorithms of examples/algorithms/, and every built-in algorithm's source with the routines and
 * topologies they import. Read from .ts sources (a checkout, or the package's copies).
 */
export function sourceFiles(): SourceFile[] {
  const out: SourceFile[] = [];
  const add = (abs: string, group: string) => out.push({ path: repoPath(abs), group, text: readFileSync(abs, "utf8") });
  const ex = join(ROOT, "examples");
  for (const f of readdirSync(ex).sort()) if (f.endsWith(".ts") && !f.startsWith("_")) add(join(ex, f), "programs");
  for (const f of readdirSync(join(ex, "algorithms")).sort())
    if (f.endsWith(".ts") && !f.startsWith("_")) add(join(ex, "algorithms", f), "your own algorithm");
  for (const f of walk(join(ROOT, "algorithms"))) {
    if (!f.endsWith(".ts") || f.endsWith("index.ts")) continue;
    const rel = repoPath(f);
    const group = /^algorithms\/(lib|topology)\//.test(rel) ? "routines" : "built-in algorithms";
    add(f, group);
  }
  return out;
}

/**
 * The module table the Worker's loader resolves imports against: every module of algorithms/
 * and examples/algorithms/, the schedule language, specs, simulator and core, keyed by repository path without extension;
 * 'src/index' is the playground's API (client/api.ts) and 'examples/_run' its print shim.
 */
function modulesSource(): string {
  const files = [
    ...walk(join(ROOT, "algorithms")),
    // A user algorithm may import another (sliced_ring_broken.ts imports sliced_ring.ts).
    ...walk(join(ROOT, "examples", "algorithms")).filter((f) => !/[\\/]_[^\\/]*$/.test(f)),
    ...["src/core", "src/specs", "src/schedule", "src/sim", "src/collectives"].flatMap((d) => walk(join(ROOT, d))),
    ...["src/comm", "src/trace", "src/checks", "src/layer", "examples/_tensor"].map((p) => join(ROOT, p + ext)),
  ].filter(isSource);
  const entries: [string, string][] = files.map((f) => [repoPath(f).replace(/\.(ts|js)$/, ""), f]);
  entries.push(["src/index", client("api")], ["examples/_run", client("run-shim")]);
  const lines = entries.map(([, f], i) => `import * as m${i} from ${JSON.stringify(f)};`);
  lines.push(`export const MODULES = {${entries.map(([k], i) => `${JSON.stringify(k)}: m${i}`).join(",")}};`);
  return lines.join("\n");
}

/** What the page's code may not bring into a browser, and what the examples import differently there. */
function browserPlugin(): Plugin {
  const builtins = new Set(builtinModules);
  return {
    name: "cclab-playground",
    setup(b) {
      b.onResolve({ filter: /^cclab-playground:modules$/ }, () => ({ path: "modules", namespace: "cclab-modules" }));
      b.onLoad({ filter: /.*/, namespace: "cclab-modules" }, () => ({
        contents: modulesSource(),
        loader: "js",
        resolveDir: ROOT,
      }));
      // examples/_tensor.ts imports ../src/index.js: the playground's API instead (no Node modules).
      b.onResolve({ filter: /(^|\/)src\/index\.js$/ }, () => ({ path: client("api") }));
      b.onResolve({ filter: /.*/ }, (a) => {
        const bare = a.path.replace(/^node:/, "");
        if (a.path.startsWith("node:") || builtins.has(bare) || a.path === "esbuild" || a.path.startsWith("tsx")) {
          return { path: bare, namespace: "cclab-node" };
        }
        return undefined;
      });
      // Node's modules, where a bundled module imports one for a path the playground never takes
      // (trace files, the addon): each function throws, naming itself, if it is ever called.
      b.onLoad({ filter: /.*/, namespace: "cclab-node" }, (a) => ({
        contents:
          a.path === "v8"
            ? // broadcastObject / allGatherObject: objects go as JSON here (v8's format needs Node).
              "export const serialize = (o) => new TextEncoder().encode(JSON.stringify(o));\n" +
              "export const deserialize = (b) => JSON.parse(new TextDecoder().decode(b));\n" +
              // The network model's heap bound (topology.ts parses the grid families, which import it).
              'export const getHeapStatistics = () => { throw new Error("v8.getHeapStatistics: not available in the playground"); };'
            : `module.exports = new Proxy({}, { get: (_, k) => k === "__esModule" ? false : () => { throw new Error(${JSON.stringify(a.path)} + "." + String(k) + ": not available in the playground (a browser; sim only)"); } });`,
        loader: "js",
      }));
    },
  };
}

/** The files a build writes, relative to the site's folder: all that --serve serves. */
export const SITE_FILES = [
  "index.html",
  "runner.html",
  "assets/playground.js",
  "assets/runner.js",
  "assets/worker.js",
  "assets/graphviz.js",
  "assets/sources.js",
] as const;

export interface SiteFile {
  readonly path: string;
  readonly bytes: number;
  readonly gzipBytes: number;
}

export interface SiteReport {
  readonly dir: string;
  readonly files: readonly SiteFile[];
  readonly bytes: number;
  readonly gzipBytes: number;
}

function bundle(entry: string, define: Record<string, string> = {}): Promise<string> {
  return browserBundle(entry, { plugins: [browserPlugin()], define });
}

/** The site's assets (all but the two documents: index.html says the page's rank count). */
type Assets = [(typeof SITE_FILES)[number], string][];

/** Where `npm run build` puts the assets built from a checkout, for an installed package (which has no TypeScript sources). */
export const PREBUILT = join(ROOT, "playground-site");

/** Whether cclab's TypeScript sources are here (a checkout), so the site can be built from them. */
function hasSources(): boolean {
  return ["examples/deadlock.ts", "algorithms/allreduce/ring.ts", "src/sim/index.ts"].every((p) =>
    existsSync(join(ROOT, p)),
  );
}

/** The assets bundled from the sources, the examples' and algorithms' sources as the editor shows them. */
async function builtAssets(): Promise<Assets> {
  const [app, runner, worker, graphviz] = await Promise.all([
    bundle(client("app")),
    bundle(client("runner")),
    bundle(client("worker")),
    bundle(client("graphviz")),
  ]);
  const sources = sourceFiles();
  return [
    ["assets/playground.js", app],
    ["assets/runner.js", runner],
    // The Worker's code as a string: the runner starts it from a Blob, which file:// allows.
    ["assets/worker.js", `self.CCLAB_WORKER_SOURCE=${JSON.stringify(worker)};\n`],
    // Loaded only when a run deadlocks (viewer.ts).
    ["assets/graphviz.js", graphviz],
    ["assets/sources.js", `self.CCLAB_SOURCES=${JSON.stringify(sources).replace(/</g, "\\u003c")};\n`],
  ];
}

/** An installed package's assets, built by `npm run build` in the checkout it was packed from. */
function prebuiltAssets(): Assets {
  const names = SITE_FILES.filter((f) => !f.endsWith(".html"));
  const missing = names.filter((f) => !existsSync(join(PREBUILT, f)));
  if (missing.length > 0) {
    throw new Error(
      `cclab playground: this installation has neither cclab's TypeScript sources nor the prebuilt site (${join(PREBUILT, missing[0] as string)} is missing): reinstall the package, or run it from a checkout (git clone, npm install, then node src/cli/bin.js playground -o site)`,
    );
  }
  return names.map((f) => [f, readFileSync(join(PREBUILT, f), "utf8")]);
}

/**
 * Builds the site into `dir` (created if need be, its parent must exist) and reports each file's size, plain and
 * gzipped; `nranks` is the number of ranks the page starts with.
 */
export async function buildSite(dir: string, nranks = 4): Promise<SiteReport> {
  if (!Number.isInteger(nranks) || nranks < 1 || nranks > 64) {
    throw new Error(`buildSite: nranks must be an integer in 1..64 (the page's range), got ${nranks}`);
  }
  const files: [(typeof SITE_FILES)[number], string][] = [
    ["index.html", playgroundHtml(nranks)],
    ["runner.html", runnerHtml()],
    ...(hasSources() ? await builtAssets() : prebuiltAssets()),
  ];
  // One level each, never a recursive mkdir (it spins where mkdir answers ENOENT: /proc, FUSE);
  // cclab playground checks and makes the folder first (src/cli/output-files.ts).
  // The folder itself may be a link (--force); assets/ below it may not, nor any file written.
  for (const [d, stat] of [
    [dir, statSync],
    [join(dir, "assets"), lstatSync],
  ] as const) {
    try {
      mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      if (!stat(d).isDirectory())
        throw new Error(`cannot write the site into ${d}: it is not a folder (a link or a file?)`);
    }
  }
  const report: SiteFile[] = [];
  for (const [rel, text] of files) {
    const buf = Buffer.from(text, "utf8");
    // O_NOFOLLOW: a link in the file's place (put there after the checks) is refused, not written through.
    const fd = openSync(
      join(dir, rel),
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o666,
    );
    try {
      if (!fstatSync(fd).isFile()) throw new Error(`cannot write the site's ${join(dir, rel)}: it is not a plain file`);
      writeFileSync(fd, buf);
    } finally {
      closeSync(fd);
    }
    report.push({ path: rel, bytes: buf.length, gzipBytes: gzipSync(buf, { level: 9 }).length });
  }
  return {
    dir,
    files: report,
    bytes: report.reduce((s, f) => s + f.bytes, 0),
    gzipBytes: report.reduce((s, f) => s + f.gzipBytes, 0),
  };
}
