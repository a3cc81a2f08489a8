/**
 * Each algorithm file's header is written from its own fields (src/tools/headers.ts), ring
 * all-reduce's with its n = 4 step table inline; every other algorithm's n = 4 table is a golden
 * file under test/golden/explain/ that must equal what `cclab explain -n 4` prints now.
 */
import { describe, expect, it } from "vitest";
import { allAlgorithms } from "../src/schedule/registry.js";
import { headerStatus, INLINE_TABLES } from "../src/tools/headers.js";

describe("algorithm headers and golden step tables", () => {
  it.each(allAlgorithms().map((a) => [`${a.collective}/${a.name}`, a] as const))("%s", (id, alg) => {
    const st = headerStatus(alg);
    expect(st.ok, `${st.file}: header differs from its fields; run: npx tsx src/tools/headers.ts ${id}`).toBe(true);
    if (INLINE_TABLES.has(id)) expect(st.golden).toBeUndefined();
    else
      expect(
        st.golden?.ok,
        `${st.golden?.file} differs from cclab explain; run: npx tsx src/tools/headers.ts ${id}`,
      ).toBe(true);
    if (alg.topology?.families.includes("torus"))
      expect(
        st.shaped?.ok,
        `${st.shaped?.file} differs from cclab explain --topology; run: npx tsx src/tools/headers.ts ${id}`,
      ).toBe(true);
  });
  it("ring all-reduce keeps its step table inline", () => {
    const ring = allAlgorithms().find((a) => a.collective === "allreduce" && a.name === "ring");
    expect(ring && headerStatus(ring).updated).toContain(
      "Step table (n = 4), from `cclab explain allreduce --algorithm ring -n 4`:",
    );
  });
});
