/**
 * Timeouts, aborts, checked mode and fault injection on simulated ranks (one process): the guard
 * turns a stuck operation into TimeoutError on its rank and AbortError on the others, checked mode
 * fails every rank on a mismatched call before data moves, and faults do what their specs say.
 */
import { describe, expect, it } from "vitest";
import type { Comm } from "../src/comm.js";
import { zeros } from "../src/core/buffer.js";
import { AbortError, InvalidArgumentError, MismatchError, RankError, TimeoutError } from "../src/core/errors.js";
import { checkFingerprint, compareFingerprints, type Fingerprint } from "../src/runtime/checked.js";
import { countDelta, InjectedFault, parseFaults, withFaults } from "../src/runtime/faults.js";
import { AbortWatch, defaultTimeoutMs, GuardedComm, guard } from "../src/runtime/guard.js";
import { MemoryStore, makeToken, StoreClient, StoreServer } from "../src/runtime/store/index.js";
import { spawn } from "../src/sim/index.js";

const one = (comm: Comm) => ({ buffer: comm.alloc("int32", 1), offset: 0, count: 1 });

/** Settles with the outcome and the time it settled, so tests can compare when ranks failed. */
async function outcome(p: Promise<unknown>): Promise<{ error: unknown; at: number }> {
  try {
    await p;
    return { error: undefined, at: Date.now() };
  } catch (error) {
    return { error, at: Date.now() };
  }
}

describe("guard: timeouts and aborts", () => {
  it("a stuck send times out on its rank (TimeoutError naming rank, op, peer, step); the others abort at once", async () => {
    const store = new MemoryStore();
    const watch = new AbortWatch(store);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const results: { error: unknown; at: number }[] = [];
    const t0 = Date.now();
    await outcome(
      spawn(3, async (raw) => {
        const comm = guard(raw, { store, rank: raw.rank, timeoutMs: 1000, watch });
        const v = one(comm);
        let p: Promise<void>;
        if (comm.rank === 0) p = comm.send(v, 1, { label: "allreduce/ring step 3" });
        else if (comm.rank === 2) p = comm.recv(v, 1, { label: "allreduce/ring step 3" });
        else {
          // Rank 1 is elsewhere (a long computation) until the others have failed.
          await gate;
          p = comm.recv(v, 0);
        }
        const o = await outcome(p);
        results[comm.rank] = o;
        if (comm.rank === 0) release();
        if (o.error) throw o.error;
      }),
    );
    const [r0, r1, r2] = results;
    expect(r0!.error).toBeInstanceOf(TimeoutError);
    expect((r0!.error as Error).message).toBe(
      "rank 0: send to peer 1 at 'allreduce/ring step 3' timed out after 1 s; the communicator is aborted",
    );
    expect(r0!.at - t0).toBeGreaterThanOrEqual(950);
    for (const r of [r1!, r2!]) {
      expect(r.error).toBeInstanceOf(AbortError);
      expect((r.error as Error).message).toMatch(
        /aborted: rank 0: send to peer 1 at 'allreduce\/ring step 3' timed out/,
      );
    }
    expect((r2!.error as Error).message).toMatch(/^rank 2: recv from peer 1 at 'allreduce\/ring step 3': aborted/);
    // The blocked peer fails within moments of the timeout, not after its own.
    expect(r2!.at - r0!.at).toBeLessThan(200);
    expect(watch.aborted?.rank).toBe(0);
  });

  it("publishes the abort through a TCP store, so a rank in another process would see it", async () => {
    const token = makeToken();
    const server = await StoreServer.start({ token, world: 2 });
    const c0 = await StoreClient.connect({ host: "127.0.0.1", port: server.port, token, role: { rank: 0 } });
    const c1 = await StoreClient.connect({ host: "127.0.0.1", port: server.port, token, role: { rank: 1 } });
    try {
      await outcome(
        spawn(2, async (raw) => {
          const store = raw.rank === 0 ? c0 : c1;
          const comm = guard(raw, { store, rank: raw.rank, timeoutMs: raw.rank === 0 ? 300 : 60_000 });
          // Both receive first: a real deadlock; only rank 0's short timeout ends it, rank 1 hears via the store.
          const o = await outcome(comm.recv(one(comm), 1 - raw.rank, { label: "step 0" }));
          if (raw.rank === 0) expect(o.error).toBeInstanceOf(TimeoutError);
          else
            expect((o.error as Error).message).toMatch(/^rank 1: recv from peer 0 at 'step 0': aborted: rank 0: recv/);
          throw o.error;
        }),
      );
    } finally {
      await c0.close();
      await c1.close();
      await server.close();
    }
  });

  it("later calls on an aborted comm fail at once; Work.wait and split are guarded too", async () => {
    const store = new MemoryStore();
    await outcome(
      spawn(2, async (raw) => {
        const comm = new GuardedComm(raw, { store, rank: raw.rank, timeoutMs: 5000 });
        if (raw.rank === 0) {
          const w = comm.irecv(one(comm), 1, { label: "tree step 1" });
          await comm.abort("rank 0 failed: Error: boom");
          await expect(w.wait()).rejects.toThrow(
            "rank 0: irecv from peer 1 at 'tree step 1': aborted: rank 0 failed: Error: boom",
          );
        } else {
          await expect(comm.recv(one(comm), 0)).rejects.toThrow(AbortError);
        }
        expect(() => comm.isend(one(comm), 1 - raw.rank)).toThrow(/aborted: rank 0 failed: Error: boom/);
        await expect(comm.split([0, 1])).rejects.toThrow(AbortError);
      }),
    );
  });

  it("a call that ends past its deadline fails even when its timer has not fired yet", async () => {
    const store = new MemoryStore();
    const watch = new AbortWatch(store);
    const errors: unknown[] = [];
    await outcome(
      spawn(1, async (raw) => {
        // The call's work holds the thread for 20 ms and settles before any timer can run: a
        // 5 ms deadline is past when it ends, and only the check at its end can see that.
        const slow = Object.create(raw) as Comm;
        slow.synchronize = () => {
          const until = performance.now() + 20;
          while (performance.now() < until);
          return Promise.resolve();
        };
        const comm = new GuardedComm(slow, { store, rank: 0, timeoutMs: 5, watch });
        errors.push((await outcome(comm.synchronize())).error);
        // A split that ends past its deadline fails the same way, and the communicator it made is released.
        let destroyed = 0;
        slow.split = () => {
          const until = performance.now() + 20;
          while (performance.now() < until);
          return Promise.resolve({ destroy: () => destroyed++ } as unknown as Comm);
        };
        const late = new GuardedComm(slow, { store: new MemoryStore(), rank: 0, timeoutMs: 5 });
        errors.push((await outcome(late.split([0]))).error);
        errors.push(destroyed);
        // A quick call under a long deadline still passes.
        const quick = new GuardedComm(raw, { store: new MemoryStore(), rank: 0, timeoutMs: 60_000 });
        errors.push((await outcome(quick.synchronize())).error);
      }),
    );
    expect(errors[0]).toBeInstanceOf(TimeoutError);
    expect((errors[0] as Error).message).toBe(
      "rank 0: synchronize timed out after 0.005 s; the communicator is aborted",
    );
    expect(watch.aborted?.rank).toBe(0);
    expect(errors[1]).toBeInstanceOf(TimeoutError);
    expect((errors[1] as Error).message).toBe("rank 0: split [0] timed out after 0.005 s; the communicator is aborted");
    expect(errors[2]).toBe(1);
    expect(errors[3]).toBeUndefined();
  });

  it("reads CCLAB_TIMEOUT in seconds and rejects nonsense", () => {
    expect(defaultTimeoutMs({})).toBe(300_000);
    expect(defaultTimeoutMs({ CCLAB_TIMEOUT: "2.5" })).toBe(2500);
    expect(() => defaultTimeoutMs({ CCLAB_TIMEOUT: "soon" })).toThrow(InvalidArgumentError);
    expect(() => defaultTimeoutMs({ CCLAB_TIMEOUT: "Infinity" })).toThrow(/positive, finite number of seconds/);
  });
});

