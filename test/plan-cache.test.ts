/**
 * A repeated call does no schedule generation and no allocation (issue 16): the front API
 * compiles a plan once per call shape and the executor reuses its scratch, so the second and
 * later calls of the same shape build nothing and allocate nothing on any rank.
 */
import { describe, expect, it } from "vitest";
import { allReduce, allToAllv, planStats, reduce, reduceScatter } from "../src/collectives/api.js";
import type { Comm, OpOptions, Work } from "../src/comm.js";
import type { DataBuffer, View } from "../src/core/buffer.js";
import type { DType } from "../src/core/dtype.js";
import { CommLayer } from "../src/layer.js";
import { findAlgorithm, registerAlgorithm } from "../src/schedule/registry.js";
import { spawn } from "../src/sim/index.js";
import { defaultSegment } from "../src/specs/index.js";

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

  it("'auto' chooses once per call shape, and again after an algorithm is registered", async () => {
    const before = planStats.chosen;
    await spawn(2, async (comm) => {
      const buf = new Float32Array(64).fill(1);
      for (let i = 0; i < 10; i++) await allReduce(comm, buf, { algorithm: "auto" });
      await allReduce(comm, new Float32Array(65536), { algorithm: "auto" });
    });
    // Two shapes (256 B and 256 KiB on 2 ranks); both ranks share this process's cache.
    expect(planStats.chosen - before).toBe(2);
    const ring = findAlgorithm("allreduce", "ring", { op: "test" });
    registerAlgorithm({ ...ring, name: "ring_again_for_the_cache_test" });
    await spawn(2, async (comm) => {
      await allReduce(comm, new Float32Array(64).fill(1), { algorithm: "auto" });
    });
    expect(planStats.chosen - before).toBe(3);
  });

  it("a loop over a few shapes (algorithms, counts) makes each call once; past PROBES shapes it makes them again", async () => {
    // Bench's rounds interleave algorithms and DDP's buckets differ in size: with one probe a
    // comm made every such call anew (2.8 - 4.0 µs and garbage at bench's first call of a round, n = 2).
    const shapes = (algs: string[], counts: number[]) => algs.flatMap((a) => counts.map((c) => [a, c] as const));
    const loop = async (list: (readonly [string, number])[], times: number) => {
      const before = planStats.probed;
      const sums = await spawn(2, async (comm) => {
        const got: number[] = [];
        for (let t = 0; t < times; t++) {
          for (const [algorithm, count] of list) {
            const buf = new Float32Array(count).fill(comm.rank + 1);
            await allReduce(comm, buf, { algorithm });
            got.push(buf[count - 1] as number);
          }
        }
        return got;
      });
      for (const s of sums) expect(s).toEqual(Array(times * list.length).fill(3));
      return (planStats.probed - before) / 2;
    };
    // 6 shapes, 5 times over: 6 probes a rank.
    expect(await loop(shapes(["ring", "recursive_doubling", "segmented_ring"], [16, 40]), 5)).toBe(6);
    // 9 shapes in turn, over the 8 kept: the oldest is always the one replaced, so every call misses.
    expect(await loop(shapes(["ring", "recursive_doubling", "segmented_ring"], [8, 24, 48]), 3)).toBe(27);
  });

  it.each([
    [
      "op",
      async (comm: Comm, k: number) => {
        const buf = new Float32Array(8).fill(comm.rank + 2);
        await allReduce(comm, buf, { algorithm: "ring", op: k ? "max" : "sum" });
        return buf[7] as number;
      },
      [5, 3],
    ],
    [
      "dtype",
      async (comm: Comm, k: number) => {
        const buf = k ? new Int32Array(8).fill(comm.rank + 2) : new Float32Array(8).fill(comm.rank + 2.5);
        await allReduce(comm, buf, { algorithm: "ring" });
        return buf[7] as number;
      },
      [6, 5],
    ],
    [
      "root",
      async (comm: Comm, k: number) => {
        const buf = new Float32Array(8).fill(comm.rank + 2);
        await reduce(comm, buf, { algorithm: "binomial", root: k });
        return comm.rank === k ? (buf[7] as number) : -1;
      },
      [5, 5],
    ],
    [
      "segment",
      async (comm: Comm, k: number) => {
        const buf = new Float32Array(64).fill(comm.rank + 2);
        await allReduce(comm, buf, { algorithm: "segmented_ring", segment: k ? 8 : 4 });
        return buf[63] as number;
      },
      [5, 5],
    ],
  ] as const)(
    "calls differing only in %s alternate between two probes, each with its own result",
    async (_, call, want) => {
      const before = planStats.probed;
      const got = await spawn(2, async (comm) => {
        const out: number[] = [];
        for (let i = 0; i < 6; i++) out.push(await call(comm, i % 2));
        return out;
      });
      for (const [rank, out] of got.entries()) {
        const mine = (k: number) => (_ === "root" && rank !== k ? -1 : (want[k] as number));
        expect(out).toEqual([0, 1, 0, 1, 0, 1].map(mine));
      }
      // Two shapes a rank: a probe that ignored the field would be one (and, but for the segment, wrong data).
      expect((planStats.probed - before) / 2).toBe(2);
    },
  );

  it("all-to-all-v's splits are a shape by value: the same splits again hit, splits changed in place do not", async () => {
    const before = planStats.probed;
    const got = await spawn(2, async (comm) => {
      const r = comm.rank;
      const input = new Int32Array([10 * r + 1, 10 * r + 2]);
      const output = new Int32Array(2);
      // The same splits, a new array each call (as a literal in a loop is): one probe.
      for (let i = 0; i < 4; i++) await allToAllv(comm, output, input, { inputSplits: [1, 1], outputSplits: [1, 1] });
      const even = [...output];
      // One array changed in place between calls: rank r now keeps both its elements.
      const splits = [1, 1];
      await allToAllv(comm, output, input, { inputSplits: splits, outputSplits: splits });
      splits[r] = 2;
      splits[1 - r] = 0;
      await allToAllv(comm, output, input, { inputSplits: splits, outputSplits: splits });
      return { even, kept: [...output] };
    });
    expect(got[0]).toEqual({ even: [1, 11], kept: [1, 2] });
    expect(got[1]).toEqual({ even: [2, 12], kept: [11, 12] });
    // Per rank: the even splits once (the in-place array's first call hits it too), then the changed ones.
    expect((planStats.probed - before) / 2).toBe(2);
  });

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

