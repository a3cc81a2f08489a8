/**
 * cclab as a user installs it: `npm pack` (prepack compiles dist/), the tarball installed into a
 * temporary project, then plain Node ESM, CommonJS, the `cclab` command and a strict tsc consumer
 * (exactOptionalPropertyTypes, noPropertyAccessFromIndexSignature, skipLibCheck off) all work, and
 * the tarball carries no tests or tool configs. The install asks npm (registry or its cache); where
 * neither answers, the tarball is unpacked as npm would and its dependencies linked from this
 * clone's node_modules. The addon build is skipped here (CCLAB_SKIP_NATIVE; it takes minutes):
 * the consumer runs on the TypeScript fallbacks and the sim.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "cclab-package-"));
const app = join(dir, "app");
const env = { ...process.env, CCLAB_SKIP_NATIVE: "1", npm_config_audit: "false", npm_config_fund: "false" };
let tarball = "";
let files: string[] = [];
let installedBy = "";

function run(cmd: string, args: string[], cwd = app, timeout = 240_000): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** What npm install does with a tarball, without a registry: unpack it, link what it depends on. */
function unpackAndLink(): void {
  const modules = join(app, "node_modules");
  mkdirSync(join(modules, "cclab"), { recursive: true });
  execFileSync("tar", ["xzf", tarball, "-C", join(modules, "cclab"), "--strip-components=1"]);
  for (const name of readdirSync(join(ROOT, "node_modules"))) {
    if (name.startsWith(".") || name === "cclab") continue;
    symlinkSync(join(ROOT, "node_modules", name), join(modules, name));
  }
  mkdirSync(join(modules, ".bin"), { recursive: true });
  symlinkSync(join(modules, "cclab", "src", "cli", "bin.js"), join(modules, ".bin", "cclab"));
}

