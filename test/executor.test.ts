/**
 * The executor's scratch pool: one scratch buffer per communicator and dtype, grown on demand,
 * so repeated collectives do not each leave a message-sized buffer behind.
 */
import { describe, expect, it } from "vitest";
import { allReduce } from "../src/collectives/api.js";
import type { Comm } from "../src/comm.js";
import { tensor } from "../src/core/buffer.js";
import type { DType } from "../src/core/dtype.js";
import { spawn } from "../src/sim/index.js";

/** Counts the element sizes this rank's comm allocates. */
function counting(comm: Comm, allocs: number[]): Comm {
  return new Proxy(comm, {
    get(target, key, receiver) {
      if (key === "alloc") {
        return (dtype: DType, count: number) => {
          allocs.push(count);
          return target.alloc(dtype, count);
        };
      }
      const v = Reflect.get(target, key, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

describe("scratch pool", () => {
  it("reuses one scratch buffer across calls and grows it only when a call needs more", async () => {
    const allocs = await spawn(4, async (c) => {
      const mine: number[] = [];
      const comm = counting(c, mine);
      for (const count of [40, 40, 8, 40, 400]) {
        const buf = tensor(
          "float32",
          Array.from({ length: count }, () => c.rank + 1),
        );
        await allReduce(comm, buf, { algorithm: "ring" });
        expect(buf.values()).toEqual(Array.from({ length: count }, () => 10));
      }
      return mine.filter((n) => n > 0);
    });
    // ring needs ceil(count/4) scratch: 10 for the first call (reused by the next three), 100 for the last.
    for (const a of allocs) expect(a).toEqual([10, 100]);
  });

  it("a dtype gets its own buffer", async () => {
    const allocs = await spawn(2, async (c) => {
      const mine: number[] = [];
      const comm = counting(c, mine);
      await allReduce(comm, tensor("float32", [1, 2, 3, 4]), { algorithm: "ring" });
      await allReduce(comm, tensor("int32", [1, 2, 3, 4]), { algorithm: "ring" });
      await allReduce(comm, tensor("float32", [1, 2, 3, 4]), { algorithm: "ring" });
      return mine.filter((n) => n > 0);
    });
    for (const a of allocs) expect(a).toEqual([2, 2]);
  });
});
