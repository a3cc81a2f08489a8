/**
 * The rendezvous store: its operations, its barrier, the dead-rank report, and its rules for
 * untrusted input: a protocol version and token in AUTH, one connection per rank for the whole
 * job, writes only to a rank's own keys, aborts stamped with the true sender, error replies for
 * what it refuses, and deadlines and caps before authentication. (The random-frame fuzz is in
 * test/faults/store-fuzz.test.ts.)
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidArgumentError, TimeoutError } from "../src/core/errors.js";
import { ABORT_KEY, deadKey, joinedKey, KeyTable, type KVStore, leftKey, parseAbort } from "../src/kvstore.js";
import {
  encodeFrame,
  MAGIC,
  MemoryStore,
  makeToken,
  OP,
  StoreClient,
  StoreServer,
  storeBarrier,
  VERSION,
} from "../src/runtime/store/index.js";
import { underLoad } from "./support/load.js";

let server: StoreServer;
let token: string;
const clients: StoreClient[] = [];

async function client(rank: number, maxFrame?: number): Promise<StoreClient> {
  const c = await StoreClient.connect({
    host: "127.0.0.1",
    port: server.port,
    token,
    role: { rank },
    timeoutMs: 3000,
    maxFrame,
  });
  clients.push(c);
  return c;
}

/** Opens a raw socket, writes `bytes` (then ends it if `end`), and resolves with what came back once it closed. */
function raw(bytes: Buffer, end = false): Promise<Buffer> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    const s: Socket = connect(server.port, "127.0.0.1", () => (end ? s.end(bytes) : s.write(bytes)));
    s.on("error", () => {});
    s.on("data", (d) => got.push(d));
    s.on("close", () => resolve(Buffer.concat(got)));
  });
}

const auth = (rank: number, t = token, version = VERSION) =>
  encodeFrame(OP.AUTH, 1, [MAGIC, version, t, "rank", String(rank)]);

beforeEach(async () => {
  token = makeToken();
  server = await StoreServer.start({ token, world: 8, maxFrame: 4096, authTimeoutMs: 300 });
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server.close();
});

function contract(name: string, make: () => Promise<KVStore>) {
  describe(`${name}: the KV contract`, () => {
    it("set/get, check, delete, add, setIfAbsent, in the rank's own keys", async () => {
      const s = await make();
      await s.set("rank/0/a", "1");
      expect((await s.get("rank/0/a")).toString()).toBe("1");
      expect(await s.check(["rank/0/a"])).toBe(true);
      expect(await s.check(["rank/0/a", "rank/0/b"])).toBe(false);
      expect(await s.delete("rank/0/a")).toBe(true);
      expect(await s.delete("rank/0/a")).toBe(false);
      expect(await s.add("rank/0/n", 5)).toBe(5);
      expect(await s.add("rank/0/n", -2)).toBe(3);
      expect((await s.setIfAbsent("rank/0/k", "first")).toString()).toBe("first");
      expect((await s.setIfAbsent("rank/0/k", "second")).toString()).toBe("first");
      const bin = new Uint8Array([0, 255, 10, 13]);
      await s.set("rank/0/bin", bin);
      expect([...(await s.get("rank/0/bin"))]).toEqual([0, 255, 10, 13]);
    });

    it("get and wait block until the key is set, and time out naming the key", async () => {
      const s = await make();
      const got = s.get("rank/0/later", 2000);
      const waited = s.wait(["rank/0/later", "rank/0/other"], 2000);
      await s.set("rank/0/later", "v");
      expect((await got).toString()).toBe("v");
      await s.set("rank/0/other", "w");
      await waited;
      const t0 = Date.now();
      await expect(s.wait(["never"], 100)).rejects.toThrow(TimeoutError);
      await expect(s.get("never", 100)).rejects.toThrow(/wait for never timed out after 0.1 s/);
      expect(Date.now() - t0).toBeLessThan(underLoad(2000));
    });

    it("add is atomic under concurrent callers", async () => {
      const s = await make();
      const results = await Promise.all(Array.from({ length: 50 }, () => s.add("rank/0/ctr", 1)));
      expect(new Set(results).size).toBe(50);
      expect(Math.max(...results)).toBe(50);
    });

    it("the first abort wins", async () => {
      const s = await make();
      expect(await s.abort(0, "rank 0 failed: boom")).toEqual({ rank: 0, reason: "rank 0 failed: boom" });
      expect((await s.abort(0, "later")).reason).toBe("rank 0 failed: boom");
      expect(parseAbort(await s.get(ABORT_KEY)).reason).toBe("rank 0 failed: boom");
    });
  });
}

