/**
 * The layering holds (src/tools/layers.ts): no module under src/ or algorithms/ imports from a
 * layer above its own, checked by dependency-cruiser over every import; and the check fails, naming
 * the rule and both files, when an upward import is planted.
 */
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { layerViolations } from "../src/tools/layers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("layers: core -> comm -> schedule -> backends -> collectives -> tools -> cli", () => {
  it("no module imports from a higher layer", async () => {
    expect(await layerViolations()).toEqual([]);
  });

  it("an upward import planted in the core is reported with its rule and both ends", async () => {
    const planted = `src/core/planted-${process.pid}.ts`;
    writeFileSync(`${ROOT}/${planted}`, 'export { allReduce } from "../collectives/api.js";\n');
    try {
      const found = await layerViolations([planted]);
      expect(found).toContainEqual({ rule: "no-upward-import-from-core", from: planted, to: "src/collectives/api.ts" });
    } finally {
      rmSync(`${ROOT}/${planted}`, { force: true });
    }
  });

  it("so is a backend importing a tool", async () => {
    const planted = `src/sim/planted-${process.pid}.ts`;
    writeFileSync(`${ROOT}/${planted}`, 'export { launch } from "../runtime/launch.js";\n');
    try {
      const found = await layerViolations([planted]);
      expect(found.map((v) => `${v.rule} ${v.to}`)).toContain("no-upward-import-from-backends src/runtime/launch.ts");
    } finally {
      rmSync(`${ROOT}/${planted}`, { force: true });
    }
  });
});
