/**
 * `cclab playground --serve` against a real server on 127.0.0.1 at a port the OS picks: the
 * site's own files only (not every file under -o), no symbolic link followed, no traversal, and
 * only Host: localhost / 127.0.0.1 / [::1] or a --host name, each with the port (DNS rebinding).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SITE_FILES } from "../src/playground/build.js";
import { serveSite } from "../src/playground/serve.js";

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

  it("other methods are refused", async () => {
    expect((await get("/index.html", `127.0.0.1:${port}`, "POST")).status).toBe(405);
  });
});
