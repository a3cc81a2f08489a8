/** Deadlock detection and explanation in the sim backend: the seed 003 send-send case, its fixes, random cycles. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Comm } from "../src/comm.js";
import { tensor, view, zeros } from "../src/core/buffer.js";
import { DeadlockError } from "../src/core/errors.js";
import { type SimOptions, spawn } from "../src/sim/index.js";

/** Runs fn on every rank and returns what each rank returned or threw (spawn itself never rejects). */
function settle<T>(n: number, fn: (c: Comm) => Promise<T>, options?: SimOptions): Promise<(T | Error)[]> {
  return spawn(n, (c) => fn(c).catch((e: Error) => e), options);
}

const mine = (c: Comm) =>
  tensor("float32", [10 * (c.rank + 1), 10 * (c.rank + 1), 10 * (c.rank + 1), 10 * (c.rank + 1)]);

/** Seed 003's wrong example: both ranks send first, then receive. */
async function sendSend(c: Comm): Promise<number[]> {
  if (c.rank > 1) return [];
  const peer = 1 - c.rank;
  const r = zeros("float32", 4);
  await c.send(view(mine(c)), peer, { label: "exchange" });
  await c.recv(view(r), peer, { label: "exchange" });
  return r.values() as number[];
}

describe("the seed 003 send-send deadlock", () => {
  it("under 'nccl' both ranks get a DeadlockError that names both ranks, their sends and the cycle", async () => {
    const got = await settle(4, sendSend);
    for (const r of [0, 1]) {
      const e = got[r] as DeadlockError;
      expect(e).toBeInstanceOf(DeadlockError);
      expect(e.message).toContain(
        "rank 0 waits in send(to 1, 4 x float32, 'exchange') -> rank 1 waits in send(to 0, 4 x float32, 'exchange') -> rank 0",
      );
      expect(e.message).toContain("under 'nccl' a send completes only when its receive is posted");
      expect(e.cycle).toEqual([0, 1]);
      expect(e.blocked).toEqual([
        { rank: 0, kind: "send", peer: 1, count: 4, dtype: "float32", label: "exchange" },
        { rank: 1, kind: "send", peer: 0, count: 4, dtype: "float32", label: "exchange" },
      ]);
    }
    expect(got[2]).toEqual([]);
  });

  it("runs unchanged under 'buffered' (as gloo often appears) and small 'mpi-eager'", async () => {
    for (const semantics of ["buffered", "mpi-eager"] as const) {
      const got = await spawn(4, sendSend, { semantics });
      expect(got.slice(0, 2)).toEqual([
        [20, 20, 20, 20],
        [10, 10, 10, 10],
      ]);
    }
  });

  it("deadlocks under 'mpi-eager' once the message is above the eager limit, with that hint", async () => {
    const got = await settle(2, sendSend, { semantics: "mpi-eager", eagerLimitBytes: 15 });
    expect((got[0] as Error).message).toContain("rank 0 waits in send(to 1, 4 x float32, 'exchange')");
    expect((got[0] as Error).message).toContain("only sends of at most 15 B complete before their receive is posted");
  });

  const fixes: [string, (c: Comm) => Promise<number[]>][] = [
    [
      "one side receives first",
      async (c) => {
        const peer = 1 - c.rank;
        const r = zeros("float32", 4);
        if (c.rank === 0) {
          await c.send(view(mine(c)), peer);
          await c.recv(view(r), peer);
        } else {
          await c.recv(view(r), peer);
          await c.send(view(mine(c)), peer);
        }
        return r.values() as number[];
      },
    ],
    [
      "send and recv in one group",
      async (c) => {
        const peer = 1 - c.rank;
        const r = zeros("float32", 4);
        await c.group([
          { kind: "send", peer, view: view(mine(c)) },
          { kind: "recv", peer, view: view(r) },
        ]);
        return r.values() as number[];
      },
    ],
    [
      "isend/irecv, then wait",
      async (c) => {
        const peer = 1 - c.rank;
        const r = zeros("float32", 4);
        const s = c.isend(view(mine(c)), peer);
        const w = c.irecv(view(r), peer);
        await s.wait();
        await w.wait();
        return r.values() as number[];
      },
    ],
  ];
  it.each(fixes)("fix '%s' completes under 'nccl' for every seed", async (_, fix) => {
    for (let seed = 1; seed <= 5; seed++) {
      const got = await spawn(2, fix, { seed, chaos: seed > 2 });
      expect(got).toEqual([
        [20, 20, 20, 20],
        [10, 10, 10, 10],
      ]);
    }
  });
});