describe("an algorithm's own default segment", () => {
  /** Counts the transfers the executor posts. */
  class Transfers extends CommLayer {
    sends = 0;
    override isend(v: View, peer: number, options?: OpOptions): Work {
      this.sends++;
      return super.isend(v, peer, options);
    }
    async split(ranks: readonly number[]): Promise<Comm> {
      return this.inner.split(ranks);
    }
  }
  it("segmented_ring moves 1 MiB segments when the call names none (Open MPI's), a named segment when it does", async () => {
    expect(defaultSegment("float32", findAlgorithm("allreduce", "segmented_ring", { op: "test" }))).toBe(262144);
    expect(defaultSegment("float32", findAlgorithm("allreduce", "ring", { op: "test" }))).toBe(32768);
    const sends = await spawn(2, async (raw) => {
      const comm = new Transfers(raw);
      const buf = new Float32Array(1 << 21).fill(1); // 8 MiB: a 4 MiB chunk per rank
      await allReduce(comm, buf, { algorithm: "segmented_ring" });
      const byDefault = comm.sends;
      await allReduce(comm, buf, { algorithm: "segmented_ring", segment: 32768 });
      return [byDefault, comm.sends - byDefault];
    });
    // 2(n-1)·S messages: S = 4 segments of 1 MiB per chunk, or 32 of 128 KiB.
    for (const s of sends) expect(s).toEqual([2 * 4, 2 * 32]);
  });
});
