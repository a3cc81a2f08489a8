/**
 * Loading the workspace's TypeScript in the browser: each file is stripped of its types by
 * sucrase (which keeps line numbers, so a stack trace points at the line the editor shows) and
 * evaluated as a CommonJS module. Its imports resolve as they would in a checkout: a relative
 * path from the file's own place ('../src/index.js' from examples/, '../lib/ring.js' from
 * algorithms/allreduce/), first to a file of the workspace (an edited copy wins), else to the
 * copy of cclab's own sources bundled into the page ('modules.ts' lists them). 'cclab' and
 * 'cclab/dsl' name the package as an installed user would.
 */
import { transform } from "sucrase";
import { resolvePath } from "./paths.js";
import type { Files } from "./protocol.js";

/** A module's exports, as a namespace object. */
export type Exports = Record<string, unknown>;

/** The JavaScript sucrase makes of a file (types stripped, imports as require calls). */
export function transpile(path: string, source: string): string {
  const out = transform(source, { transforms: ["typescript", "imports"], filePath: path, production: true });
  // import.meta (examples' runIfMain) has no meaning in a function body: give it the file's URL.
  return out.code.replace(/\bimport\.meta\b/g, "__cclab_meta");
}

export interface Loader {
  /** Loads a workspace file (and, through it, what it imports). */
  load(path: string): Exports;
}

/**
 * A loader over `files` and the bundled `modules`. `consoleFor` is the console a file's code
 * sees (the page shows its lines apart from the ranks' own).
 */
export function makeLoader(files: Files, modules: Readonly<Record<string, Exports>>, console: unknown): Loader {
  const cache = new Map<string, Exports>();
  const loading = new Set<string>();
  const fileOf = (key: string) => [`${key}.ts`, `${key}.js`, key].find((p) => files[p] !== undefined);

  const load = (path: string): Exports => {
    const done = cache.get(path);
    if (done) return done;
    const source = files[path];
    if (source === undefined) throw new Error(`the workspace has no file ${path}`);
    const module = { exports: {} as Exports };
    cache.set(path, module.exports);
    loading.add(path);
    const require = (spec: string): Exports => {
      const key = resolvePath(path, spec);
      if (key === undefined) {
        throw new Error(
          `${path}: import '${spec}': the playground resolves relative paths into the repository and 'cclab'; a package outside cclab cannot load here`,
        );
      }
      const own = fileOf(key);
      if (own !== undefined) {
        if (loading.has(own) && own !== path) return cache.get(own) as Exports;
        return load(own);
      }
      const m = modules[key];
      if (m) return m;
      throw new Error(
        `${path}: import '${spec}' (${key}.ts): not in the playground; it carries cclab's simulator, schedules, algorithms and the examples' helpers, not the mpi/nccl backends, the launcher or Node's modules`,
      );
    };
    const code = transpile(path, source);
    const fn = new Function(
      "require",
      "exports",
      "module",
      "console",
      "__cclab_meta",
      `${code}\n//# sourceURL=${path}`,
    ) as (...a: unknown[]) => void;
    try {
      fn(require, module.exports, module, console, { url: `playground:///${path}` });
    } finally {
      loading.delete(path);
    }
    cache.set(path, module.exports);
    return module.exports;
  };
  return { load };
}