describe("deadlock explanations", () => {
  it("names a rank that finished without posting the matching send", async () => {
    const got = await settle(4, async (c) => {
      if (c.rank === 1) await c.recv(view(zeros("int32", 2)), 3);
      return "done";
    });
    const e = got[1] as DeadlockError;
    expect(e).toBeInstanceOf(DeadlockError);
    expect(e.message).toContain(
      "rank 1 waits in recv(from 3, 2 x int32), but rank 3 has finished without posting the matching send",
    );
    expect(e.cycle).toEqual([]);
  });

  it("a blocking send to self is a cycle of one", async () => {
    const [e] = await settle(1, (c) => c.send(view(zeros("int8", 1)), 0));
    expect((e as DeadlockError).cycle).toEqual([0]);
    expect((e as Error).message).toContain("rank 0 waits in send(to 0, 1 x int8) -> rank 0");
  });

  it("a split some rank never calls", async () => {
    const got = await settle(3, async (c) => (c.rank === 2 ? null : await c.split([0, 1])));
    expect((got[0] as Error).message).toContain(
      "rank 0 waits in split([0, 1]), but rank 2 finished without calling it",
    );
  });

  it("is not declared while a rank awaits something outside the sim", async () => {
    const got = await spawn(2, async (c) => {
      const t = zeros("int32", 1);
      if (c.rank === 0) {
        // Rank 1 is blocked in recv meanwhile; rank 0 is busy elsewhere, so nothing is stuck.
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        await c.send(view(tensor("int32", [42])), 1);
      } else {
        await c.recv(view(t), 0);
      }
      return t.values()[0];
    });
    expect(got[1]).toBe(42);
  });

  it("ranks may catch a DeadlockError and go on communicating", async () => {
    const got = await spawn(2, async (c) => {
      const peer = 1 - c.rank;
      const caught = await c.send(view(zeros("int32", 1)), peer).catch((e: unknown) => e instanceof DeadlockError);
      const r = zeros("int32", 1);
      await c.group([
        { kind: "send", peer, view: view(tensor("int32", [c.rank + 1])) },
        { kind: "recv", peer, view: view(r) },
      ]);
      return [caught, r.values()[0]];
    });
    expect(got).toEqual([
      [true, 2],
      [true, 1],
    ]);
  });
});

/** A random cycle over k distinct ranks of a world of n (the rest do nothing), and a seed. */
const cycleCase = fc.integer({ min: 2, max: 12 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    cycle: fc.shuffledSubarray(
      Array.from({ length: n }, (_, i) => i),
      { minLength: 1, maxLength: n },
    ),
    seed: fc.integer({ min: 1, max: 1000 }),
    breaker: fc.nat(),
  }),
);

/** Each rank on the cycle sends to its successor and receives from its predecessor; `first` says which it does first. */
function ringOn(cycle: readonly number[], first: (pos: number) => "send" | "recv") {
  return async (c: Comm): Promise<number | undefined> => {
    const pos = cycle.indexOf(c.rank);
    if (pos < 0) return undefined;
    const next = cycle[(pos + 1) % cycle.length]!;
    const prev = cycle[(pos + cycle.length - 1) % cycle.length]!;
    const r = zeros("int32", 1);
    const send = () => c.send(view(tensor("int32", [c.rank])), next, { label: "ring" });
    const recv = () => c.recv(view(r), prev, { label: "ring" });
    if (first(pos) === "send") {
      await send();
      await recv();
    } else {
      await recv();
      await send();
    }
    return r.values()[0] as number;
  };
}

const rotateToMin = (xs: readonly number[]) => {
  const m = xs.indexOf(Math.min(...xs));
  return [...xs.slice(m), ...xs.slice(0, m)];
};

describe("random cyclic send patterns (fast-check)", () => {
  it("every rank sending first around a cycle deadlocks under 'nccl', and the reported cycle is that cycle", async () => {
    await fc.assert(
      fc.asyncProperty(cycleCase, async ({ n, cycle, seed }) => {
        const got = await settle(
          n,
          ringOn(cycle, () => "send"),
          { seed },
        );
        for (const r of cycle) {
          const e = got[r] as DeadlockError;
          expect(e).toBeInstanceOf(DeadlockError);
          expect(e.cycle).toEqual(rotateToMin(cycle));
          expect(e.blocked.map((b) => b.rank)).toEqual([...cycle].sort((a, b) => a - b));
          expect(e.message).toContain(`waits in send(to ${cycle[1 % cycle.length]}, 1 x int32, 'ring')`);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("every rank receiving first deadlocks under every model; the cycle runs backwards", async () => {
    await fc.assert(
      fc.asyncProperty(cycleCase, async ({ n, cycle, seed }) => {
        const got = await settle(
          n,
          ringOn(cycle, () => "recv"),
          { seed, semantics: "buffered" },
        );
        const e = got[cycle[0]!] as DeadlockError;
        expect(e).toBeInstanceOf(DeadlockError);
        expect(e.cycle).toEqual(rotateToMin([...cycle].reverse()));
      }),
      { numRuns: 30 },
    );
  });

  it("the same cycle completes under 'buffered', and under 'nccl' once any one rank receives first", async () => {
    await fc.assert(
      fc.asyncProperty(cycleCase, async ({ n, cycle, seed, breaker }) => {
        const expected = (r: number) => {
          const pos = cycle.indexOf(r);
          return pos < 0 ? undefined : cycle[(pos + cycle.length - 1) % cycle.length];
        };
        const want = Array.from({ length: n }, (_, r) => expected(r));
        expect(
          await spawn(
            n,
            ringOn(cycle, () => "send"),
            { seed, semantics: "buffered" },
          ),
        ).toEqual(want);
        if (cycle.length > 1) {
          const b = breaker % cycle.length;
          const fixed = ringOn(cycle, (pos) => (pos === b ? "recv" : "send"));
          expect(await spawn(n, fixed, { seed, chaos: true })).toEqual(want);
        }
      }),
      { numRuns: 40 },
    );
  });
});
