/**
 * Loading a user's module: a cclab program (cclab run) or an algorithm file (--algorithm-file).
 * The package is compiled JavaScript; a user's TypeScript is loaded through tsx, registered here
 * the first time a .ts (or .mts, .cts, .tsx) file is imported, unless a loader already runs
 * (node --import tsx, or cclab run from a clone). Nothing else in cclab needs tsx.
 */
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

let registered = false;

/** True when this process already transpiles TypeScript (cclab itself runs from its .ts sources). */
function loaderActive(): boolean {
  return (
    import.meta.url.endsWith(".ts") || process.execArgv.some((a) => /tsx|ts-node|--experimental-strip-types/.test(a))
  );
}

/** Imports `path` (relative to the working directory), through tsx where it is TypeScript. */
export async function importUserModule(path: string): Promise<Record<string, unknown>> {
  const file = resolve(path);
  if (/\.(c|m)?tsx?$/i.test(file) && !registered && !loaderActive()) {
    const { register } = (await import("tsx/esm/api")) as { register: () => unknown };
    register();
    registered = true;
  }
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/**
 * One of cclab's own modules beside `base` (the caller's import.meta.url), named as in the
 * sources ("./worker.ts"): the .ts file when cclab runs from its clone, the compiled .js in the
 * package.
 */
export function ownModule(rel: string, base: string): string {
  const js = base.endsWith(".ts") ? rel : rel.replace(/\.ts$/, ".js");
  return fileURLToPath(new URL(js, base));
}

/** node's command line for a script: through the tsx loader only where the script is TypeScript. */
export function nodeArgv(script: string, args: readonly string[]): string[] {
  if (!/\.(c|m)?tsx?$/i.test(script)) return [process.execPath, script, ...args];
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm")).href;
  return [process.execPath, "--import", tsx, script, ...args];
}
