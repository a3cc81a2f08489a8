/**
 * Loading a user's module: a cclab program (cclab run) or an algorithm file (--algorithm-file).
 * The package is compiled JavaScript; a user's TypeScript is loaded through tsx, registered here
 * the first time a .ts (or .mts, .cts, .tsx) file is imported, unless a loader already runs
 * (node --import tsx, or cclab run from a clone). Nothing else in cclab needs tsx.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

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
