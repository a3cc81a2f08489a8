/** The sim backend's point-to-point semantics, subgroups, local ops, determinism and failure propagation. */
import { describe, expect, it } from "vitest";
import { tensor, view, zeros } from "../src/core/buffer.js";
import { AbortError, InvalidArgumentError, MismatchError, RankError } from "../src/core/errors.js";
import { ReduceOp } from "../src/core/op.js";
import { type Semantics, spawn } from "../src/sim/index.js";
import { Trace } from "../src/trace.js";

const ALL: Semantics[] = ["nccl", "mpi-eager", "buffered"];

describe.each(ALL)("point-to-point under '%s'", (semantics) => {
  it("blocking send/recv moves the bytes, receiver posting first", async () => {
    const got = await spawn(
      2,
      async (c) => {
        if (c.rank === 0) {
          await c.send(view(tensor("float32", [100, 200])), 1);
          return [];
        }
        const t = zeros("float32", 2);
        await c.recv(view(t), 0);
        return t.values();
      },
      { semantics },
    );
    expect(got[1]).toEqual([100, 200]);
  });

  it("keeps several messages between one pair in posting order (non-overtaking)", async () => {
    const n = 6;
    const got = await spawn(
      2,
      async (c) => {
        if (c.rank === 0) {
          const works = [];
          for (let i = 0; i < n; i++) works.push(c.isend(view(tensor("int32", [i, i * 10])), 1));
          for (const w of works) await w.wait();
          return [];
        }
        const bufs = Array.from({ length: n }, () => zeros("int32", 2));
        const works = bufs.map((b) => c.irecv(view(b), 0));
        for (const w of works) await w.wait();
        return bufs.map((b) => b.values());
      },
      { semantics, seed: 7 },
    );
    expect(got[1]).toEqual(Array.from({ length: n }, (_, i) => [i, i * 10]));
  });

  it("a group posts everything together: both sides exchange in one call", async () => {
    const got = await spawn(
      3,
      async (c) => {
        const next = (c.rank + 1) % c.size;
        const prev = (c.rank + c.size - 1) % c.size;
        const out = tensor("float64", [c.rank]);
        const inb = zeros("float64", 1);
        await c.group([
          { kind: "send", peer: next, view: view(out) },
          { kind: "recv", peer: prev, view: view(inb) },
        ]);
        return inb.values()[0];
      },
      { semantics },
    );
    expect(got).toEqual([2, 0, 1]);
  });

  it("isend/irecv: test() is false until the pair completes, wait() then settles", async () => {
    const got = await spawn(
      2,
      async (c) => {
        const peer = 1 - c.rank;
        const r = zeros("int32", 1);
        const rw = c.irecv(view(r), peer);
        const before = rw.test();
        const sw = c.isend(view(tensor("int32", [c.rank + 5])), peer);
        await sw.wait();
        await rw.wait();
        return { before, after: rw.test(), value: r.values()[0] };
      },
      { semantics },
    );
    expect(got.map((g) => g.before)).toEqual([false, false]);
    expect(got.map((g) => g.after)).toEqual([true, true]);
    expect(got.map((g) => g.value)).toEqual([6, 5]);
  });

  it("a matched send/recv of different counts or dtypes rejects with MismatchError naming both sides", async () => {
    const run = (recvView: ReturnType<typeof view>) =>
      spawn(
        2,
        async (c) => {
          try {
            if (c.rank === 0) await c.send(view(zeros("float32", 4)), 1);
            else await c.recv(recvView, 0);
            return "no error";
          } catch (e) {
            return e;
          }
        },
        { semantics, eagerLimitBytes: 8 },
      );
    const errs = await run(view(zeros("float32", 3)));
    // A send that completed at post (buffered) cannot fail any more; its receive reports both sides.
    const failing = semantics === "buffered" ? [errs[1]] : errs;
    if (semantics === "buffered") expect(errs[0]).toBe("no error");
    for (const e of failing) {
      expect(e).toBeInstanceOf(MismatchError);
      expect((e as Error).message).toContain(
        "rank 0 send(to 1) of 4 x float32 (16 B) matched rank 1 recv(from 0) of 3 x float32 (12 B)",
      );
    }
    const dt = await run(view(zeros("int32", 4)));
    expect((dt[1] as Error).message).toContain("matched rank 1 recv(from 0) of 4 x int32 (16 B)");
  });

  it("sending to self matches the rank's own receive", async () => {
    const got = await spawn(
      1,
      async (c) => {
        const r = zeros("uint8", 3);
        await c.group([
          { kind: "send", peer: 0, view: view(tensor("uint8", [1, 2, 3])) },
          { kind: "recv", peer: 0, view: view(r) },
        ]);
        return r.values();
      },
      { semantics },
    );
    expect(got[0]).toEqual([1, 2, 3]);
  });
});

