/**
 * The front API's argument checks: each bad argument fails on the calling rank, before any data
 * moves, with a message naming the rank, the operation and the argument. And the one call
 * builder (makeCall): the front API, bench, model and explain plan the same segments for a call.
 */
import { describe, expect, it, vi } from "vitest";
import { NO_PROGRESS } from "../src/bench/plan.js";
import { benchSim } from "../src/bench/sim.js";
import { model } from "../src/cli/model.js";
import { allGather, allReduce, broadcast, gather, reduceScatter, scatter } from "../src/collectives/api.js";
import type { Comm, OpOptions, Work } from "../src/comm.js";
import { tensor, type View, zeros } from "../src/core/buffer.js";
import { CommLayer } from "../src/layer.js";
import { explainCallFor } from "../src/schedule/explain.js";
import { compile } from "../src/schedule/plan.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { spawn } from "../src/sim/index.js";
import { defaultSegment, rankCall } from "../src/specs/index.js";

/** The message `call` rejects with on each of 3 simulated ranks (every rank calls it alike). */
async function messages(call: (comm: Comm) => Promise<unknown>): Promise<string[]> {
  return spawn(3, async (comm) => {
    try {
      await call(comm);
    } catch (e) {
      return (e as Error).message;
    }
    return "no error";
  });
}

describe("the front API rejects bad arguments, naming rank, operation and argument", () => {
  const cases: [string, (c: Comm) => Promise<unknown>, (rank: number) => string][] = [
    [
      "not a buffer",
      (c) => allReduce(c, "x" as never),
      (r) =>
        `rank ${r}: allReduce: argument 'buf': expected a typed array (Float32Array, Int32Array, ...), a cclab buffer or a view, got string "x"`,
    ],
    [
      "a view outside its buffer",
      (c) => allReduce(c, { buffer: zeros("float32", 2), offset: 1, count: 4 } as never),
      (r) => `rank ${r}: allReduce: argument 'buf': view [1, 5) is outside its buffer of 2 elements`,
    ],
    [
      "a bitwise op on floats",
      (c) => allReduce(c, tensor("float32", [1]), { op: "band" }),
      (r) =>
        `rank ${r}: allReduce: argument 'options.op': reduce op 'band' is bitwise and does not apply to floating-point dtype float32`,
    ],
    [
      "a root outside the group",
      (c) => broadcast(c, tensor("int32", [1]), { root: 5 }),
      (r) => `rank ${r}: broadcast: argument 'options.root': root must be an integer rank in [0, 3), got 5`,
    ],
    [
      "an unknown algorithm",
      (c) => allReduce(c, tensor("int32", [1]), { algorithm: "nope" }),
      (r) => `rank ${r}: allReduce: argument 'algorithm': no allreduce algorithm named 'nope'`,
    ],
    [
      "an output of the wrong size",
      (c) => allGather(c, zeros("int32", 5), tensor("int32", [1, 2])),
      (r) => `rank ${r}: allGather: argument 'output': must have 6 elements, has 5`,
    ],
    [
      "an output of another dtype",
      (c) => reduceScatter(c, zeros("float32", 1), zeros("int32", 3)),
      (r) => `rank ${r}: reduceScatter: argument 'input': dtype int32 differs from the output's float32`,
    ],
    [
      "gather's output missing at the root",
      (c) => gather(c, tensor("int32", [1]), { root: 1 }),
      (r) => (r === 1 ? `rank 1: gather: argument 'options.output': is required here (3 elements)` : "ok"),
    ],
    [
      "a segment that is not a positive integer",
      (c) => allReduce(c, tensor("int32", [1]), { segment: 0 }),
      (r) => `rank ${r}: allReduce: argument 'options.segment': must be a positive integer, got 0`,
    ],
  ];
  it.each(cases)("%s", async (_what, call, want) => {
    const got = await messages(call);
    // "ok": that rank passes its own checks (gather needs no output off the root) and fails only
    // because a peer failed; its message is the abort's, not an argument check's.
    got.forEach((m, r) => {
      const w = want(r);
      if (w !== "ok") expect(m).toContain(w);
    });
  });

  it("a non-member of a subgroup is told so", async () => {
    const got = await spawn(3, async (c) => {
      const sub = await c.split([0, 2]);
      if (sub.rank >= 0) return "member";
      try {
        await allReduce(sub, tensor("int32", [1]));
      } catch (e) {
        return (e as Error).message;
      }
      return "no error";
    });
    expect(got[1]).toBe("allReduce: argument 'comm': this process is not a member of the group (world ranks 0, 2)");
    expect(got[0]).toBe("member");
  });

  it("scatter's view argument is checked like a buffer", async () => {
    const got = await messages((c) => scatter(c, { buffer: zeros("int32", 4), offset: 3, count: 2 } as never));
    for (const [r, m] of got.entries()) {
      expect(m).toBe(`rank ${r}: scatter: argument 'output': view [3, 5) is outside its buffer of 4 elements`);
    }
  });
});

