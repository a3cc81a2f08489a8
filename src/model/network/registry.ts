/**
 * The topology families: every module under families/ is read once, and each TopologyFamily it
 * exports (family.ts) is registered under its name. Adding a family is adding one file there;
 * nothing else lists them. `--topology`, `--routing` and their help are made from this registry.
 */
import { readdirSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { InvalidArgumentError } from "../../core/errors.js";
import { isTopologyFamily, type TopologyFamily } from "./family.js";

/** This module's own extension: '.ts' when run from the sources (tsx, vitest), '.js' when built. */
const here = fileURLToPath(import.meta.url);
const ext = extname(here);
const dir = join(dirname(here), "families");

async function load(): Promise<readonly TopologyFamily[]> {
  const found = new Map<string, TopologyFamily>();
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(ext) && !f.endsWith(`.d${ext}`) && !f.includes(".test."))
    .sort();
  for (const file of files) {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      if (!isTopologyFamily(value)) continue;
      const other = found.get(value.name);
      if (other !== undefined && other !== value)
        throw new InvalidArgumentError(
          { op: "topology families", arg: file },
          `family '${value.name}' is defined twice; give each family file's family its own name`,
        );
      found.set(value.name, value);
    }
  }
  return [...found.values()].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
}

/** Every family, in help order. */
export const FAMILIES: readonly TopologyFamily[] = await load();

/** The family named `name` (lower case), or undefined. */
export function familyNamed(name: string): TopologyFamily | undefined {
  return FAMILIES.find((f) => f.name === name);
}
