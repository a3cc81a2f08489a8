/**
 * Finding libnccl.so.2 at run time (native/nccl.cc dlopen()s it; nothing links NCCL). Candidates,
 * in order:
 *
 * 1. $CCLAB_NCCL_LIBRARY alone, when set (a path, or a soname for the dynamic loader);
 * 2. 'libnccl.so.2', which the dynamic loader resolves through LD_LIBRARY_PATH and ldconfig;
 * 3. where pip's nvidia-nccl-cu13 / nvidia-nccl-cu12 put it (<site-packages>/nvidia/nccl/lib, as
 *    PyTorch's wheels use it), asked of python3 (and $CCLAB_PYTHON, python): the nvidia.nccl
 *    package's own directory first, then every site-packages directory on sys.path;
 * 4. $NCCL_HOME/lib, $CUDA_HOME/lib64, $CONDA_PREFIX/lib, /usr/local/cuda/lib64 and the
 *    distribution's library directories.
 *
 * When none loads, the failure lists every path tried and why, so "why is NCCL unavailable" has
 * an answer.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { NativeNccl, NcclLibrary } from "./types.js";

export const NCCL_SONAME = "libnccl.so.2";

export interface NcclTried {
  readonly path: string;
  readonly error: string;
}

export type NcclLoad =
  | NcclLibrary
  | { readonly ok: false; readonly reason: string; readonly tried: readonly NcclTried[]; readonly override?: string };

/** The python snippet that prints every libnccl.so.2 a pip install left where PyTorch looks. */
const PYTHON_FIND = [
  "import os, sys, site",
  "dirs = []",
  "try:",
  "    import nvidia.nccl as m",
  "    dirs += [os.path.join(p, 'lib') for p in m.__path__]",
  "except Exception:",
  "    pass",
  "roots = list(getattr(site, 'getsitepackages', lambda: [])())",
  "try:",
  "    roots.append(site.getusersitepackages())",
  "except Exception:",
  "    pass",
  "roots += sys.path",
  "for r in roots:",
  "    for sub in ('nvidia/nccl/lib', 'nvidia/cu13/lib', 'nvidia/cu12/lib'):",
  "        dirs.append(os.path.join(r, sub))",
  "for d in dict.fromkeys(dirs):",
  "    f = os.path.join(d, 'libnccl.so.2')",
  "    if os.path.exists(f):",
  "        print(f)",
].join("\n");

let pythonCache: { found: string[]; notes: NcclTried[] } | undefined;

/** libnccl.so.2 files found through each python's nvidia.nccl package and site-packages (cached per process). */
export function pythonNcclCandidates(env: NodeJS.ProcessEnv = process.env): { found: string[]; notes: NcclTried[] } {
  if (pythonCache) return pythonCache;
  const found: string[] = [];
  const notes: NcclTried[] = [];
  const pythons = [...new Set([env.CCLAB_PYTHON, "python3", "python"].filter((p): p is string => !!p))];
  for (const py of pythons) {
    const r = spawnSync(py, ["-c", PYTHON_FIND], { encoding: "utf8", timeout: 10_000, env });
    if (r.error || r.status !== 0) {
      const why = r.error ? r.error.message : (r.stderr || `exit code ${r.status}`).trim().split("\n").pop();
      notes.push({ path: `${py} (pip's nvidia-nccl-cu13/cu12)`, error: `could not ask it: ${why}` });
      continue;
    }
    const files = r.stdout
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    if (files.length === 0) {
      notes.push({
        path: `${py} (pip's nvidia-nccl-cu13/cu12)`,
        error: "no nvidia/nccl/lib/libnccl.so.2 in its site-packages",
      });
    }
    for (const f of files) if (!found.includes(f)) found.push(f);
    break; // the first python that answers is the one whose packages count
  }
  pythonCache = { found, notes };
  return pythonCache;
}

/** The fixed directories searched after the dynamic loader and python. */
export function standardNcclPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = [
    env.NCCL_HOME && join(env.NCCL_HOME, "lib"),
    env.NCCL_HOME && join(env.NCCL_HOME, "lib64"),
    env.CUDA_HOME && join(env.CUDA_HOME, "lib64"),
    env.CUDA_PATH && join(env.CUDA_PATH, "lib64"),
    env.CONDA_PREFIX && join(env.CONDA_PREFIX, "lib"),
    "/usr/local/cuda/lib64",
    "/usr/local/nccl/lib",
    process.arch === "arm64" ? "/usr/lib/aarch64-linux-gnu" : "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/local/lib",
  ].filter((d): d is string => !!d);
  return [...new Set(dirs)].map((d) => join(d, NCCL_SONAME));
}

let loadedCache: NcclLibrary | undefined;

/**
 * Loads NCCL through the addon's binding (once per process; failures are not cached, so a
 * changed CCLAB_NCCL_LIBRARY is honoured on the next call).
 */
export function loadNcclLibrary(nccl: NativeNccl, env: NodeJS.ProcessEnv = process.env): NcclLoad {
  if (loadedCache) return loadedCache;
  const already = nccl.loaded();
  if (already) return (loadedCache = already);
  const tried: NcclTried[] = [];
  const attempt = (paths: string[]): NcclLibrary | undefined => {
    const toLoad: string[] = [];
    for (const p of paths) {
      if (isAbsolute(p) && !existsSync(p)) tried.push({ path: p, error: "not found" });
      else toLoad.push(p);
    }
    if (toLoad.length === 0) return undefined;
    const r = nccl.load(toLoad);
    if (r.ok) return r;
    tried.push(...r.tried);
    return undefined;
  };
  const finish = (lib: NcclLibrary | undefined, override?: string): NcclLoad => {
    if (lib) return (loadedCache = lib);
    const lines = tried.map((t) => `  ${t.path}: ${t.error}`).join("\n");
    const head = override
      ? `CCLAB_NCCL_LIBRARY=${override} did not load`
      : `${NCCL_SONAME} was not found (or did not load)`;
    return { ok: false, reason: `${head}; tried:\n${lines}`, tried, override };
  };

  const override = env.CCLAB_NCCL_LIBRARY;
  if (override) {
    const p = override.includes("/") ? resolve(override) : override;
    return finish(attempt([p]), override);
  }
  const viaLoader = attempt([NCCL_SONAME]);
  if (viaLoader) return finish(viaLoader);
  const py = pythonNcclCandidates(env);
  const viaPython = attempt(py.found);
  if (viaPython) return finish(viaPython);
  tried.push(...py.notes);
  return finish(attempt(standardNcclPaths(env).filter((p) => !py.found.includes(p))));
}

/** Forgets the python search (tests change the environment between calls). */
export function resetNcclSearchCache(): void {
  pythonCache = undefined;
}
