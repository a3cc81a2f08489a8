/**
 * The executor's scratch pool: one scratch buffer per communicator and dtype, grown on demand,
 * so repeated collectives do not each leave a message-sized buffer behind; and what the front API
 * hands a plan runner (the caller's views and options, the executor not between them).
 */
import { describe, expect, it } from "vitest";
import { allReduce } from "../src/collectives/api.js";
import type { Comm } from "../src/comm.js";
import { tensor } from "../src/core/buffer.js";
import type { DType } from "../src/core/dtype.js";
import { type Bound, execute, type PlanRunner, type PlanRunOptions } from "../src/schedule/executor.js";
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

describe("what a plan runner is handed", () => {
  it("the caller's own views and options, straight from the front API (scratch is the runner's own)", async () => {
    await spawn(2, async (c) => {
      const seen: { bound: Bound; options: PlanRunOptions }[] = [];
      // A runner that notes what it is handed and runs the plan through the executor.
      const runner: PlanRunner = {
        runPlan(plan, bound, options) {
          seen.push({ bound, options });
          return execute(c, plan, bound);
        },
      };
      const comm = new Proxy(c, {
        get(target, key, receiver) {
          if (key === "planRunner") return runner;
          const v = Reflect.get(target, key, receiver);
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
      const a = tensor("float32", [c.rank + 1, 10]);
      const b = tensor("float32", [c.rank + 2, 20]);
      await allReduce(comm, a, { algorithm: "ring", label: "mine" });
      await allReduce(comm, b, { algorithm: "ring" });
      expect(a.values()).toEqual([3, 20]);
      expect(b.values()).toEqual([5, 40]);
      expect(seen.map((s) => s.bound.input?.buffer)).toEqual([a, b]);
      expect(seen.map((s) => s.bound.output?.buffer)).toEqual([a, b]);
      expect(seen.map((s) => "scratch" in s.bound)).toEqual([false, false]);
      // The call's own label, or none: the runner names the plan itself.
      expect(seen.map((s) => s.options.label)).toEqual(["mine", undefined]);
    });
  });
});