describe("send completion models", () => {
  it("under 'nccl' a send waits for its receive; 'buffered' and small 'mpi-eager' sends complete at post (and a run that never receives them fails)", async () => {
    // Rank 1 never receives: the send either completes alone or is reported as stuck.
    const run = (semantics: Semantics, bytes: number) =>
      spawn(
        2,
        async (c) => {
          if (c.rank === 1) return "finished";
          return c
            .send(view(zeros("uint8", bytes)), 1)
            .then(() => "sent")
            .catch((e: Error) => e.message);
        },
        { semantics, eagerLimitBytes: 64 },
      );
    // The send completes at post, but nobody ever receives it: the run fails, since its data is lost.
    const lost =
      "rank 0 send(to 1) of 1000 x uint8 was never received: rank 1 finished without posting a matching recv; its data is lost";
    await expect(run("buffered", 1000)).rejects.toThrow(`rank 0 failed: MismatchError: ${lost}`);
    await expect(run("mpi-eager", 64)).rejects.toThrow(/rank 0 send\(to 1\) of 64 x uint8 was never received/);
    const stuck = (await run("mpi-eager", 65))[0];
    expect(stuck).toContain(
      "rank 0 waits in send(to 1, 65 x uint8), but rank 1 has finished without posting the matching recv",
    );
    expect((await run("nccl", 1))[0]).toContain("rank 0 waits in send(to 1, 1 x uint8)");
  });

  it("an eager send snapshots its data at post, so the caller may reuse the buffer", async () => {
    const got = await spawn(
      2,
      async (c) => {
        if (c.rank === 0) {
          const t = tensor("int32", [1, 2]);
          await c.send(view(t), 1);
          (t.data as Int32Array).fill(9);
          await c.send(view(t), 1);
          return [];
        }
        const a = zeros("int32", 2);
        const b = zeros("int32", 2);
        await c.recv(view(a), 0);
        await c.recv(view(b), 0);
        return [...a.values(), ...b.values()];
      },
      { semantics: "buffered" },
    );
    expect(got[1]).toEqual([1, 2, 9, 9]);
  });
});

describe("argument validation", () => {
  it("rejects a peer outside the communicator, naming rank, op and 'peer'", async () => {
    const errs = await spawn(2, async (c) => {
      const e1 = await c.send(view(zeros("float32", 1)), 2).catch((e: unknown) => e);
      let e2: unknown;
      try {
        c.irecv(view(zeros("float32", 1)), -1);
      } catch (e) {
        e2 = e;
      }
      return [e1, e2];
    });
    const [e1, e2] = errs[1]!;
    expect(e1).toBeInstanceOf(InvalidArgumentError);
    expect((e1 as Error).message).toMatch(/^rank 1: send: argument 'peer': peer 2 is not a rank/);
    expect((e2 as Error).message).toMatch(/^rank 1: irecv: argument 'peer': peer -1/);
  });

  it("rejects views outside their buffer and non-host buffers", async () => {
    const [e] = await spawn(1, async (c) => {
      const b = zeros("float32", 2);
      const bad = { buffer: b, offset: 1, count: 2 };
      const dev = { buffer: { dtype: "float32", count: 2, location: "cuda:0" }, offset: 0, count: 2 } as never;
      return [await c.send(bad, 0).catch((x: unknown) => x), await c.recv(dev, 0).catch((x: unknown) => x)] as Error[];
    });
    expect(e![0]!.message).toContain("outside its buffer of 2 elements");
    expect(e![1]!.message).toContain("cuda:0");
  });
});

