/**
 * Where a rank meets its store (src/runtime/env.ts): CCLAB_STORE_TOKEN over TCP, and with no token
 * on one host a Unix-domain socket in a directory made fresh for the job (socket-dir.ts) that only
 * this user can enter, so another user can neither reach the store nor claim a rank's place in it,
 * nor take the directory's name first. (The fault catalogue's torchrun-no-token and
 * socket-dir-squat rows run two ranks this way end to end.)
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readJobEnv, SOCKET_TOKEN, storeEndpoint } from "../src/runtime/env.js";
import {
  anotherStoreAnswers,
  claimJobSocket,
  findJobSockets,
  makeJobSocket,
  removeJobSocket,
  socketBase,
  socketPattern,
} from "../src/runtime/socket-dir.js";
import { StoreClient, StoreServer } from "../src/runtime/store/index.js";
import { underLoad } from "./support/load.js";

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

  it("with no token on one host: a socket under $TMPDIR, or $XDG_RUNTIME_DIR when that is the user's own", () => {
    expect(storeEndpoint(torchrun(1), { TMPDIR: tmp })).toEqual({
      host: "127.0.0.1",
      port: 29577,
      socketBase: tmp,
      token: SOCKET_TOKEN,
    });
    const xdg = join(tmp, "run");
    mkdirSync(xdg, { mode: 0o700 });
    expect(socketBase({ TMPDIR: tmp, XDG_RUNTIME_DIR: xdg })).toBe(xdg);
    // Open to others, a link, or relative: not the user's own runtime directory; $TMPDIR instead.
    chmodSync(xdg, 0o755);
    expect(socketBase({ TMPDIR: tmp, XDG_RUNTIME_DIR: xdg })).toBe(tmp);
    symlinkSync(tmp, join(tmp, "link"));
    expect(socketBase({ TMPDIR: tmp, XDG_RUNTIME_DIR: join(tmp, "link") })).toBe(tmp);
    expect(socketBase({ TMPDIR: tmp, XDG_RUNTIME_DIR: "run" })).toBe(tmp);
  });

  it("the store's host makes a fresh directory per job: a random name, 0700, removed after", () => {
    const a = makeJobSocket(tmp, 29577);
    const b = makeJobSocket(tmp, 29577);
    expect(a).not.toBe(b);
    for (const path of [a, b]) {
      expect(path).toMatch(new RegExp(`^${tmp}/cclab-${uid}-29577-[A-Za-z0-9]{6}/store\\.sock$`));
      expect(lstatSync(join(path, "..")).mode & 0o777).toBe(0o700);
    }
    expect(socketPattern(tmp, 29577)).toBe(join(tmp, `cclab-${uid}-29577-*`, "store.sock"));
    removeJobSocket(a);
    expect(() => lstatSync(join(a, ".."))).toThrow(/ENOENT/);
  });

  it("a neighbour's squat stops nothing: the old fixed name, lookalikes of the job's directory", async () => {
    chmodSync(tmp, 0o1777);
    // The name older versions used: another user's directory (as root), else a file.
    const fixed = join(tmp, `cclab-${uid}`);
    if (uid === 0) {
      mkdirSync(fixed, { mode: 0o777 });
      chownSync(fixed, 65534, 65534);
    } else writeFileSync(fixed, "");
    // Lookalikes of the job's directory: open to others, a link, a file; each holds (or is) a trap.
    const open = join(tmp, `cclab-${uid}-29577-OPENxx`);
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    const trap = await StoreServer.start({ token: SOCKET_TOKEN, world: 2, path: join(open, "store.sock") });
    const mine = mkdtempSync(join(tmp, "elsewhere-"));
    symlinkSync(mine, join(tmp, `cclab-${uid}-29577-LINKxx`));
    writeFileSync(join(tmp, `cclab-${uid}-29577-FILExx`), "");
    const job = torchrun(0, {});
    const at = storeEndpoint(job, { TMPDIR: tmp });
    const path = makeJobSocket(at.socketBase!, at.port, 0);
    const server = await StoreServer.start({ token: at.token, world: 2, path });
    try {
      expect(findJobSockets(tmp, 29577)).toEqual([path]);
      const clients = await Promise.all(
        [0, 1].map((rank) =>
          StoreClient.connect({
            host: at.host,
            port: at.port,
            token: at.token,
            locate: { find: () => findJobSockets(tmp, 29577), where: socketPattern(tmp, 29577) },
            role: { rank },
            timeoutMs: 3000,
          }),
        ),
      );
      expect(clients.map((c) => c.where)).toEqual([path, path]);
      await clients[1]!.set("rank/1/x", "1");
      expect((await clients[0]!.get("rank/1/x", 1000)).toString()).toBe("1");
      for (const c of clients) await c.close();
    } finally {
      await server.close();
      await trap.close();
    }
  });

  it("ranks on several hosts with no token are told to export one", () => {
    const job = readJobEnv({ RANK: "1", WORLD_SIZE: "2", MASTER_ADDR: "10.255.255.1", MASTER_PORT: "29577" });
    expect(() => storeEndpoint(job, { TMPDIR: tmp })).toThrow(/needs a token: export CCLAB_STORE_TOKEN/);
  });
});

describe("a store on the user's socket", () => {
  const local = (rank: number, at: ReturnType<typeof storeEndpoint>, timeoutMs = 3000) =>
    StoreClient.connect({
      host: at.host,
      port: at.port,
      token: at.token,
      locate: { find: () => findJobSockets(tmp, at.port), where: socketPattern(tmp, at.port) },
      role: { rank },
      timeoutMs,
    });

  it("ranks join through it, waiting for it to appear; a dead job's socket is passed over; nothing listens on TCP", async () => {
    const at = storeEndpoint(torchrun(0), { TMPDIR: tmp });
    // A socket a killed job left behind (nothing answers there).
    const stale = makeJobSocket(tmp, at.port);
    const dead = await StoreServer.start({ token: at.token, world: 2, path: stale });
    await dead.close();
    writeFileSync(stale, "");
    // The ranks start before the store's host does.
    const joining = Promise.all([0, 1].map((rank) => local(rank, at)));
    await new Promise((r) => setTimeout(r, 100));
    const server = await StoreServer.start({ token: at.token, world: 2, path: makeJobSocket(tmp, at.port) });
    try {
      const clients = await joining;
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

  it("a second job of this user on the same MASTER_PORT is told another store already answers there", async () => {
    const path = makeJobSocket(tmp, 29577);
    const server = await StoreServer.start({ token: SOCKET_TOKEN, world: 2, path });
    try {
      expect(await anotherStoreAnswers(tmp, 29577)).toBe(path);
      expect(await anotherStoreAnswers(tmp, 29578)).toBeUndefined();
    } finally {
      await server.close();
    }
    expect(await anotherStoreAnswers(tmp, 29577)).toBeUndefined();
  });

  it("two jobs' hosts started together on one MASTER_PORT: exactly one goes on, the other is refused; ranks find the one", async () => {
    // Each host in a process of its own, as two jobs' rank 0 are: make, listen, claim.
    const host = `
      import { claimJobSocket, makeJobSocket } from ${JSON.stringify(join(process.cwd(), "src/runtime/socket-dir.ts"))};
      import { StoreServer } from ${JSON.stringify(join(process.cwd(), "src/runtime/store/index.ts"))};
      const [base, token] = process.argv.slice(-2);
      const path = makeJobSocket(base, 29577, 0);
      const server = await StoreServer.start({ token, world: 2, path });
      try {
        console.log("on", await claimJobSocket(path, 29577, 0));
        await new Promise((r) => process.stdin.once("data", r));
      } catch (e) {
        console.log("refused", e.message);
      }
      await server.close();
    `;
    const run = () => {
      const p = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", host, tmp, SOCKET_TOKEN]);
      // The refused host ends without reading its stdin: the "done" written to it at the end may
      // meet a closed pipe (EPIPE), which says nothing about the store.
      p.stdin.on("error", () => {});
      let out = "";
      p.stdout.on("data", (d) => (out += d));
      p.stderr.on("data", (d) => (out += d));
      const line = new Promise<string>((resolve) => {
        p.stdout.on("data", () => out.includes("\n") && resolve(out.trim()));
        p.on("exit", () => resolve(out.trim()));
      });
      return { p, line };
    };
    for (let round = 0; round < 3; round++) {
      const jobs = [run(), run()];
      try {
        const lines = await Promise.all(jobs.map((j) => j.line));
        const on = lines.filter((l) => l.startsWith("on "));
        const refused = lines.filter((l) => l.startsWith("refused "));
        expect(on).toHaveLength(1);
        expect(refused).toHaveLength(1);
        expect(refused[0]).toMatch(
          /^refused rank 0: init: argument 'MASTER_PORT': could not host the store: another store already listens at .*\(a job of this user with the same MASTER_PORT 29577\?\); give this job another MASTER_PORT/,
        );
        // The one that goes on is the one every rank finds: the refused one's socket is gone.
        const winner = on[0]!.slice(3);
        expect(findJobSockets(tmp, 29577)).toEqual([winner]);
        const rank1 = await StoreClient.connect({
          host: "127.0.0.1",
          port: 29577,
          token: SOCKET_TOKEN,
          locate: { find: () => findJobSockets(tmp, 29577), where: socketPattern(tmp, 29577) },
          role: { rank: 1 },
          timeoutMs: 3000,
        });
        expect(rank1.where).toBe(winner);
        await rank1.close();
      } finally {
        for (const j of jobs) j.p.stdin.end("done");
        await Promise.all(jobs.map((j) => new Promise((r) => (j.p.exitCode !== null ? r(0) : j.p.on("exit", r)))));
      }
    }
  }, 60_000);

  it("end to end: two jobs' rank 0 (torchrun-style) started together on one MASTER_PORT, one is refused at once", async () => {
    const rank0 = () => {
      const p = spawn(
        process.execPath,
        [
          "src/cli/bin.js",
          "run",
          "-n",
          "2",
          "--backend",
          "mpi",
          "--timeout",
          "30",
          "test/faults/programs/scenario.ts",
          "allreduce",
        ],
        {
          env: {
            ...process.env,
            RANK: "0",
            WORLD_SIZE: "2",
            MASTER_ADDR: "127.0.0.1",
            MASTER_PORT: "29581",
            TMPDIR: tmp,
          },
        },
      );
      let err = "";
      p.stderr.on("data", (d) => (err += d));
      return { p, exited: new Promise<string>((resolve) => p.on("exit", (code) => resolve(`exit ${code}: ${err}`))) };
    };
    const jobs = [rank0(), rank0()];
    // Two Node processes with tsx and MPI start in about 3 s alone; at a load of 28 on 2 cores one
    // run took 21.7 s to be refused.
    const bound = underLoad(20_000);
    try {
      // Before: both listened, each waiting for a rank 1 that one of them would take, until the timeout.
      const first = await Promise.race([
        ...jobs.map((j) => j.exited),
        new Promise<string>((r) => setTimeout(() => r(`neither refused in ${bound / 1000} s`), bound)),
      ]);
      expect(first).toMatch(/^exit 1: /);
      expect(first).toContain("argument 'MASTER_PORT': could not host the store: another store already listens at");
      expect(jobs.filter((j) => j.p.exitCode === null)).toHaveLength(1);
    } finally {
      for (const j of jobs) if (j.p.exitCode === null) j.p.kill();
      await Promise.all(jobs.map((j) => j.exited));
    }
  }, 150_000);

  it("a later host refuses while the first job's store answers; a dead job's directory is removed, not joined", async () => {
    const first = makeJobSocket(tmp, 29577);
    const a = await StoreServer.start({ token: SOCKET_TOKEN, world: 2, path: first });
    const claimed = await claimJobSocket(first, 29577);
    const second = makeJobSocket(tmp, 29577);
    const b = await StoreServer.start({ token: SOCKET_TOKEN, world: 2, path: second });
    await expect(claimJobSocket(second, 29577)).rejects.toThrow(`another store already listens at ${claimed}`);
    // The refused host's directory is gone at once: no rank finds its store.
    expect(() => lstatSync(join(second, ".."))).toThrow(/ENOENT/);
    await b.close();
    // The first job dies without cleaning up (its directory stays, nothing answers): the next host
    // removes the directory and goes on.
    await a.close();
    expect(lstatSync(join(claimed, "..")).isDirectory()).toBe(true);
    const third = makeJobSocket(tmp, 29577);
    const c = await StoreServer.start({ token: SOCKET_TOKEN, world: 2, path: third });
    try {
      const mine = await claimJobSocket(third, 29577);
      expect(() => lstatSync(join(claimed, ".."))).toThrow(/ENOENT/);
      expect(findJobSockets(tmp, 29577)[0]).toBe(mine);
    } finally {
      await c.close();
    }
  });

  it("with no store there, a rank's wait names where it looked", async () => {
    const at = storeEndpoint(torchrun(1), { TMPDIR: tmp });
    await expect(local(1, at, 300)).rejects.toThrow(`waiting for master ${socketPattern(tmp, at.port)}`);
  });

  it.skipIf(uid !== 0)("another user cannot connect to it (EACCES), so cannot claim a rank", async () => {
    // TMPDIR must be one the other user could enter, were it not for the 0700 directory.
    chmodSync(tmp, 0o755);
    const path = makeJobSocket(tmp, 29577);
    const server = await StoreServer.start({ token: SOCKET_TOKEN, world: 2, path });
    try {
      const code =
        "const s=require('node:net').connect(process.argv[1],()=>{console.log('connected');process.exit(0)});" +
        "s.on('error',e=>{console.log(e.code);process.exit(0)})";
      const r = spawnSync(process.execPath, ["-e", code, path], { uid: 65534, gid: 65534, encoding: "utf8" });
      expect(r.stdout.trim()).toBe("EACCES");
    } finally {
      await server.close();
    }
  });
});