describe("one call, one segment: the front API, bench (sim), model and explain plan the same segments", () => {
  /** Counts the transfers the executor posts on one rank. */
  class Sends extends CommLayer {
    sends = 0;
    override isend(v: View, peer: number, options?: OpOptions): Work {
      this.sends++;
      return super.isend(v, peer, options);
    }
    async split(ranks: readonly number[]): Promise<Comm> {
      return this.inner.split(ranks);
    }
  }
  const n = 4;
  const count = 1 << 22; // 16 MiB of float32: many segments for both algorithms below
  const bytes = count * 4;
  const params = { alpha: 5, beta: 0.00004, gamma: 0 };

  /** `cclab model --json` for one algorithm: its segment, messages and modelled time. */
  async function modelJson(algorithm: string): Promise<{ segment: number; messages: number; modelUs: number }> {
    const out: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((s) => out.push(String(s)) > 0);
    try {
      await model("allreduce", { algorithm, nranks: n, bytes, root: 0, ...params, contention: "shared", json: true });
    } finally {
      write.mockRestore();
    }
    return JSON.parse(out.join(""));
  }

  /** Every rank's sends for one allReduce through the front API on the simulator. */
  async function frontSends(algorithm: string, segment?: number): Promise<number> {
    const sends = await spawn(n, async (raw) => {
      const comm = new Sends(raw);
      await allReduce(comm, new Float32Array(count).fill(1), { algorithm, segment });
      return comm.sends;
    });
    return sends.reduce((a, b) => a + b, 0);
  }

  for (const algorithm of ["segmented_ring", "double_binary_tree"]) {
    it(`allreduce/${algorithm}, n = ${n}, 16 MiB, no segment named`, async () => {
      const alg = findAlgorithm("allreduce", algorithm, { op: "test" });
      const m = await modelJson(algorithm);
      expect(m.segment).toBe(defaultSegment("float32", alg));
      // The front API posts exactly the messages the model counted for its call.
      expect(await frontSends(algorithm)).toBe(m.messages);
      // Explain shows the same call for this count, and its plan sends the same messages.
      const shown = explainCallFor(alg, n, { count });
      expect(shown.segment).toBe(m.segment);
      const planned = Array.from({ length: n }, (_, r) => compile(alg, rankCall(shown, r)));
      expect(planned.flatMap((p) => p.ops).filter((o) => o.kind === "send").length).toBe(m.messages);
      // Bench on sim times the model over its own call: the same time means the same segments.
      const [row] = await benchSim(
        {
          collective: "allreduce",
          algorithm,
          backend: "sim",
          nranks: n,
          minBytes: bytes,
          maxBytes: bytes,
          stepFactor: 2,
          iters: 1,
          warmupIters: 0,
          dtype: "float32",
          op: { name: "sum" },
          root: 0,
          progress: false,
          ...params,
          simMaxBytes: 0,
        },
        NO_PROGRESS,
      );
      expect(row?.outOfPlace.timeUs).toBe(m.modelUs);
    });
  }

  it("a named segment is a different plan, so the comparison above can fail", async () => {
    const m = await modelJson("segmented_ring");
    expect(await frontSends("segmented_ring", m.segment / 8)).toBe(m.messages * 8);
  });
});