describe("split (torch new_group)", () => {
  it("gives members translated ranks and non-members rank -1; groups are separate matching contexts", async () => {
    const got = await spawn(4, async (c) => {
      const g = await c.split([3, 1]);
      if (g.rank < 0) {
        const e = await g.send(view(zeros("int32", 1)), 0).catch((x: unknown) => x);
        return { rank: g.rank, size: g.size, err: (e as Error).message, value: -1 };
      }
      // Same world pair (1, 3) talks on the world and on the group at once: messages must not cross.
      const peerW = c.rank === 1 ? 3 : 1;
      const fromWorld = zeros("int32", 1);
      const fromGroup = zeros("int32", 1);
      await c.group([
        { kind: "send", peer: peerW, view: view(tensor("int32", [100 + c.rank])) },
        { kind: "recv", peer: peerW, view: view(fromWorld) },
      ]);
      await g.group([
        { kind: "send", peer: 1 - g.rank, view: view(tensor("int32", [g.rank])) },
        { kind: "recv", peer: 1 - g.rank, view: view(fromGroup) },
      ]);
      return {
        rank: g.rank,
        size: g.size,
        worldRanks: g.worldRanks,
        value: Number(fromWorld.values()[0]) * 10 + Number(fromGroup.values()[0]),
      };
    });
    expect(got[3]).toMatchObject({ rank: 0, size: 2, worldRanks: [3, 1], value: 1011 });
    expect(got[1]).toMatchObject({ rank: 1, size: 2, worldRanks: [3, 1], value: 1030 });
    expect(got[0]).toMatchObject({ rank: -1, err: "send: rank 0 (world) is not a member of group [3, 1]" });
    expect(got[2]!.err).toBe("send: rank 2 (world) is not a member of group [3, 1]");
  });

  it("splits a subgroup again, translating through both levels", async () => {
    const got = await spawn(6, async (c) => {
      const evens = await c.split([0, 2, 4]);
      if (evens.rank < 0) return null;
      const pair = await evens.split([2, 1]); // world ranks 4, 2
      if (pair.rank < 0) return { worldRanks: pair.worldRanks };
      const r = zeros("int32", 1);
      await pair.group([
        { kind: "send", peer: 1 - pair.rank, view: view(tensor("int32", [c.rank])) },
        { kind: "recv", peer: 1 - pair.rank, view: view(r) },
      ]);
      return { rank: pair.rank, from: r.values()[0], worldRanks: pair.worldRanks };
    });
    expect(got[4]).toEqual({ rank: 0, from: 2, worldRanks: [4, 2] });
    expect(got[2]).toEqual({ rank: 1, from: 4, worldRanks: [4, 2] });
    expect(got[0]).toEqual({ worldRanks: [4, 2] });
    expect(got[1]).toBeNull();
  });

  it("reports lists that differ between ranks, naming both", async () => {
    const errs = await spawn(2, async (c) => {
      try {
        await c.split(c.rank === 0 ? [0, 1] : [1, 0]);
        return "no error";
      } catch (e) {
        return (e as Error).message;
      }
    });
    expect(errs[0]).toContain("[0, 1]");
    expect(errs[0]).toContain("[1, 0]");
    expect(errs[0]).toBe(errs[1]);
  });

  it("rejects duplicates and out-of-range ranks at the call", async () => {
    const errs = await spawn(2, async (c) => [
      await c.split([0, 0]).catch((e: unknown) => (e as Error).message),
      await c.split([0, 5]).catch((e: unknown) => (e as Error).message),
    ]);
    expect(errs[0]![0]).toBe("rank 0: split: argument 'ranks': rank 0 appears twice in [0, 0]");
    expect(errs[0]![1]).toContain("5 in [0, 5] is not a rank of this communicator");
  });
});

