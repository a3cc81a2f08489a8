/**
 * Fuzz of the store protocol: random frames (random bytes, well-formed frames of random ops and
 * fields, oversized and truncated ones, AUTH with right and wrong tokens and roles) from fast-check
 * against a live StoreServer, alone or after a valid AUTH. The server must never crash, must stay
 * within its bounds (bytes held, connections, waits, this process's memory), and legitimate
 * clients (a rank with an outstanding wait, another doing writes and reads) must be unaffected.
 * Prints how many frames were tried.
 */
import { connect, type Socket } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFrame, MAGIC, makeToken, OP, StoreClient, StoreServer, VERSION } from "../../src/runtime/store/index.js";

const MAX_BYTES = 256 << 10;
let frames = 0;

/** A frame a fuzzer would send: one of several shapes, as raw bytes. */
function frameArb(token: string): fc.Arbitrary<Buffer> {
  const key = fc.oneof(
    fc.constantFrom("rank/1/x", "rank/0/done", "job/abort", "job/joined/2", "rank/2/k", "rank/1/", ""),
    fc.string({ maxLength: 40 }),
  );
  const field = fc.oneof(key, fc.uint8Array({ maxLength: 64 }), fc.constantFrom("inf", "0", "10", "-1", "1e9", token));
  const wellFormed = fc
    .record({
      op: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 255 })),
      id: fc.integer({ min: 0, max: 0xffffffff }),
      fields: fc.array(field, { maxLength: 6 }),
    })
    .map((f) => encodeFrame(f.op, f.id, f.fields));
  const auth = fc
    .record({
      magic: fc.constantFrom(MAGIC, "cclab", ""),
      version: fc.constantFrom(VERSION, "1", "3"),
      token: fc.constantFrom(token, "x".repeat(32), ""),
      role: fc.constantFrom("rank", "launcher", "admin"),
      index: fc.constantFrom("0", "1", "2", "3", "4", "-1", "99999999999", "01"),
    })
    .map((a) => encodeFrame(OP.AUTH, 1, [a.magic, a.version, a.token, a.role, a.index]));
  const oversized = fc.integer({ min: 1 << 16, max: 0xffffffff }).map((n) => {
    const b = Buffer.alloc(8);
    b.writeUInt32BE(n, 0);
    return b;
  });
  const truncated = fc
    .tuple(wellFormed, fc.nat())
    .map(([f, k]) => f.subarray(0, Math.max(1, k % Math.max(1, f.length))));
  return fc.oneof(fc.uint8Array({ maxLength: 200 }).map(Buffer.from), wellFormed, auth, oversized, truncated);
}

/** Writes the frames on a fresh connection, ends it, resolves once the server closed or answered all. */
function send(port: number, bytes: readonly Buffer[]): Promise<void> {
  frames += bytes.length;
  return new Promise((resolve) => {
    const s: Socket = connect(port, "127.0.0.1", () => {
      for (const b of bytes) s.write(b);
      s.end();
    });
    s.on("error", () => {});
    s.resume();
    s.on("close", () => resolve());
  });
}

