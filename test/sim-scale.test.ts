/**
 * The sim backend at 1024 ranks in one process: a ring exchange completes, a double-binary-tree
 * all-reduce gives every rank the sum, a ring deadlock is explained.
 */
import { describe, expect, it } from "vitest";
import { allReduce } from "../src/collectives/api.js";
import { tensor, view, zeros } from "../src/core/buffer.js";
import { DeadlockError } from "../src/core/errors.js";
import { spawn } from "../src/sim/index.js";
import { Trace } from "../src/trace.js";

const N = 1024;

describe("1024 simulated ranks", () => {
  it("every rank exchanges with both ring neighbours in one group", async () => {
    const trace = new Trace();
    const t0 = performance.now();
    const got = await spawn(
      N,
      async (c) => {
        const next = (c.rank + 1) % c.size;
        const prev = (c.rank + c.size - 1) % c.size;
        const fromPrev = zeros("int32", 2);
        const fromNext = zeros("int32", 2);
        await c.group(
          [
            { kind: "send", peer: next, view: view(tensor("int32", [c.rank, 1])) },
            { kind: "send", peer: prev, view: view(tensor("int32", [c.rank, -1])) },
            { kind: "recv", peer: prev, view: view(fromPrev) },
            { kind: "recv", peer: next, view: view(fromNext) },
          ],
          { label: "neighbours" },
        );
        return [...fromPrev.values(), ...fromNext.values()];
      },
      { trace },
    );
    const ms = performance.now() - t0;
    const rssMiB = process.resourceUsage().maxRSS / 1024;
    for (let r = 0; r < N; r++) {
      expect(got[r]).toEqual([(r + N - 1) % N, 1, (r + 1) % N, -1]);
    }
    console.log(
      `1024-rank grouped ring exchange on sim: ${ms.toFixed(0)} ms, peak RSS of this worker ${rssMiB.toFixed(0)} MiB`,
    );
    expect(trace.events).toHaveLength(4 * N);
    expect(trace.bytesSent(N).every((b) => b === 16)).toBe(true);
  });

  it("double-binary-tree all-reduce: every rank ends with the sum over 1024 ranks", async () => {
    const count = 4096;
    const t0 = performance.now();
    const got = await spawn(N, async (c) => {
      // Rank r contributes r + i at element i: small integers, exact in float32.
      const buf = tensor(
        "float32",
        Array.from({ length: count }, (_, i) => c.rank + (i % 7)),
      );
      await allReduce(c, buf, { algorithm: "double_binary_tree" });
      return buf.values(0, count);
    });
    const ms = performance.now() - t0;
    const rankSum = (N * (N - 1)) / 2;
    for (let r = 0; r < N; r++) {
      const row = got[r] as number[];
      expect(row.length).toBe(count);
      for (let i = 0; i < count; i += 97) expect(row[i]).toBe(rankSum + N * (i % 7));
      expect(row[count - 1]).toBe(rankSum + N * ((count - 1) % 7));
    }
    console.log(`1024-rank double-binary-tree all-reduce of ${count} float32 on sim: ${ms.toFixed(0)} ms`);
  });

  it("all 1024 ranks sending first around the ring: one DeadlockError per rank, a short message", async () => {
    const got = await spawn(N, async (c) => {
      try {
        await c.send(view(zeros("float32", 1)), (c.rank + 1) % c.size);
        return "sent";
      } catch (e) {
        return e as DeadlockError;
      }
    });
    const e = got[N - 1] as DeadlockError;
    expect(e).toBeInstanceOf(DeadlockError);
    expect(e.cycle).toEqual(Array.from({ length: N }, (_, r) => r));
    expect(e.message).toContain("(1012 more ranks)");
    expect(e.message.length).toBeLessThan(2000);
  });
});