contract("TCP store", () => client(0));
contract("MemoryStore", async () => new MemoryStore());

describe("barrier", () => {
  it("holds every rank until all arrive, and is reusable (generation-numbered), each rank writing only its keys", async () => {
    const size = 4;
    const cs = await Promise.all(Array.from({ length: size }, (_, r) => client(r)));
    for (let gen = 0; gen < 3; gen++) {
      const passed: number[] = [];
      const early = cs.slice(0, size - 1).map((c, r) => storeBarrier(c, r, "b", size, 3000).then(() => passed.push(r)));
      // Nobody passes before the last rank arrives: the first three have set their keys.
      await cs[0]!.wait(
        [0, 1, 2].map((r) => `rank/${r}/barrier/b/${gen}`),
        3000,
      );
      expect(passed).toEqual([]);
      await storeBarrier(cs[size - 1]!, size - 1, "b", size, 3000);
      await Promise.all(early);
      expect(passed.sort()).toEqual([0, 1, 2]);
    }
    // Each rank removed its previous generation's key.
    expect(await cs[0]!.check(["rank/3/barrier/b/0"])).toBe(false);
  });
});

describe("membership and failure detection", () => {
  it("records joins; publishes 'rank k died' (stamped k) when a rank's connection drops without goodbye, not after close()", async () => {
    const watcher = await client(0);
    const clean = await client(1);
    expect(await watcher.check([joinedKey(0), joinedKey(1)])).toBe(true);
    await clean.close();
    await watcher.wait([leftKey(1)], 2000);
    expect(await watcher.check([ABORT_KEY])).toBe(false);
    const doomed = await client(2);
    const t0 = Date.now();
    doomed.destroy(); // what a SIGKILL does: the socket goes away with no BYE
    const info = parseAbort(await watcher.get(ABORT_KEY, 3000));
    expect(info).toEqual({
      rank: 2,
      reason: "rank 2 died (its connection to the store closed without a goodbye: killed or crashed)",
    });
    expect(await watcher.check([deadKey(2)])).toBe(true);
    expect(Date.now() - t0).toBeLessThan(underLoad(1000));
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

describe("who may do what", () => {
  it("a rank joins once per job: a second process claiming a joined rank is refused, saying so", async () => {
    await client(3);
    await expect(client(3)).rejects.toThrow(/rank 3 already joined this job \(a second process claims to be rank 3\)/);
    await expect(client(8)).rejects.toThrow(/rank "8" is not a rank of this job \(0\.\.7\)/);
  });

  /** What rank 1 may not write, and the error it gets: the same from the TCP store and an in-process one. */
  async function refusesOthersKeys(c: KVStore): Promise<void> {
    await expect(c.set("rank/2/done", "1")).rejects.toThrow(
      new InvalidArgumentError(
        { op: "store set rank/2/done" },
        "rank 1 may write only keys under rank/1/, not 'rank/2/done'",
      ),
    );
    await expect(c.set(ABORT_KEY, "forged")).rejects.toThrow(/may write only keys under rank\/1\//);
    await expect(c.delete(joinedKey(0))).rejects.toThrow(/may write only keys under rank\/1\//);
    await expect(c.add("barrier/shared", 1)).rejects.toThrow(/may write only keys under rank\/1\//);
    await c.set("rank/1/x", "mine"); // and the store still serves
  }

  it("a rank writes only its own keys; job/ keys are the store's; the error names both", async () => {
    await refusesOthersKeys(await client(1));
    expect(server.rejected.get("write outside its own keys")).toBe(4);
  });

  it("an in-process store speaking for rank 1 (tests of several ranks in one process) holds it to the same rule", async () => {
    const table = new KeyTable();
    await refusesOthersKeys(new MemoryStore(table, 1000, 1));
    expect(table.read("rank/1/x")?.toString()).toBe("mine");
    await new MemoryStore(table, 1000).set("anything/at/all", "1"); // speaking for no rank: the server's own use
    // Its abort carries rank 1, whatever rank it claims, as the TCP store stamps a connection's.
    expect(await new MemoryStore(table, 1000, 1).abort(5, "forged")).toEqual({ rank: 1, reason: "forged" });
  });

  it("an abort carries the rank of the connection that sent it, whatever rank it claims", async () => {
    const liar = await client(5);
    const won = await liar.abort(0, "rank 0 failed: forged by rank 5");
    expect(won.rank).toBe(5);
    expect(parseAbort(await liar.get(ABORT_KEY)).rank).toBe(5);
  });

  it("a wrong token, an old protocol version, and a peer of another protocol each get a reason", async () => {
    await expect(
      StoreClient.connect({
        host: "127.0.0.1",
        port: server.port,
        token: "x".repeat(32),
        role: { rank: 0 },
        timeoutMs: 1000,
      }),
    ).rejects.toThrow(/refused this client: wrong token \(CCLAB_STORE_TOKEN differs from the launcher's\)/);
    const reply = await raw(auth(0, token, "1"));
    expect(reply.toString("latin1")).toContain(`protocol version "1"; this store speaks ${MAGIC}/${VERSION}`);
    const old = await raw(encodeFrame(OP.AUTH, 1, [token, "0"])); // cclab-store/1's AUTH
    expect(old.toString("latin1")).toContain("AUTH with 2 fields");
  });

  it("unknown ops get an error reply (before AUTH the connection is then closed; after it, it is kept)", async () => {
    const before = await raw(encodeFrame(77, 9, []));
    expect(before.toString("latin1")).toContain("unknown op 77 before AUTH");
    const c = await StoreClient.connect({ host: "127.0.0.1", port: server.port, token, role: { rank: 0 } });
    const sock = (c as unknown as { socket: Socket }).socket;
    // A raw frame on the authenticated connection: the client has no pending id 4242, so read it off the socket.
    sock.removeAllListeners("data");
    const reply = new Promise<Buffer>((r) => sock.once("data", r));
    sock.write(encodeFrame(77, 4242, []));
    expect((await reply).toString("latin1")).toContain(`unknown op 77 (this store speaks ${MAGIC}/${VERSION})`);
    expect(sock.destroyed).toBe(false);
    c.destroy();
  });
});

describe("bounds before authentication", () => {
  it("an AUTH deadline closes a connection that says nothing", async () => {
    const t0 = Date.now();
    const got = await raw(Buffer.alloc(0));
    expect(got.toString("latin1")).toContain("no AUTH within 0.3 s");
    expect(Date.now() - t0).toBeLessThan(underLoad(2000));
  });

  it("a frame larger than an AUTH is refused before AUTH, without buffering it", async () => {
    const big = Buffer.alloc(8);
    big.writeUInt32BE(2048, 0);
    expect((await raw(big)).toString("latin1")).toContain("frame of 2048 bytes is over the limit of 1024 before AUTH");
    // After AUTH the limit is maxFrame (4096 here): an authenticated client sending more is cut off.
    const c = await client(0, 1 << 20);
    await expect(c.set("rank/0/big", Buffer.alloc(8192))).rejects.toThrow(
      /store at 127.0.0.1:\d+ closed this connection: frame of \d+ bytes is over the limit of 4096/,
    );
  });

  it("evicts the oldest connections waiting to authenticate, telling each it was shed; authenticated clients keep working", async () => {
    const good = await client(0);
    const idle: Socket[] = [];
    const shed = new Map<number, string>();
    // 40 connections that never authenticate: each past the 16th evicts the oldest still waiting.
    await new Promise<void>((done) => {
      for (let i = 0; i < 40; i++) {
        const s = connect(server.port, "127.0.0.1");
        const got: Buffer[] = [];
        s.on("data", (d) => got.push(d));
        s.on("error", () => {});
        s.on("close", () => {
          shed.set(i, Buffer.concat(got).subarray(13).toString("utf8"));
          if (shed.size === 24) done();
        });
        idle.push(s);
      }
    });
    await good.set("rank/0/ok", "1");
    expect([...shed.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(shed.get(0)).toMatch(
      /^busy: evicted after \d+\.\d s without AUTH: a newer connection needed the room \(at most 16/,
    );
    expect(server.usage.connections).toBe(16 + 1);
    expect(server.rejected.get("evicted: too many connections waiting to authenticate")).toBe(24);
    for (const s of idle) s.destroy();
  });

  it("64 idle connections held open before the ranks connect: all 8 ranks still join at once", async () => {
    // Its own store with the default AUTH deadline; the idle connections stay open throughout.
    const own = await StoreServer.start({ token, world: 8 });
    const idle: Socket[] = [];
    try {
      await Promise.all(
        Array.from(
          { length: 64 },
          () =>
            new Promise<void>((up) => {
              const s = connect(own.port, "127.0.0.1", () => up());
              s.on("error", () => {});
              idle.push(s);
            }),
        ),
      );
      const t0 = Date.now();
      const ranks = await Promise.all(
        Array.from({ length: 8 }, (_, rank) =>
          StoreClient.connect({ host: "127.0.0.1", port: own.port, token, role: { rank }, timeoutMs: 5000 }),
        ),
      );
      await Promise.all(ranks.map((c, r) => storeBarrier(c, r, "joined", 8, 5000)));
      expect(Date.now() - t0).toBeLessThan(underLoad(2000));
      for (const c of ranks) await c.close();
    } finally {
      for (const s of idle) s.destroy();
      await own.close();
    }
  });
});

describe("a client against what is not a store", () => {
  let other: Server;
  afterEach(() => new Promise<void>((r) => other.close(() => r())));

  async function listen(onConnection: (s: Socket) => void): Promise<number> {
    other = createServer(onConnection);
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", () => r()));
    return (other.address() as { port: number }).port;
  }

  it("a peer that accepts and never answers: AUTH times out within the client's timeout, saying so", async () => {
    const held: Socket[] = [];
    const port = await listen((s) => held.push(s));
    const t0 = Date.now();
    await expect(
      StoreClient.connect({ host: "127.0.0.1", port, token, role: { rank: 0 }, timeoutMs: 300 }),
    ).rejects.toThrow(/accepted the connection but did not answer AUTH within 0.3 s/);
    expect(Date.now() - t0).toBeLessThan(underLoad(1500));
    for (const s of held) s.destroy();
  });

  it("a store that sheds every connection before AUTH (busy): the client connects again, then names it at its deadline", async () => {
    let connections = 0;
    const port = await listen((s) => {
      connections++;
      s.resume();
      s.end(encodeFrame(2, 0, ["busy: evicted after 0.0 s without AUTH: a newer connection needed the room"]));
    });
    await expect(
      StoreClient.connect({ host: "127.0.0.1", port, token, role: { rank: 0 }, timeoutMs: 500 }),
    ).rejects.toThrow(/refused this connection \d+ times in 0.5 s \(last: store at 127.0.0.1:\d+: busy: evicted/);
    expect(connections).toBeGreaterThan(1);
  });

  it("a peer speaking another protocol is named as not a cclab store, with what it sent", async () => {
    const port = await listen((s) => {
      s.resume();
      s.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    });
    await expect(
      StoreClient.connect({ host: "127.0.0.1", port, token, role: { rank: 0 }, timeoutMs: 1000 }),
    ).rejects.toThrow(/is not a cclab-store server \(it sent "HTTP\/1.1 400 Bad/);
  });
});
