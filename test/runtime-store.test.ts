/**
 * The rendezvous store: its operations, its barrier, the dead-rank report, and that bad input
 * (wrong token, oversized frame, random garbage) closes only the offending connection.
 */
import { connect, type Socket } from "node:net";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TimeoutError } from "../src/core/errors.js";
import { abortKey, parseAbort } from "../src/runtime/guard.js";
import {
  encodeFrame,
  type KVStore,
  MemoryStore,
  makeToken,
  StoreClient,
  StoreServer,
  storeBarrier,
} from "../src/runtime/store.js";

let server: StoreServer;
let token: string;
const clients: StoreClient[] = [];

async function client(rank?: number, maxFrame?: number): Promise<StoreClient> {
  const c = await StoreClient.connect({ host: "127.0.0.1", port: server.port, token, rank, timeoutMs: 3000, maxFrame });
  clients.push(c);
  return c;
}

/** Opens a raw socket, writes `bytes` (then ends it if `end`), and resolves once the connection is closed. */
function rawUntilClosed(bytes: Buffer, end = false): Promise<void> {
  return new Promise((resolve) => {
    const s: Socket = connect(server.port, "127.0.0.1", () => (end ? s.end(bytes) : s.write(bytes)));
    s.on("error", () => {});
    s.resume(); // read (and drop) replies, or the end of the stream is never seen
    s.on("close", () => resolve());
  });
}

beforeEach(async () => {
  token = makeToken();
  server = await StoreServer.start({ token, abortKey: abortKey("t"), maxFrame: 4096 });
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server.close();
});

function contract(name: string, make: () => Promise<KVStore>) {
  describe(`${name}: the KV contract`, () => {
    it("set/get, check, delete, add, setIfAbsent", async () => {
      const s = await make();
      await s.set("a", "1");
      expect((await s.get("a")).toString()).toBe("1");
      expect(await s.check(["a"])).toBe(true);
      expect(await s.check(["a", "b"])).toBe(false);
      expect(await s.delete("a")).toBe(true);
      expect(await s.delete("a")).toBe(false);
      expect(await s.add("n", 5)).toBe(5);
      expect(await s.add("n", -2)).toBe(3);
      expect((await s.setIfAbsent("k", "first")).toString()).toBe("first");
      expect((await s.setIfAbsent("k", "second")).toString()).toBe("first");
      const bin = new Uint8Array([0, 255, 10, 13]);
      await s.set("bin", bin);
      expect([...(await s.get("bin"))]).toEqual([0, 255, 10, 13]);
    });

    it("get and wait block until the key is set, and time out naming the key", async () => {
      const s = await make();
      const got = s.get("later", 2000);
      const waited = s.wait(["later", "other"], 2000);
      await s.set("later", "v");
      expect((await got).toString()).toBe("v");
      await s.set("other", "w");
      await waited;
      const t0 = Date.now();
      await expect(s.wait(["never"], 100)).rejects.toThrow(TimeoutError);
      await expect(s.get("never", 100)).rejects.toThrow(/wait for never timed out after 0.1 s/);
      expect(Date.now() - t0).toBeLessThan(2000);
    });

    it("add is atomic under concurrent callers", async () => {
      const s = await make();
      const results = await Promise.all(Array.from({ length: 50 }, () => s.add("ctr", 1)));
      expect(new Set(results).size).toBe(50);
      expect(Math.max(...results)).toBe(50);
    });
  });
}

contract("TCP store", () => client());
contract("MemoryStore", async () => new MemoryStore());

describe("barrier", () => {
  it("holds every rank until all arrive, and is reusable (generation-numbered)", async () => {
    const size = 4;
    const cs = await Promise.all(Array.from({ length: size }, (_, r) => client(r)));
    for (let gen = 0; gen < 3; gen++) {
      const passed: number[] = [];
      const early = cs.slice(0, size - 1).map((c, r) => storeBarrier(c, "b", size, 3000).then(() => passed.push(r)));
      // Nobody passes before the last rank arrives: the count key says 3 have arrived.
      await cs[0]!.wait([`barrier/b/${gen}/count`], 3000);
      expect(passed).toEqual([]);
      await storeBarrier(cs[size - 1]!, "b", size, 3000);
      await Promise.all(early);
      expect(passed.sort()).toEqual([0, 1, 2]);
    }
  });
});

describe("failure detection", () => {
  it("publishes 'rank k died' when a rank's connection drops without goodbye, not after close()", async () => {
    const watcher = await client();
    const clean = await client(1);
    await clean.close();
    expect(await watcher.check([abortKey("t")])).toBe(false);
    const doomed = await client(2);
    const t0 = Date.now();
    // What a SIGKILL does: the socket goes away with no BYE.
    (doomed as unknown as { socket: Socket }).socket.destroy();
    const info = parseAbort(await watcher.get(abortKey("t"), 3000));
    expect(info.rank).toBe(2);
    expect(info.reason).toMatch(/rank 2 died/);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it("a client notices when the store goes away", async () => {
    const c = await client(0);
    const lost = new Promise<Error>((r) => c.onLost(r));
    const pending = c.wait(["never"], 10_000);
    await server.close();
    expect((await lost).message).toMatch(/lost the connection to the store/);
    await expect(pending).rejects.toThrow(/lost the connection/);
  });
});

describe("bad input closes that connection only", () => {
  it("rejects a wrong token", async () => {
    await expect(
      StoreClient.connect({ host: "127.0.0.1", port: server.port, token: "x".repeat(32), timeoutMs: 1000 }),
    ).rejects.toThrow(/refused this client/);
    expect(server.rejected.map((r) => r.reason)).toContain("wrong token");
    const good = await client();
    await good.set("still", "serving");
    expect((await good.get("still")).toString()).toBe("serving");
  });

  it("rejects a request before AUTH and an oversized frame, without buffering it", async () => {
    const good = await client();
    await rawUntilClosed(encodeFrame(2, 1, ["k", "v"])); // SET before AUTH
    const huge = Buffer.alloc(8);
    huge.writeUInt32BE(server.maxFrame + 1, 0);
    await rawUntilClosed(huge);
    // An authenticated client sending too much is cut off too.
    const big = await client(undefined, 1 << 20);
    await expect(big.set("big", Buffer.alloc(8192))).rejects.toThrow(/lost the connection/);
    expect(server.rejected.map((r) => r.reason)).toEqual([
      "first frame is not AUTH",
      "frame larger than 4096 bytes",
      "frame larger than 4096 bytes",
    ]);
    expect(await good.check(["k"])).toBe(false);
    expect(await good.add("n", 1)).toBe(1);
  });

  it("survives random garbage, authenticated or not (fuzz), and keeps serving good clients", async () => {
    const good = await client();
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.boolean(), async (junk, authFirst) => {
        const prefix = authFirst ? encodeFrame(1, 0, [token, "-1"]) : Buffer.alloc(0);
        // The junk may end inside a frame the server is still waiting for, so end our side too.
        await rawUntilClosed(Buffer.concat([prefix, Buffer.from(junk)]), true);
        expect(await good.add("alive", 1)).toBe(++round);
        expect((await good.get("alive")).toString()).toBe(String(round));
      }),
      { numRuns: 60 },
    );
    // Most of that junk was refused outright (bad frame, or no AUTH first), not just dropped at end.
    expect(server.rejected.length).toBeGreaterThan(30);
  });
});
