/**
 * The front API's argument checks: each bad argument fails on the calling rank, before any data
 * moves, with a message naming the rank, the operation and the argument.
 */
import { describe, expect, it } from "vitest";
import { allGather, allReduce, broadcast, gather, reduceScatter, scatter } from "../src/collectives/api.js";
import type { Comm } from "../src/comm.js";
import { tensor, zeros } from "../src/core/buffer.js";
import { spawn } from "../src/sim/index.js";

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
