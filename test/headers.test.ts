/** Each algorithm file's header step table must be exactly what `cclab explain -n 4` prints. */
import { describe, expect, it } from "vitest";
import { allAlgorithms } from "../src/registry.js";
import { headerStatus } from "../src/tools/headers.js";

describe("algorithm headers", () => {
  it.each(allAlgorithms().map((a) => [`${a.collective}/${a.name}`, a] as const))(
    "%s header table is current",
    (id, alg) => {
      const st = headerStatus(alg);
      expect(st.reason, st.reason).toBeUndefined();
      expect(st.ok, `${st.file}: step table differs from explain; run: npx tsx src/tools/headers.ts ${id}`).toBe(true);
    },
  );
});
