/**
 * The layering holds (src/tools/layers.ts): no module under src/ or algorithms/ imports from a
 * layer above its own, and none reaches itself through its imports (no-circular), checked by
 * dependency-cruiser over every import; and the check fails, naming the rule and the files, when an
 * upward import or a cycle is planted.
 */
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cyclesOf, layerViolations } from "../src/tools/layers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("layers: core -> comm -> schedule -> backends -> collectives -> tools -> cli", () => {
  it("no module imports from a higher layer, and there is no import cycle", async () => {
    const found = await layerViolations();
    expect(found.filter((v) => v.rule !== "no-circular")).toEqual([]);
    expect(cyclesOf(found)).toEqual([]);
  });

  it("a planted import cycle is reported with its way round", async () => {
    const a = `src/core/planted-a-${process.pid}.ts`;
    const b = `src/core/planted-b-${process.pid}.ts`;
    writeFileSync(`${ROOT}/${a}`, `export { b } from "./planted-b-${process.pid}.js";\nexport const a = 1;\n`);
    writeFileSync(`${ROOT}/${b}`, `import type {} from "./planted-a-${process.pid}.js";\nexport const b = 2;\n`);
    try {
      const found = await layerViolations([a]);
      expect(found).toContainEqual({ rule: "no-circular", from: a, to: b, cycle: [b, a] });
      expect(cyclesOf(found)).toEqual([`${a} -> ${b}`]);
    } finally {
      rmSync(`${ROOT}/${a}`, { force: true });
      rmSync(`${ROOT}/${b}`, { force: true });
    }
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
