/**
 * `cclab playground --serve`: the built site over HTTP, for a browser that will not run pages
 * from disk. It listens on 127.0.0.1 only and serves GET and HEAD of the site's own files (the
 * list the build wrote, SITE_FILES), nothing else under the folder. No symbolic link is followed:
 * a file whose real path is not the one asked for (a link anywhere on its way) is refused. It
 * answers only requests whose Host is this server by a loopback name (localhost, 127.0.0.1,
 * [::1]) or a name given with --host, each with the port, so a page of another site that a DNS
 * name rebinds to 127.0.0.1 gets nothing.
 */
import { closeSync, constants, createReadStream, fstatSync, openSync, realpathSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { SITE_FILES } from "./build.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

/** The loopback names every request may use in its Host header (with the port). */
export const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"] as const;

export interface ServeOptions {
  /** The files to serve, relative to the folder (default: what the build writes). */
  readonly files?: readonly string[];
  /** More names the Host header may carry (with the port): --host. */
  readonly hosts?: readonly string[];
}

function answer(res: ServerResponse, status: number, body: string, head = false): void {
  res
    .writeHead(status, {
      "content-type": "text/plain; charset=utf-8",
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
    })
    .end(head ? undefined : `${body}\n`);
}

/**
 * Serves the site in `dir` on 127.0.0.1:`port` (0: any free port); resolves with the server and
 * its URL.
 */
export function serveSite(dir: string, port: number, o: ServeOptions = {}): Promise<{ server: Server; url: string }> {
  const files = new Set(o.files ?? SITE_FILES);
  // The folder's own path may pass through links (cclab playground -o with --force); below it, none.
  const root = realpathSync(dir);
  let allowed = new Set<string>();
  const server = createServer((req, res) => {
    const head = req.method === "HEAD";
    const host = (req.headers.host ?? "").toLowerCase();
    if (!allowed.has(host)) {
      answer(
        res,
        421,
        `misdirected request: this server answers only Host: ${[...allowed].join(", ")}, not ${JSON.stringify(req.headers.host ?? "(none)")} (cclab playground --host NAME adds a name)`,
        head,
      );
      return;
    }
    if (req.method !== "GET" && !head) {
      res
        .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" })
        .end("only GET and HEAD\n");
      return;
    }
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
    } catch {
      answer(res, 400, "bad request: the path is not valid percent-encoding", head);
      return;
    }
    const rel = path === "/" ? "index.html" : path.slice(1);
    if (!files.has(rel)) {
      answer(res, 404, `not found: ${JSON.stringify(path)} (this server serves the playground's files only)`, head);
      return;
    }
    const file = join(root, rel);
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ELOOP") answer(res, 403, `forbidden: ${path} is a symbolic link; this server follows none`, head);
      else answer(res, 404, `not found: ${path} (${code ?? "unreadable"}: rebuild the site)`, head);
      return;
    }
    let size: number;
    try {
      const st = fstatSync(fd);
      // Every folder on the way must be the site's own too: no link anywhere below the root.
      if (!st.isFile() || realpathSync(file) !== file) {
        closeSync(fd);
        answer(res, 403, `forbidden: ${path} is not a plain file of the site (a link on its way?)`, head);
        return;
      }
      size = st.size;
    } catch {
      closeSync(fd);
      answer(res, 404, `not found: ${path}`, head);
      return;
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": size,
      "x-content-type-options": "nosniff",
    });
    if (head) {
      closeSync(fd);
      res.end();
    } else createReadStream("", { fd }).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const a = server.address();
      const p = typeof a === "object" && a ? a.port : port;
      allowed = new Set([...LOOPBACK_NAMES, ...(o.hosts ?? [])].map((h) => `${h.toLowerCase()}:${p}`));
      resolve({ server, url: `http://127.0.0.1:${p}/` });
    });
  });
}
