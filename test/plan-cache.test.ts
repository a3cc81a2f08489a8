/**
 * A repeated call does no schedule generation and no allocation (issue 16): the front API
 * compiles a plan once per call shape and the executor reuses its scratch, so the second and
 * later calls of the same shape build nothing and allocate nothing on any rank.
 */
import { describe, expect, it } from "vitest";
import { allReduce, planStats, reduceScatter } from "../src/collectives/api.js";
import type { Comm } from "../src/comm.js";
import type { DataBuffer } from "../src/core/buffer.js";
import type { DType } from "../src/core/dtype.js";
import { CommLayer } from "../src/layer.js";
import { spawn } from "../src/sim/index.js";

/** Counts the buffers the executor asks the backend for. */
class CountingComm extends CommLayer {
  allocs = 0;
  override alloc(dtype: DType, count: number): DataBuffer {
    this.allocs++;
    return super.alloc(dtype, count);
  }
  async split(ranks: readonly number[]): Promise<Comm> {
    return this.inner.split(ranks);
  }
}

describe("plans are compiled once per call shape and reused", () => {
  it.each(["ring", "double_binary_tree", "rabenseifner", "recursive_doubling"])(
    "allreduce/%s: 20 calls on 4 ranks compile 4 plans and allocate only on the first call",
    async (algorithm) => {
      const before = planStats.compiled;
      const perRank = await spawn(4, async (raw) => {
        const comm = new CountingComm(raw);
        const buf = new Float32Array(1000).fill(raw.rank);
        const out = new Float32Array(1000);
        await allReduce(comm, buf, { algorithm, output: out });
        const first = comm.allocs;
        for (let i = 0; i < 19; i++) await allReduce(comm, buf, { algorithm, output: out });
        return { first, later: comm.allocs - first, value: out[0] };
      });
      expect(planStats.compiled - before).toBe(4);
      for (const r of perRank) {
        expect(r.later).toBe(0);
        expect(r.value).toBe(0 + 1 + 2 + 3);
      }
    },
  );

  it("a new shape compiles a new plan; going back to an old shape does not", async () => {
    const before = planStats.compiled;
    await spawn(2, async (comm) => {
      for (const count of [8, 16, 8, 16, 8]) {
        const input = new Int32Array(count * 2).fill(1);
        const out = new Int32Array(count);
        await reduceScatter(comm, out, input, { algorithm: "ring" });
      }
    });
    expect(planStats.compiled - before).toBe(2 * 2);
  });
});
