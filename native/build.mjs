// Builds the native addon (build/Release/cclab.node) with cmake-js from native/CMakeLists.txt.
// Run by `npm install` (package.json "install") and by `npm run build:native` (--force).
// Never fails an install: without cmake or a C++ compiler it says what is missing and exits 0,
// and cclab uses its pure-TypeScript fallbacks. MPI is compiled in when CMake finds it; set
// CCLAB_NO_MPI=1 (or pass --no-mpi) to build without it. CCLAB_SKIP_NATIVE=1 skips the build.
// No download is ever attempted: native/package.json declares napi_versions, so cmake-js
// compiles against the node-api-headers package in node_modules, not headers from nodejs.org.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const args = process.argv.slice(2);
const force = args.includes("--force");
const noMpi = args.includes("--no-mpi") || /^(1|true|yes|on)$/i.test(process.env.CCLAB_NO_MPI ?? "");
const addon = join(root, "build", "Release", "cclab.node");
const options = `CCLAB_WITH_MPI=${noMpi ? "OFF" : "ON"}\n`;
const log = (msg) => console.log(`cclab native: ${msg}`);

if (/^(1|true|yes|on)$/i.test(process.env.CCLAB_SKIP_NATIVE ?? "")) {
  log("CCLAB_SKIP_NATIVE is set; not building (pure TypeScript fallbacks in use)");
  process.exit(0);
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

// Up to date: an addon newer than every native source, built with the same MPI choice.
function upToDate() {
  if (!existsSync(addon)) return false;
  const built = statSync(addon).mtimeMs;
  const stamp = join(root, "build", "cclab-options.txt");
  if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== options) return false;
  return readdirSync(here).every((f) => statSync(join(here, f)).mtimeMs <= built);
}

if (!force && upToDate()) {
  log(`up to date (${addon}); run npm run build:native to rebuild`);
  process.exit(0);
}

const missing = [];
if (!onPath("cmake")) missing.push("cmake");
if (!["c++", "g++", "clang++"].some(onPath) && !process.env.CXX) missing.push("a C++ compiler (g++ or clang++)");
if (!onPath("make") && !onPath("ninja")) missing.push("make (or ninja)");
if (missing.length > 0) {
  log(`not built: missing ${missing.join(", ")}; pure TypeScript fallbacks in use`);
  log(
    "to build it: apt-get install cmake g++ make (and openmpi-bin libopenmpi-dev for MPI), then npm run build:native",
  );
  process.exit(0);
}

let cmakeJs;
try {
  cmakeJs = join(dirname(createRequire(import.meta.url).resolve("cmake-js/package.json")), "bin", "cmake-js");
} catch {
  log("not built: the cmake-js package is not installed (npm ci installs it); pure TypeScript fallbacks in use");
  process.exit(0);
}

const cmakeArgs = [
  cmakeJs,
  "rebuild",
  "--directory",
  here,
  "--out",
  join(root, "build"),
  `--CDCCLAB_WITH_MPI=${noMpi ? "OFF" : "ON"}`,
];
log(`building with cmake-js (MPI ${noMpi ? "disabled by CCLAB_NO_MPI" : "if CMake finds it"})`);
const run = spawnSync(process.execPath, cmakeArgs, {
  cwd: root,
  stdio: "inherit",
  // Local headers only: never let a stray npm nodedir/disturl point cmake-js at a download.
  env: { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir ?? "" },
});
if (run.status !== 0 || !existsSync(addon)) {
  log(`build failed (exit ${run.status ?? run.signal}); pure TypeScript fallbacks in use`);
  // An install must not fail over an optional addon; an explicit build:native reports failure.
  process.exit(force ? 1 : 0);
}
writeFileSync(join(root, "build", "cclab-options.txt"), options);
log(`built ${addon}`);
