/** docs/algorithms.md is generated from the registry; it must match what the generator writes now. */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ALGORITHMS_MD, algorithmsMarkdown } from "../src/tools/docs.js";

it("docs/algorithms.md is current (npx tsx src/tools/docs.ts)", () => {
  expect(readFileSync(ALGORITHMS_MD, "utf8")).toBe(algorithmsMarkdown());
});
