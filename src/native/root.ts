/**
 * Where cclab is installed: the directory of its package.json, found by walking up from this
 * file (src/native/ in a clone, dist/src/native/ in the npm package). The addon (build/) and the
 * native sources (native/) are there.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "cclab") return dir;
      } catch {}
    }
    dir = dirname(dir);
  }
  // Not found (a copied tree): the clone's layout.
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..");
}

/** The package's root directory. */
export const PACKAGE_ROOT = findRoot();

/** The package's version, from its package.json. */
export function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version?: string }).version ?? "0.0.0"
    );
  } catch {
    return "0.0.0";
  }
}

/** True where cclab was installed as a dependency (inside node_modules), not run from its clone. */
export function installedAsDependency(): boolean {
  return /[\\/]node_modules[\\/]/.test(PACKAGE_ROOT);
}

/** The command that builds the native addon where the user is: npm rebuild in a consumer, the script in the clone. */
export function buildCommand(): string {
  return installedAsDependency() ? "npm rebuild cclab" : "npm run build:native";
}