describe("checked mode", () => {
  const fp = (over: Partial<Fingerprint> = {}): Fingerprint => ({
    seq: 0,
    collective: "allreduce",
    algorithm: "ring",
    count: 1024,
    dtype: "float32",
    op: "sum",
    root: -1,
    ...over,
  });

  async function everyRank(size: number, make: (rank: number) => Fingerprint) {
    const store = new MemoryStore();
    return Promise.all(
      Array.from({ length: size }, (_, r) => outcome(checkFingerprint(store, r, size, make(r), { timeoutMs: 2000 }))),
    );
  }

  it("passes matching calls, repeatedly on one store", async () => {
    const store = new MemoryStore();
    for (let seq = 0; seq < 3; seq++) {
      await Promise.all([0, 1, 2].map((r) => checkFingerprint(store, r, 3, fp({ seq }), { timeoutMs: 2000 })));
    }
    // Each rank removed its key of a call once every rank had moved past it.
    expect(await store.check(["rank/0/check/world/0", "rank/0/check/world/1"])).toBe(false);
    expect(await store.check(["rank/0/check/world/2"])).toBe(true);
  });

  it("a count mismatch fails on every rank, naming the ranks and values", async () => {
    const out = await everyRank(4, (r) => fp({ count: r === 3 ? 1025 : 1024 }));
    for (const [r, o] of out.entries()) {
      expect(o.error).toBeInstanceOf(MismatchError);
      expect((o.error as Error).message).toBe(
        `rank ${r}: allreduce #0: checked mode: ranks disagree on the call, no data moved: count (ranks 0, 1, 2: 1024; rank 3: 1025)`,
      );
    }
  });

  it("a root mismatch fails on every rank", async () => {
    const out = await everyRank(3, (r) => fp({ collective: "broadcast", op: "", root: r === 1 ? 2 : 0 }));
    for (const o of out) expect((o.error as Error).message).toMatch(/: root \(ranks 0, 2: 0; rank 1: 2\)$/);
  });

  it("names every differing field", () => {
    expect(compareFingerprints([fp(), fp({ dtype: "int32", op: "max" })])).toEqual([
      'dtype (rank 0: "float32"; rank 1: "int32")',
      'op (rank 0: "sum"; rank 1: "max")',
    ]);
  });

  it("a rank that never arrives is named in a TimeoutError", async () => {
    const store = new MemoryStore();
    const o = await outcome(checkFingerprint(store, 0, 2, fp(), { timeoutMs: 200 }));
    expect((o.error as Error).message).toMatch(
      /rank 0: allreduce #0: checked mode: rank 1 did not reach this collective/,
    );
  });
});

