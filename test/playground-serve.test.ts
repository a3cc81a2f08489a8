/**
 * `cclab playground --serve` against a real server on 127.0.0.1 at a port the OS picks: the
 * site's own files only (not every file under -o), no symbolic link followed, no traversal, and
 * only Host: localhost / 127.0.0.1 / [::1] or a --host name, each with the port (DNS rebinding).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request, type Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SITE_FILES } from "../src/playground/build.js";
import { allowedHosts, serveSite } from "../src/playground/serve.js";

const root = mkdtempSync(join(tmpdir(), "cclab-serve-"));
const site = join(root, "site");
const secret = join(root, "secret.txt");
let server: Server;
let port: number;

beforeAll(async () => {
  mkdirSync(join(site, "assets"), { recursive: true });
  for (const f of SITE_FILES) writeFileSync(join(site, f), `the site's ${f}`);
  writeFileSync(secret, "outside the site");
  // Under -o but not the site's: a file the user keeps there, and links out of it.
  writeFileSync(join(site, "notes.txt"), "mine, not the site's");
  writeFileSync(join(site, "assets", "extra.js"), "not built by cclab");
  const r = await serveSite(site, 0, { hosts: ["devbox.local"] });
  server = r.server;
  port = Number(new URL(r.url).port);
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(root, { recursive: true, force: true });
});

/** One request with the raw path and Host header given (no client normalises them). */
function get(path: string, host = `127.0.0.1:${port}`, method = "GET"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // host "": no Host header at all.
    const headers = host === "" ? {} : { host };
    const req = request({ host: "127.0.0.1", port, path, method, headers, setHost: host !== "" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** One raw request, as bytes on the wire (targets and headers no client would send); the whole answer. */
function raw(at: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(at, "127.0.0.1", () => s.end(text));
    let out = "";
    s.setEncoding("utf8");
    s.on("data", (d) => (out += d));
    s.on("close", () => resolve(out));
    s.on("error", reject);
  });
}

/** A site of its own in a fresh folder, served on a port the OS picks. */
async function ownSite(
  name: string,
  fill: (dir: string) => void,
): Promise<{ dir: string; server: Server; port: number }> {
  const dir = join(root, name);
  mkdirSync(join(dir, "assets"), { recursive: true });
  for (const f of SITE_FILES) writeFileSync(join(dir, f), `the site's ${f}`);
  fill(dir);
  const r = await serveSite(dir, 0);
  return { dir, server: r.server, port: Number(new URL(r.url).port) };
}

describe("playground --serve", () => {
  it("listens on 127.0.0.1 only, at the port the OS gave", () => {
    const a = server.address();
    expect(typeof a === "object" && a?.address).toBe("127.0.0.1");
    expect(port).toBeGreaterThan(0);
  });

  it("serves every file the build wrote, / as index.html, by each loopback name and a --host name", async () => {
    expect(await get("/")).toEqual({ status: 200, body: "the site's index.html" });
    for (const f of SITE_FILES) expect((await get(`/${f}`)).body).toBe(`the site's ${f}`);
    for (const h of [`localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `devbox.local:${port}`])
      expect((await get("/index.html", h)).status).toBe(200);
  });

  it("a file under -o that is not the site's is not served", async () => {
    for (const p of ["/notes.txt", "/assets/extra.js", "/assets/", "/assets"]) {
      const r = await get(p);
      expect(r.status).toBe(404);
      expect(r.body).toContain("this server serves the playground's files only");
    }
  });

  it("traversal reaches nothing outside, encoded or not", async () => {
    for (const p of [
      "/../secret.txt",
      "/%2e%2e/secret.txt",
      "/assets/..%2f..%2fsecret.txt",
      "/..%2F..%2Fetc%2Fpasswd",
    ]) {
      const r = await get(p);
      expect(r.status).toBe(404);
      expect(r.body).not.toContain("outside the site");
    }
  });

  it("a symbolic link in the site's place is not followed: a file, or a folder on the way", async () => {
    const link = join(site, "assets", "graphviz.js");
    rmSync(link);
    symlinkSync(secret, link);
    const r = await get("/assets/graphviz.js");
    expect(r.status).toBe(403);
    expect(r.body).toContain("/assets/graphviz.js is a symbolic link; this server follows none");
    expect(r.body).not.toContain("outside the site");
    // assets/ itself a link to a folder outside that holds a worker.js.
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "worker.js"), "outside the site");
    rmSync(join(site, "assets"), { recursive: true });
    symlinkSync(elsewhere, join(site, "assets"));
    const d = await get("/assets/worker.js");
    expect(d.status).toBe(403);
    expect(d.body).toContain("not a plain file of the site (a link on its way?)");
  });

  it("a foreign Host header is refused, 421 with a clear body: DNS rebinding reaches nothing", async () => {
    for (const h of [
      "evil.example:80",
      `evil.example:${port}`,
      "127.0.0.1",
      `127.0.0.1:${port + 1}`,
      `localhost.evil:${port}`,
    ]) {
      const r = await get("/index.html", h);
      expect(r.status).toBe(421);
      expect(r.body).toContain(
        `this server answers only Host: localhost:${port}, 127.0.0.1:${port}, [::1]:${port}, devbox.local:${port}`,
      );
      expect(r.body).not.toContain("the site's");
    }
    // No Host at all: Node's server refuses an HTTP/1.1 request without one (400) before ours runs.
    const none = await get("/index.html", "");
    expect(none.status).toBe(400);
    expect(none.body).not.toContain("the site's");
  });

  it("--host takes a host name only, and only with --serve", () => {
    const cclab = (...args: string[]) =>
      spawnSync(process.execPath, ["src/cli/bin.js", "playground", ...args], { encoding: "utf8", timeout: 30_000 });
    const bad = cclab("--serve", "--host", "evil.example/x");
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      `playground: argument '--host': expected a host name like myhost.local (letters, digits, dots and dashes), got "evil.example/x"`,
    );
    const alone = cclab("-o", join(root, "unused"), "--host", "devbox.local");
    expect(alone.status).toBe(1);
    expect(alone.stderr).toContain("playground: argument '--host': goes with --serve");
  });

  it("the runner may be framed only by this server's own pages (frame-ancestors)", async () => {
    const policy = (path: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        request({ host: "127.0.0.1", port, path, headers: { host: `localhost:${port}` } }, (res) => {
          res.resume();
          resolve(res.headers["content-security-policy"] as string | undefined);
        })
          .on("error", reject)
          .end();
      });
    expect(await policy("/runner.html")).toBe(
      `frame-ancestors http://localhost:${port} http://127.0.0.1:${port} http://[::1]:${port} http://devbox.local:${port}`,
    );
    expect(await policy("/index.html")).toBeUndefined();
  });

  it("HEAD answers the headers of GET and no body", async () => {
    const r = await raw(port, `HEAD /index.html HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`);
    expect(r).toMatch(/^HTTP\/1.1 200 OK\r\n/);
    expect(r).toContain(`content-length: ${"the site's index.html".length}\r\n`);
    expect(r).toMatch(/\r\n\r\n$/);
  });

  it("an absolute-form target (GET http://other/...) is refused, 400", async () => {
    for (const target of ["http://evil.example/index.html", `http://localhost:${port}/index.html`]) {
      const r = await raw(port, `GET ${target} HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`);
      expect(r).toMatch(/^HTTP\/1.1 400 /);
      expect(r).toContain("bad request: the target must be a path starting with /");
      expect(r).not.toContain("the site's");
    }
  });

  it("at port 80 the bare names are answered too (browsers omit :80); at other ports only with the port", () => {
    expect([...allowedHosts(["localhost", "Devbox.local"], 80)].sort()).toEqual(
      ["devbox.local", "devbox.local:80", "localhost", "localhost:80"].sort(),
    );
    expect([...allowedHosts(["localhost"], 8080)]).toEqual(["localhost:8080"]);
  });

  it("other methods are refused", async () => {
    expect((await get("/index.html", `127.0.0.1:${port}`, "POST")).status).toBe(405);
  });
});

describe("playground --serve: files opened", () => {
  it("a download cut off by the client closes its file", async () => {
    const big = Buffer.alloc(64 << 20, 97);
    const s = await ownSite("big", (dir) => writeFileSync(join(dir, "index.html"), big));
    const file = join(s.dir, "index.html");
    const open = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false;
        }
      }).length;
    try {
      await new Promise<void>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: s.port, path: "/index.html" }, (res) => {
          res.once("data", () => {
            expect(open()).toBe(1);
            req.destroy();
            resolve();
          });
        });
        req.on("error", (e) => (e.message === "socket hang up" ? undefined : reject(e)));
        req.end();
      });
      // The server sees the close on its next turns; the file must be closed then, not held for good.
      const t0 = Date.now();
      while (open() > 0 && Date.now() - t0 < 10_000) await new Promise((r) => setImmediate(r));
      expect(open()).toBe(0);
    } finally {
      await new Promise((r) => s.server.close(r));
    }
  });

  it.skipIf(process.platform !== "linux" || process.arch !== "x64")(
    "assets/ swapped with a link to a folder outside, while files are served, never serves what is outside",
    async () => {
      const outside = join(root, "outside-race");
      mkdirSync(outside);
      for (const f of SITE_FILES)
        if (f.startsWith("assets/")) writeFileSync(join(outside, f.slice(7)), "outside the site");
      const s = await ownSite("race", (dir) => symlinkSync(outside, join(dir, "assets.link")));
      // renameat2(RENAME_EXCHANGE) swaps assets/ and the link atomically, over and over (the syscall is 316 on x86-64).
      const swapper = spawn("python3", [
        "-c",
        `import ctypes,sys,time
libc=ctypes.CDLL(None,use_errno=True)
a=sys.argv[1].encode(); b=sys.argv[2].encode()
end=time.time()+30
while time.time()<end:
    if libc.syscall(316,-100,a,-100,b,2)!=0: sys.exit("renameat2: errno %d" % ctypes.get_errno())
`,
        join(s.dir, "assets"),
        join(s.dir, "assets.link"),
      ]);
      let leaked = 0;
      let served = 0;
      try {
        const t0 = Date.now();
        while (Date.now() - t0 < 4000) {
          const rs = await Promise.all(
            Array.from({ length: 8 }, () =>
              raw(s.port, `GET /assets/worker.js HTTP/1.1\r\nHost: localhost:${s.port}\r\nConnection: close\r\n\r\n`),
            ),
          );
          leaked += rs.filter((r) => r.includes("outside the site")).length;
          served += rs.filter((r) => r.includes("the site's assets/worker.js")).length;
        }
        // Still swapping when the requests end: the race ran all along.
        expect(swapper.exitCode).toBe(null);
      } finally {
        swapper.kill();
        await new Promise((r) => s.server.close(r));
      }
      expect(served).toBeGreaterThan(0);
      expect(leaked).toBe(0);
    },
    20_000,
  );
});