beforeAll(() => {
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", dir], ROOT, 300_000)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const p = packed[0]!;
  tarball = join(dir, p.filename);
  files = p.files.map((f) => f.path);
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
  const npm = spawnSync("npm", ["install", "--prefer-offline", "--no-save", tarball], {
    cwd: app,
    env,
    encoding: "utf8",
    timeout: 240_000,
  });
  if (npm.status === 0) installedBy = "npm install";
  else if (/ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network/i.test(`${npm.stdout}${npm.stderr}`)) {
    rmSync(join(app, "node_modules"), { recursive: true, force: true });
    unpackAndLink();
    installedBy = "unpacked, dependencies linked (no registry)";
  } else throw new Error(`npm install ${tarball} failed:\n${npm.stdout}\n${npm.stderr}`);
  // The strict consumer brings its own Node types, as a TypeScript project does.
  const types = join(app, "node_modules", "@types");
  if (!existsSync(join(types, "node"))) {
    mkdirSync(types, { recursive: true });
    symlinkSync(join(ROOT, "node_modules", "@types", "node"), join(types, "node"));
  }
}, 600_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the npm package", () => {
  it("carries compiled JavaScript with types and the native sources, and no tests or tool configs", () => {
    expect(files).toContain("dist/src/index.js");
    expect(files).toContain("dist/src/index.d.ts");
    expect(files).toContain("dist/src/cli/cclab.js");
    // The command: bin.js, which runs the compiled cclab.js where (as here) no sources ship.
    expect(files).toContain("src/cli/bin.js");
    expect(files).toContain("native/CMakeLists.txt");
    expect(files).toContain("native/floors.c");
    expect(files).toContain("native/build.mjs");
    const unwanted = files.filter((f) =>
      /^(test|\.ci|\.github|examples|docs)\/|^(dist\/)?test\/|(^|\/)(tsconfig[^/]*\.json|biome\.json|vitest\.config\.ts|stryker\.config\.json|\.dependency-cruiser\.cjs)$|\.ts$(?<!\.d\.ts)/.test(
        f,
      ),
    );
    // The browser page's sources are bundled by esbuild when a page is written, and the example
    // programs and starter algorithms are the README tour's (run with tsx): the only .ts shipped.
    expect(unwanted.filter((f) => !f.startsWith("dist/src/viz/client/") && !f.startsWith("dist/examples/"))).toEqual(
      [],
    );
    expect(files).toContain("dist/examples/algorithms/sliced_ring.ts");
    expect(files).toContain("dist/examples/all_reduce.ts");
    console.log(`installed by ${installedBy}; ${files.length} files`);
  });

  it("plain Node ESM: import 'cclab' and 'cclab/dsl', an all-reduce of Float32Arrays checked element-wise", () => {
    writeFileSync(
      join(app, "esm.mjs"),
      `import { allReduce, spawn, finalize, toDevice, traceSvg, withTracing } from "cclab";
import { defineAlgorithm } from "cclab/dsl";
const out = [];
await spawn(3, async (comm) => {
  const a = Float32Array.from({ length: 5 }, (_, i) => comm.rank * 10 + i);
  await allReduce(comm, a, { op: "SUM" });
  out[comm.rank] = Array.from(a);
});
console.log(JSON.stringify({ out, fns: [finalize, toDevice, traceSvg, withTracing, defineAlgorithm].map((f) => typeof f) }));
`,
    );
    const r = JSON.parse(run(process.execPath, ["esm.mjs"])) as { out: number[][]; fns: string[] };
    const want = [0, 1, 2, 3, 4].map((i) => 30 + 3 * i);
    expect(r.out).toEqual([want, want, want]);
    expect(r.fns).toEqual(Array(5).fill("function"));
  });

  it("CommonJS: require('cclab') works (Node's require of an ES module), or fails naming ESM", () => {
    writeFileSync(
      join(app, "cjs.cjs"),
      `const { allReduce, spawn } = require("cclab");
spawn(2, async (comm) => { const a = new Int32Array([comm.rank + 1, 7]); await allReduce(comm, a); if (comm.rank === 1) console.log(Array.from(a).join(",")); });
`,
    );
    const r = spawnSync(process.execPath, ["cjs.cjs"], { cwd: app, env, encoding: "utf8" });
    if (r.status === 0) expect(r.stdout.trim()).toBe("3,14");
    else expect(r.stderr).toMatch(/ERR_REQUIRE_ESM|ES Module/);
  });

  it("the README tour's file steps: export an MSCCL XML and import it; verify the shipped starter algorithm", () => {
    const bin = join(app, "node_modules", ".bin", "cclab");
    run(bin, ["export", "msccl", "--collective", "allreduce", "--algorithm", "ring", "-n", "8", "-o", "ring8.xml"]);
    expect(run(bin, ["import", "msccl", "ring8.xml"])).toMatch(/ring/);
    const starter = join("node_modules", "cclab", "dist", "examples", "algorithms", "sliced_ring.ts");
    const v = run(bin, ["verify", "--algorithm-file", starter, "--max-n", "4", "--runs", "5", "--seed", "1"]);
    expect(v).toMatch(/sliced_ring/);
    const examples = join("node_modules", "cclab", "dist", "examples");
    expect(run(bin, ["run", "-n", "4", join(examples, "all_reduce.ts")])).toMatch(/rank/i);
    // The playground from the installed package: the assets npm run build prebuilt, a fresh page.
    expect(run(bin, ["playground", "-o", "site", "-n", "6"])).toMatch(/cclab playground: wrote \S*site \(/);
    for (const f of [
      "index.html",
      "assets/playground.js",
      "assets/worker.js",
      "assets/graphviz.js",
      "assets/sources.js",
    ])
      expect(existsSync(join(app, "site", f)), f).toBe(true);
    expect(readFileSync(join(app, "site", "index.html"), "utf8")).toMatch(
      /id="n" type="number" min="1" max="64" value="6"/,
    );
  });

  it("the cclab command: --version, list --json, a sim run of the user's own .mjs program", () => {
    const bin = join(app, "node_modules", ".bin", "cclab");
    expect(run(bin, ["--version"]).trim()).toMatch(/^\d+\.\d+\.\d+/);
    const list = JSON.parse(run(bin, ["list", "--json"])) as { collectives: unknown[] };
    expect(list.collectives.length).toBeGreaterThan(5);
    writeFileSync(
      join(app, "prog.mjs"),
      `import { allReduce } from "cclab";
export async function main(comm) { const a = new Float64Array([comm.rank]); await allReduce(comm, a); console.log("sum", a[0]); }
`,
    );
    const out = run(bin, ["run", "-n", "3", "prog.mjs"]);
    expect(out.match(/sum 3/g)?.length).toBe(3);
  });

  it("finds its own files from dist/: bench --floors's C source ships and resolves inside the package", () => {
    // dist/src/bench/ is three folders below the package root, src/bench/ two: a path made by
    // walking up a fixed count pointed into dist/ and made --floors fail in every installed copy.
    const floors = join(app, "node_modules", "cclab", "dist", "src", "bench", "floors.js");
    const out = run(process.execPath, [
      "--input-type=module",
      "-e",
      `const m = await import(${JSON.stringify(`file://${floors}`)}); console.log(m.FLOORS_SOURCE);`,
    ]);
    expect(out.trim()).toBe(join(app, "node_modules", "cclab", "native", "floors.c"));
    expect(existsSync(out.trim())).toBe(true);
  });

  it("a strict tsc consumer compiles against the .d.ts files, skipLibCheck off", () => {
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          exactOptionalPropertyTypes: true,
          noPropertyAccessFromIndexSignature: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          noEmit: true,
          types: ["node"],
        },
        files: ["app.ts"],
      }),
    );
    writeFileSync(
      join(app, "app.ts"),
      `import { allReduce, type Comm, finalize, init, spawn, tensor, view } from "cclab";
import { defineAlgorithm } from "cclab/dsl";
export async function main(comm: Comm): Promise<void> {
  await allReduce(comm, new Float32Array([comm.rank]), { op: "SUM" });
  await comm.send(new Float32Array(4), 1);
  await comm.recv(view(tensor("float32", [1, 2])), 0);
}
void spawn(2, main);
export const api = [init, finalize, defineAlgorithm];
`,
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", "."], { cwd: app, encoding: "utf8", timeout: 240_000 });
    expect(`${r.stdout}${r.stderr}`).toBe("");
    expect(r.status).toBe(0);
  });
});