describe("local operations", () => {
  it("copy, reduceInto and scale work on views and are traced", async () => {
    const trace = new Trace();
    const [got] = await spawn(
      1,
      async (c) => {
        const a = c.alloc("float32", 4);
        const b = tensor("float32", [1, 2, 3, 4]);
        c.copy(view(a, 0, 2), view(b, 2, 2));
        c.reduceInto(view(a), view(b), ReduceOp.SUM);
        c.scale(view(a), view(a), 1, 2);
        await c.synchronize();
        return (a as ReturnType<typeof zeros>).values();
      },
      { trace },
    );
    expect(got).toEqual([2, 3, 1.5, 2]);
    expect(trace.events.map((e) => e.kind)).toEqual(["copy", "reduce", "scale"]);
    expect(trace.events[0]).toMatchObject({ rank: 0, count: 2, bytes: 8, dtype: "float32" });
  });
});

/** A small all-to-all plus ring: enough ready events per round for the seed to matter. */
async function busyRun(seed: number, chaos = false): Promise<string> {
  const trace = new Trace();
  await spawn(
    5,
    async (c) => {
      const ops = [];
      for (let p = 0; p < c.size; p++) {
        ops.push(c.isend(view(tensor("int32", [c.rank, p])), p, { label: `a2a ${c.rank}->${p}` }));
        ops.push(c.irecv(view(zeros("int32", 2)), p));
      }
      for (const w of ops) await w.wait();
      const next = (c.rank + 1) % c.size;
      const prev = (c.rank + c.size - 1) % c.size;
      for (let s = 0; s < 3; s++) {
        await c.group([
          { kind: "send", peer: next, view: view(tensor("int32", [s])) },
          { kind: "recv", peer: prev, view: view(zeros("int32", 1)) },
        ]);
      }
    },
    { seed, chaos, trace },
  );
  return JSON.stringify(trace);
}

describe("determinism", () => {
  it("the same seed gives a byte-identical trace; different seeds give different interleavings", async () => {
    expect(await busyRun(1)).toBe(await busyRun(1));
    expect(await busyRun(3, true)).toBe(await busyRun(3, true));
    const traces = new Set<string>();
    for (let seed = 1; seed <= 6; seed++) traces.add(await busyRun(seed));
    expect(traces.size).toBeGreaterThan(1);
  });

  it("chaos spreads completions over more rounds than the plain scheduler", async () => {
    const end = (json: string) => Math.max(...(JSON.parse(json) as { end: number }[]).map((e) => e.end));
    expect(end(await busyRun(5, true))).toBeGreaterThan(end(await busyRun(5)));
  });
});

describe("failure propagation", () => {
  it("a throwing rank: spawn rejects with RankError naming it, the others get AbortError, nothing hangs", async () => {
    const seen: unknown[] = [];
    const run = spawn(4, async (c) => {
      if (c.rank === 2) throw new Error("boom");
      try {
        await c.recv(view(zeros("float32", 1)), 2);
      } catch (e) {
        seen[c.rank] = e;
        // Later calls fail at once too.
        seen[c.rank + 10] = await c.send(view(zeros("float32", 1)), 0).catch((x: unknown) => x);
        throw e;
      }
    });
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RankError);
    expect((err as RankError).rank).toBe(2);
    expect((err as Error).message).toBe("rank 2 failed: Error: boom");
    for (const r of [0, 1, 3]) {
      expect(seen[r]).toBeInstanceOf(AbortError);
      expect((seen[r] as Error).message).toBe("aborted: rank 2 failed: Error: boom");
      expect(seen[r + 10]).toBeInstanceOf(AbortError);
    }
  });

  it("resolves with every rank's return value, in rank order", async () => {
    expect(await spawn(3, async (c) => c.rank * 2)).toEqual([0, 2, 4]);
  });

  it("validates its own arguments", async () => {
    await expect(spawn(0, async () => 0)).rejects.toThrow("spawn: argument 'n'");
    await expect(spawn(2, async () => 0, { semantics: "tcp" as Semantics })).rejects.toThrow("unknown semantics");
  });
});
