/**
 * docs/faults.md's catalogue is generated from test/faults/table.ts (`npm run docs:faults`, which
 * also measures each row): this keeps the two equal, with the measured times the doc holds, so
 * a row added or changed without regenerating the doc fails here.
 */
import { describe, expect, it } from "vitest";
import { currentCatalogue, renderCatalogue } from "./docs.js";
import { ROWS } from "./table.js";

describe("docs/faults.md", () => {
  it("holds the catalogue as table.ts says it, every run row measured", () => {
    const { section, measured } = currentCatalogue();
    expect(section, "run `npm run docs:faults` to regenerate docs/faults.md").toBe(renderCatalogue(measured));
    const unmeasured = ROWS.filter((r) => !r.skip).flatMap((r) =>
      r.backends.filter((b) => !measured.has(`${r.id}/${b}`)).map((b) => `${r.id}/${b}`),
    );
    expect(unmeasured).toEqual([]);
  });

  it("has at least 60 rows, every numbered item of the fault list among them", () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(60);
    const items = new Set(ROWS.flatMap((r) => r.item.split(", ")));
    for (const item of [
      "1",
      "2(a)",
      "2(b)",
      "2(c)",
      "2(d)",
      "2(e)",
      "3(a)",
      "3(b)",
      "3(c)",
      "4",
      "5",
      "6",
      "7",
      "8",
      "9",
    ]) {
      expect(items.has(item), `item ${item}`).toBe(true);
    }
    expect(new Set(ROWS.map((r) => r.id)).size).toBe(ROWS.length);
  });
});