describe("store protocol fuzz", () => {
  let server: StoreServer;
  let token: string;
  let rank0: StoreClient;
  let rank3: StoreClient;
  let waiting: Promise<Buffer>;
  let rss0: number;

  beforeAll(async () => {
    token = makeToken();
    server = await StoreServer.start({
      token,
      world: 4,
      nodes: 2,
      maxFrame: 1 << 16,
      maxBytes: MAX_BYTES,
      authTimeoutMs: 500,
    });
    const client = (rank: number) =>
      StoreClient.connect({ host: "127.0.0.1", port: server.port, token, role: { rank }, timeoutMs: 5000 });
    rank0 = await client(0);
    rank3 = await client(3);
    // A legitimate wait outstanding through the whole fuzz: it must be answered at the end.
    waiting = rank0.get("rank/3/after-the-fuzz", 120_000);
    rss0 = process.memoryUsage().rss;
  });

  afterAll(async () => {
    await rank0.close();
    await rank3.close();
    await server.close();
    console.log(`store fuzz: ${frames} frames tried against a live store`);
  });

  it("random frames, alone or after AUTH: never crashes, stays bounded, legitimate clients unaffected", async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(frameArb(token), { minLength: 1, maxLength: 8 }),
        fc.constantFrom("none", "rank1", "rank2", "launcher"),
        async (junk, prefix) => {
          // Ranks 1 and 2 may join only once per job: later tries are refused (and fuzz that path).
          const auth =
            prefix === "none"
              ? []
              : [
                  encodeFrame(OP.AUTH, 1, [
                    MAGIC,
                    VERSION,
                    token,
                    prefix === "launcher" ? "launcher" : "rank",
                    prefix === "launcher" ? "1" : prefix.slice(4),
                  ]),
                ];
          await send(server.port, [...auth, ...junk]);
          round++;
          // The legitimate clients are served, with their own data intact.
          await rank3.set("rank/3/round", String(round));
          expect((await rank0.get("rank/3/round", 5000)).toString()).toBe(String(round));
          expect(await rank0.add("rank/0/count", 1)).toBe(round);
          const u = server.usage;
          expect(u.bytes).toBeLessThanOrEqual(MAX_BYTES);
          expect(u.connections).toBeLessThanOrEqual(4 + 2 + 16);
          expect(u.waiting).toBeLessThanOrEqual(4 * 1024);
        },
      ),
      { numRuns: 1500 },
    );
    await rank3.set("rank/3/after-the-fuzz", "still here");
    expect((await waiting).toString()).toBe("still here");
    expect(process.memoryUsage().rss - rss0).toBeLessThan(200 << 20);
  });

  it("random requests from an authenticated rank (a fresh store each run): refused or served, never more", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frameArb(token), { minLength: 1, maxLength: 12 }), async (junk) => {
        const t = makeToken();
        const fresh = await StoreServer.start({ token: t, world: 2, maxFrame: 1 << 16, maxBytes: MAX_BYTES });
        try {
          const good = await StoreClient.connect({ host: "127.0.0.1", port: fresh.port, token: t, role: { rank: 0 } });
          await send(fresh.port, [encodeFrame(OP.AUTH, 1, [MAGIC, VERSION, t, "rank", "1"]), ...junk]);
          // Rank 1 may have written its own keys, or published an abort (stamped rank 1); nothing of rank 0's.
          await good.set("rank/0/mine", "intact");
          expect((await good.get("rank/0/mine", 1000)).toString()).toBe("intact");
          const keys = [...(fresh as unknown as { table: { data: Map<string, Buffer> } }).table.data.keys()];
          const foreign = keys.filter(
            (k) => !/^(rank\/1\/|rank\/0\/mine$|job\/(joined|dead|left)\/[01]$|job\/abort$)/.test(k),
          );
          expect(foreign).toEqual([]);
          expect(fresh.usage.bytes).toBeLessThanOrEqual(MAX_BYTES);
          await good.close();
        } finally {
          await fresh.close();
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a flood of connections that never authenticate: the oldest past the cap are evicted at once, the newest held; clients unaffected", async () => {
    // Its own store, whose AUTH deadline cannot expire during the flood (the fuzz's is 0.5 s).
    const t = makeToken();
    const own = await StoreServer.start({ token: t, world: 1, authTimeoutMs: 60_000 });
    const good = await StoreClient.connect({ host: "127.0.0.1", port: own.port, token: t, role: { rank: 0 } });
    const reason = "evicted: too many connections waiting to authenticate";
    const held: Socket[] = [];
    let closed = 0;
    try {
      await new Promise<void>((done) => {
        for (let i = 0; i < 60; i++) {
          const s = connect(own.port, "127.0.0.1");
          s.resume(); // read, so the server's close (after its ERROR reply) is seen
          s.on("error", () => {});
          s.on("close", () => ++closed === 60 - 16 && done());
          held.push(s);
        }
      });
      expect(await good.add("rank/0/n", 1)).toBe(1);
      expect(own.usage.connections).toBe(1 + 16);
      expect(own.rejected.get(reason)).toBe(60 - 16);
    } finally {
      for (const s of held) s.destroy();
      await good.close();
      await own.close();
    }
  });
});
