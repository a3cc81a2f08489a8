/**
 * Where a rank meets its store (src/runtime/env.ts): CCLAB_STORE_TOKEN over TCP, and with no token
 * on one host a Unix-domain socket in a directory only this user can enter, so another user can
 * neither reach the store nor claim a rank's place in it. (The fault catalogue's torchrun-no-token
 * row runs two ranks this way end to end.)
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readJobEnv, SOCKET_TOKEN, storeEndpoint, userSocketDir } from "../src/runtime/env.js";
import { StoreClient, StoreServer } from "../src/runtime/store/index.js";

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "cclab-rdv-"));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const uid = process.getuid?.() ?? 0;
const torchrun = (rank: number, extra: NodeJS.ProcessEnv = {}) =>
  readJobEnv({ RANK: String(rank), WORLD_SIZE: "2", MASTER_ADDR: "127.0.0.1", MASTER_PORT: "29577", ...extra });

describe("the store's endpoint", () => {
  it("with CCLAB_STORE_TOKEN: TCP at MASTER_PORT, with that token", () => {
    const token = "0123456789abcdef0123456789abcdef";
    const at = storeEndpoint(torchrun(1, { CCLAB_STORE_TOKEN: token }), { TMPDIR: tmp });
    expect(at).toEqual({ host: "127.0.0.1", port: 29577, token });
  });

  it("with no token on one host: a socket in $TMPDIR/cclab-<uid>, made 0700, named by the port", () => {
    const at = storeEndpoint(torchrun(1), { TMPDIR: tmp });
    expect(at.path).toBe(join(tmp, `cclab-${uid}`, "store-29577.sock"));
    expect(at.token).toBe(SOCKET_TOKEN);
    expect(spawnSync("stat", ["-c", "%a", join(tmp, `cclab-${uid}`)], { encoding: "utf8" }).stdout.trim()).toBe("700");
  });

  it("refuses a directory open to others, a link, or a file in its place, naming it", () => {
    const dir = join(tmp, `cclab-${uid}`);
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    expect(() => userSocketDir({ TMPDIR: tmp }, 1)).toThrow(
      `rank 1: init: argument 'MASTER_PORT': the one-host store's directory ${dir} is open to other users (mode 755, not 700)`,
    );
    rmSync(dir, { recursive: true });
    mkdirSync(join(tmp, "elsewhere"), { mode: 0o700 });
    symlinkSync(join(tmp, "elsewhere"), dir);
    expect(() => userSocketDir({ TMPDIR: tmp })).toThrow(/is not a directory \(a link, or a file\)/);
    rmSync(dir);
    writeFileSync(dir, "");
    expect(() => userSocketDir({ TMPDIR: tmp })).toThrow(/is not a directory/);
  });

  it("ranks on several hosts with no token are told to export one", () => {
    const job = readJobEnv({ RANK: "1", WORLD_SIZE: "2", MASTER_ADDR: "10.255.255.1", MASTER_PORT: "29577" });
    expect(() => storeEndpoint(job, { TMPDIR: tmp })).toThrow(/needs a token: export CCLAB_STORE_TOKEN/);
  });
});

describe("a store on the user's socket", () => {
  it("ranks join through it; a stale socket file is replaced; nothing listens on TCP", async () => {
    const at = storeEndpoint(torchrun(0), { TMPDIR: tmp });
    const path = at.path!;
    // A socket file a killed job left behind (nothing answers there).
    writeFileSync(path, "");
    const server = await StoreServer.start({ token: at.token, world: 2, path });
    try {
      const clients = await Promise.all(
        [0, 1].map((rank) => StoreClient.connect({ ...at, role: { rank }, timeoutMs: 3000 })),
      );
      await clients[1]!.set("rank/1/x", "1");
      expect((await clients[0]!.get("rank/1/x", 1000)).toString()).toBe("1");
      const refused = await new Promise<string>((resolve) => {
        const s = connect(at.port, "127.0.0.1", () => resolve("connected"));
        s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? ""));
      });
      expect(refused).toBe("ECONNREFUSED");
      for (const c of clients) await c.close();
    } finally {
      await server.close();
    }
  });

  it("a second store on the same socket (a job of this user on the same MASTER_PORT) is refused, saying so", async () => {
    const at = storeEndpoint(torchrun(0), { TMPDIR: tmp });
    const server = await StoreServer.start({ token: at.token, world: 2, path: at.path! });
    try {
      await expect(StoreServer.start({ token: at.token, world: 2, path: at.path! })).rejects.toThrow(
        `another store already listens at ${at.path}`,
      );
    } finally {
      await server.close();
    }
  });

  it.skipIf(uid !== 0)("another user cannot connect to it (EACCES), so cannot claim a rank", async () => {
    // TMPDIR must be one the other user could enter, were it not for the 0700 directory.
    chmodSync(tmp, 0o755);
    const at = storeEndpoint(torchrun(0), { TMPDIR: tmp });
    const server = await StoreServer.start({ token: at.token, world: 2, path: at.path! });
    try {
      const code =
        "const s=require('node:net').connect(process.argv[1],()=>{console.log('connected');process.exit(0)});" +
        "s.on('error',e=>{console.log(e.code);process.exit(0)})";
      const r = spawnSync(process.execPath, ["-e", code, at.path!], { uid: 65534, gid: 65534, encoding: "utf8" });
      expect(r.stdout.trim()).toBe("EACCES");
    } finally {
      await server.close();
    }
  });
});
