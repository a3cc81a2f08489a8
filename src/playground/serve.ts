/**
 * `cclab playground --serve`: the built site over HTTP, for a browser that will not run pages
 * from disk. It listens on 127.0.0.1 only and serves GET and HEAD of the site's own files (the
 * list the build wrote, SITE_FILES), nothing else under the folder. No symbolic link is followed:
 * the file opened is checked by its own path (/proc/self/fd on Linux), so a link anywhere on its
 * way, or a folder swapped in while it was opened, is refused. It answers only origin-form
 * targets (/path) whose Host is this server by a loopback name (localhost, 127.0.0.1, [::1]) or a
 * name given with --host, each with the port (bare too at port 80), so a page of another site
 * that a DNS name rebinds to 127.0.0.1 gets nothing. The runner's document (runner.html, which
 * runs what the page that frames it sends) may be framed only by a page of this server.
 */
import { closeSync, constants, createReadStream, fstatSync, openSync, readlinkSync, realpathSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { pipeline } from "node:stream";
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

/** The Host headers a server at `port` answers: each name with the port, and bare at port 80 (browsers omit :80). */
export function allowedHosts(names: readonly string[], port: number): Set<string> {
  const lower = names.map((h) => h.toLowerCase());
  return new Set([...lower.map((h) => `${h}:${port}`), ...(port === 80 ? lower : [])]);
}

/**
 * The path the open file `fd` has now: on Linux, /proc/self/fd says where the file opened really
 * is, whatever was renamed or swapped on its way since; elsewhere, the real path of `file`.
 */
function openedPath(fd: number, file: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return realpathSync(file);
  }
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
    // Origin-form only: an absolute-form target (GET http://other/...) names another server.
    if (!req.url?.startsWith("/")) {
      answer(res, 400, "bad request: the target must be a path starting with /", head);
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
      // The file opened must be the site's own: no link anywhere below the root, nothing swapped in
      // on the way between the open and this check (the opened file's own path, not the name's).
      if (!st.isFile() || openedPath(fd, file) !== file) {
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
      // The runner (it runs what its parent sends) may be framed by this server's own pages only.
      ...(rel === "runner.html"
        ? { "content-security-policy": `frame-ancestors ${[...allowed].map((h) => `http://${h}`).join(" ")}` }
        : {}),
    });
    if (head) {
      closeSync(fd);
      res.end();
    } else {
      // pipeline closes the file when the download ends, fails, or is cut off by the client.
      pipeline(createReadStream("", { fd }), res, () => {});
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const a = server.address();
      const p = typeof a === "object" && a ? a.port : port;
      allowed = allowedHosts([...LOOPBACK_NAMES, ...(o.hosts ?? [])], p);
      resolve({ server, url: `http://127.0.0.1:${p}/` });
    });
  });
}