describe("faults", () => {
  it("parses specs, with exact errors", () => {
    expect(parseFaults(["kill:rank=2,at=3", "delay:rank=1,ms=500;count:rank=3,delta=-1,at=2"])).toEqual([
      { kind: "kill", rank: 2, at: 3 },
      { kind: "delay", rank: 1, ms: 500 },
      { kind: "count", rank: 3, delta: -1, at: 2 },
    ]);
    expect(() => parseFaults("explode:rank=1")).toThrow(
      `fault: argument 'spec': "explode:rank=1": unknown fault 'explode'`,
    );
    expect(() => parseFaults("kill:rank=1")).toThrow(/kill needs at=/);
    expect(() => parseFaults("kill:rank=1,at=0")).toThrow(/at counts operations from 1/);
    expect(() => parseFaults("delay:rank=1,ms=x")).toThrow(/ms must be a decimal integer/);
    expect(() => parseFaults("kill:rank=0x1,at=1")).toThrow(/rank must be a decimal integer, got '0x1'/);
    expect(countDelta(parseFaults("count:rank=3,delta=2"), 3)).toBe(2);
  });

  it("kill: the rank throws at its k-th operation and the others are aborted (sim)", async () => {
    const faults = parseFaults("kill:rank=2,at=2");
    const store = new MemoryStore();
    const watch = new AbortWatch(store);
    const errors: unknown[] = [];
    const o = await outcome(
      spawn(3, async (raw) => {
        const comm = guard(withFaults(raw, faults, { rank: raw.rank, mode: "throw" }), {
          store,
          rank: raw.rank,
          timeoutMs: 5000,
          watch,
        });
        const buf = zeros("int32", 1);
        const v = { buffer: buf, offset: 0, count: 1 };
        try {
          for (let i = 0; i < 3; i++) {
            if (comm.rank === 0) await comm.send(v, 1);
            if (comm.rank > 0) await comm.recv(v, comm.rank - 1);
            if (comm.rank === 1) await comm.send(v, 2);
          }
        } catch (e) {
          errors[comm.rank] = e;
          throw e;
        }
      }),
    );
    expect(o.error).toBeInstanceOf(RankError);
    expect((o.error as RankError).rank).toBe(2);
    expect((errors[2] as Error).message).toBe("injected fault: rank 2 killed at its operation 2 (recv from 1)");
    expect(errors[2]).toBeInstanceOf(InjectedFault);
    // The sim world aborts the others itself, naming the failed rank.
    expect(errors[1]).toBeInstanceOf(AbortError);
    expect((errors[1] as Error).message).toMatch(/rank 2/);
  });

  it("count: the rank's transfers are off by delta (a mismatch the backend reports), and so is what it announces", async () => {
    const faults = parseFaults("count:rank=1,delta=-1");
    const o = await outcome(
      spawn(2, async (raw) => {
        const announced: number[] = [];
        const recorder = Object.assign(Object.create(raw) as typeof raw, {
          beforeCollective: async (e: { count: number }) => void announced.push(e.count),
        });
        const comm = withFaults(recorder, faults, { rank: raw.rank, mode: "throw" });
        const event = {
          seq: 0,
          collective: "allreduce",
          algorithm: "ring",
          count: 8,
          dtype: "float32",
          op: "sum",
          root: -1,
        };
        await comm.beforeCollective?.(event);
        expect(announced).toEqual([raw.rank === 1 ? 7 : 8]);
        const v = { buffer: zeros("int32", 4), offset: 0, count: 4 };
        if (comm.rank === 0) await comm.send(v, 1);
        else await comm.recv(v, 0);
      }),
    );
    expect(String(o.error)).toMatch(/MismatchError|mismatch/i);
  });
});
