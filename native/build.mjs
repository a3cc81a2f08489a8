// Builds the native addon (build/Release/cclab.node) with cmake-js from native/CMakeLists.txt.
// Run by `npm install` (package.json "install") and by `npm run build:native` (--force); in a
// project that depends on cclab, `npm rebuild cclab` runs it again.
// Never fails an install: without cmake or a C++ compiler it says what is missing and exits 0,
// and cclab uses its pure-TypeScript fallbacks. MPI is compiled in when CMake finds it; set
// CCLAB_NO_MPI=1 (or pass --no-mpi) to build without it. CCLAB_SKIP_NATIVE=1 skips the build.
// No download is ever attempted: native/package.json declares napi_versions, so cmake-js
// compiles against the node-api-headers package in node_modules, not headers from nodejs.org.
// An addon is rebuilt when a native source is newer, when the MPI choice changed, and when an
// engine CMake would now find (MPI installed after the first build, a CUDA toolkit) is missing
// from it (staleReason; test/native-build.test.ts).
import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const on = (v) => /^(1|true|yes|on)$/i.test(v ?? "");

function onPath(name, env = process.env) {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The optional engines CMake would find here now, looking where native/CMakeLists.txt looks: MPI
 * through its compiler wrapper or mpiexec on PATH (or MPI_HOME), as CMake's FindMPI does; the CUDA
 * toolkit through nvcc on PATH, $CUDACXX, or under $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /opt/cuda.
 */
export function findableEngines(env = process.env) {
  const mpi = ["mpicc", "mpicxx", "mpic++", "mpiexec"].some((n) => onPath(n, env)) || Boolean(env.MPI_HOME);
  const cudaDirs = [env.CUDA_HOME, env.CUDA_PATH, "/usr/local/cuda", "/opt/cuda"].filter(Boolean);
  const cuda =
    Boolean(env.CUDACXX) || Boolean(onPath("nvcc", env)) || cudaDirs.some((d) => existsSync(join(d, "bin", "nvcc")));
  return { mpi, cuda };
}

/**
 * Why the built addon must be rebuilt because of an engine, or undefined: an engine CMake would
 * now find (findable), that the build was not told to leave out (off), which the addon lacks
 * (built: its engines(), undefined where it no longer loads), and which the last build did not
 * already look for and miss (seen, from build/cclab-found.txt: so a machine whose MPI CMake cannot
 * use is not rebuilt at every install).
 */
export function engineStaleReason({ findable, built, off, seen }) {
  if (!built) return "the built addon does not load";
  const names = { mpi: "MPI", cuda: "the CUDA toolkit" };
  for (const e of ["mpi", "cuda"]) {
    if (findable[e] && !off[e] && !built[e] && !seen.includes(e)) {
      return `${names[e]} is installed now but the addon was built without it`;
    }
  }
  return undefined;
}

/** The addon's engines() (mpi, cuda: compiled in), or undefined where it does not load. */
function builtEngines(addon) {
  try {
    return createRequire(import.meta.url)(addon).engines();
  } catch {
    return undefined;
  }
}

/** The engines findable at the last build (build/cclab-found.txt, one per line). */
function seenAtBuild(stampDir) {
  const file = join(stampDir, "cclab-found.txt");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

// Run as a script (npm install, npm run build:native); imported, it only lends its checks (the test).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) await main();

async function main() {
  const args = process.argv.slice(2);
  const force = args.includes("--force");
  const noMpi = args.includes("--no-mpi") || on(process.env.CCLAB_NO_MPI);
  const noCuda = on(process.env.CCLAB_NO_CUDA);
  const addon = join(root, "build", "Release", "cclab.node");
  const options = `CCLAB_WITH_MPI=${noMpi ? "OFF" : "ON"}\n`;
  // Installed as a dependency (not the clone): build quietly into a log, keep only the addon.
  const dependency = /[\\/]node_modules[\\/]/.test(root);
  const rebuild = dependency ? "npm rebuild cclab" : "npm run build:native";
  // npm (7+) shows an install script's output only when it fails; a terminal, if there is one,
  // still gets the progress lines.
  let tty;
  if (process.env.npm_lifecycle_event && !process.stdout.isTTY) {
    try {
      tty = openSync("/dev/tty", "w");
    } catch {
      tty = undefined;
    }
  }
  const log = (msg) => {
    const line = `cclab native: ${msg}\n`;
    process.stdout.write(line);
    if (tty !== undefined) {
      try {
        writeSync(tty, line);
      } catch {
        tty = undefined;
      }
    }
  };

  if (on(process.env.CCLAB_SKIP_NATIVE)) {
    log("CCLAB_SKIP_NATIVE is set; not building (pure TypeScript fallbacks in use)");
    process.exit(0);
  }

  const findable = findableEngines();

  // Up to date: an addon newer than every native source, built with the same MPI choice, holding
  // every engine CMake would find now.
  function upToDate() {
    if (!existsSync(addon)) return false;
    const built = statSync(addon).mtimeMs;
    const stamp = join(root, "build", "cclab-options.txt");
    if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== options) return false;
    if (!readdirSync(here).every((f) => statSync(join(here, f)).mtimeMs <= built)) return false;
    const why = engineStaleReason({
      findable,
      built: builtEngines(addon),
      off: { mpi: noMpi, cuda: noCuda },
      seen: seenAtBuild(join(root, "build")),
    });
    if (why) log(`${why}: rebuilding`);
    return why === undefined;
  }

  if (!force && upToDate()) {
    log(`up to date (${addon}); run ${rebuild} to rebuild`);
    process.exit(0);
  }

  const missing = [];
  if (!onPath("cmake")) missing.push("cmake");
  if (!["c++", "g++", "clang++"].some((n) => onPath(n)) && !process.env.CXX)
    missing.push("a C++ compiler (g++ or clang++)");
  if (!onPath("make") && !onPath("ninja")) missing.push("make (or ninja)");
  if (missing.length > 0) {
    log(`not built: missing ${missing.join(", ")}; pure TypeScript fallbacks in use`);
    log(`to build it: apt-get install cmake g++ make (and openmpi-bin libopenmpi-dev for MPI), then ${rebuild}`);
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
  log(
    `building the addon with cmake-js (MPI ${noMpi ? "disabled by CCLAB_NO_MPI" : "if CMake finds it"}); a minute or two` +
      (dependency ? `, log in ${join(root, "build", "cclab-build.log")}` : ""),
  );
  const started = Date.now();
  const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`;
  mkdirSync(join(root, "build"), { recursive: true });
  const logFile = join(root, "build", "cclab-build.log");
  const out = dependency ? openSync(logFile, "w") : "inherit";
  const status = await new Promise((done) => {
    const child = spawn(process.execPath, cmakeArgs, {
      cwd: root,
      stdio: ["ignore", out, out],
      // Local headers only: never let a stray npm nodedir/disturl point cmake-js at a download.
      env: { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir ?? "" },
    });
    const tick = setInterval(() => log(`still building (${seconds()})`), 15_000);
    child.on("error", (e) => {
      clearInterval(tick);
      done(e.message);
    });
    child.on("exit", (code, signal) => {
      clearInterval(tick);
      done(code ?? signal);
    });
  });
  if (typeof out === "number") closeSync(out);
  if (status !== 0 || !existsSync(addon)) {
    log(`build failed (exit ${status}) after ${seconds()}; pure TypeScript fallbacks in use`);
    if (dependency && existsSync(logFile)) {
      const tail = readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-15);
      for (const line of tail) log(`  ${line}`);
    }
    // An install must not fail over an optional addon; an explicit build:native reports failure.
    process.exit(force ? 1 : 0);
  }
  writeFileSync(join(root, "build", "cclab-options.txt"), options);
  // What this build could have found: an engine missing now and findable then is not retried.
  writeFileSync(
    join(root, "build", "cclab-found.txt"),
    Object.entries(findable)
      .filter(([, found]) => found)
      .map(([e]) => `${e}\n`)
      .join(""),
  );
  if (dependency) {
    // CMake's tree (~14 MB) is only needed to rebuild, which starts over anyway: keep the addon and the stamp.
    for (const entry of readdirSync(join(root, "build"))) {
      if (entry !== "Release" && entry !== "cclab-options.txt" && entry !== "cclab-found.txt")
        rmSync(join(root, "build", entry), { recursive: true, force: true });
    }
    for (const entry of readdirSync(join(root, "build", "Release"))) {
      if (entry !== "cclab.node") rmSync(join(root, "build", "Release", entry), { recursive: true, force: true });
    }
  }
  log(`built ${addon} in ${seconds()}`);
}
