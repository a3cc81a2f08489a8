/**
 * The TCP store's client: one per rank (and one per remote node's launcher). Every step is under
 * a deadline: connecting (retried while the server is not up yet, or while it sheds connections
 * that others hold open without authenticating: a 'busy' refusal), the AUTH handshake (a peer that
 * accepts and never answers, or answers in another protocol, is named as such), and every request
 * (a stopped launcher cannot hang a rank past its timeout). On one host the store may be a
 * Unix-domain socket (`path`) in a directory only this user can enter.
 */
import { Socket } from "node:net";
import { AbortError, InvalidArgumentError, TimeoutError } from "../../core/errors.js";
import { deadline, formatDuration } from "../../core/timer.js";
import { type AbortRecord, type KVStore, parseAbort, waitTimeout } from "../../kvstore.js";
import {
  BUSY,
  DEFAULT_MAX_FRAME,
  encodeFrame,
  FrameReader,
  formatWaitMs,
  MAGIC,
  OP,
  PRE_AUTH_MAX_FRAME,
  parsePayload,
  STATUS,
  showBytes,
  VERSION,
} from "./protocol.js";

export type StoreRole = { readonly rank: number } | { readonly launcherOfNode: number };

export interface StoreClientOptions {
  readonly host: string;
  readonly port: number;
  /** A Unix-domain socket to connect to instead of host:port (one host: env.ts). */
  readonly path?: string;
  /**
   * The sockets to try, looked for again at each attempt, newest first (one host: a directory the
   * store's host makes fresh for the job, socket-dir.ts); `where` names them in messages.
   */
  readonly locate?: { readonly find: () => readonly string[]; readonly where: string };
  readonly token: string;
  /** Who this client is: a rank of the job, or the launcher of a remote node. */
  readonly role: StoreRole;
  /** Every reply, and the default for get/wait (default 300 s). */
  readonly timeoutMs?: number;
  /** Connecting and authenticating, together (default timeoutMs). */
  readonly connectTimeoutMs?: number;
  /** Told every noticeMs (default 5 s) while nothing accepts the connection yet: 'waiting for master host:port ...'. */
  readonly notice?: (line: string) => void;
  readonly noticeMs?: number;
  readonly maxFrame?: number;
}

interface Pending {
  resolve(fields: Buffer[]): void;
  reject(e: Error): void;
  readonly what: string;
  cancel: () => void;
}

/** How long past a wait's own timeout its reply may take before the server counts as unresponsive. */
const REPLY_GRACE_MS = 5000;

/** The server shed this connection before AUTH (evicted for room, or AUTH came too late): connect again. */
class StoreBusy extends AbortError {}

export class StoreClient implements KVStore {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Requests whose reply this process waits for; the socket keeps the process alive only while there are any. */
  private holding = 0;
  private readonly reader = new FrameReader(PRE_AUTH_MAX_FRAME);
  private lost: Error | null = null;
  private closedByUs = false;
  private readonly closeListeners = new Set<(e: Error) => void>();
  readonly timeoutMs: number;
  readonly where: string;

  private constructor(
    private readonly socket: Socket,
    private readonly options: StoreClientOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? 300_000;
    this.where = options.path ?? `${options.host}:${options.port}`;
    if (options.path === undefined) socket.setNoDelay(true);
    // An idle connection (or the abort watch's long poll) must not keep a rank alive whose main
    // awaits nothing that can happen: then Node's beforeExit tells the rank so (worker.ts).
    socket.unref();
    socket.on("data", (d: Buffer) => this.onData(d));
    socket.on("error", () => {});
    socket.on("close", () => this.onClose());
  }

  /** Connects (retrying while nothing listens yet) and authenticates, all within timeoutMs. */
  static async connect(options: StoreClientOptions): Promise<StoreClient> {
    const timeoutMs = options.connectTimeoutMs ?? options.timeoutMs ?? 300_000;
    const where = options.path ?? options.locate?.where ?? `${options.host}:${options.port}`;
    const unix = options.path !== undefined || options.locate !== undefined;
    const end = Date.now() + timeoutMs;
    let delay = 20;
    let lastCode = "";
    let busy = 0;
    const noticeMs = options.noticeMs ?? 5000;
    let nextNotice = Date.now() + noticeMs;
    for (;;) {
      if (options.notice && Date.now() >= nextNotice) {
        nextNotice = Date.now() + noticeMs;
        const left = Math.max(0, Math.round((end - Date.now()) / 1000));
        options.notice(
          `waiting for master ${where} (${lastCode || "no answer"}: rank 0, or cclab run, hosts the store there; giving up in ${left} s)`,
        );
      }
      const left = end - Date.now();
      if (left <= 0 && busy > 0) {
        throw new TimeoutError(
          `the store at ${where} refused this connection ${busy} times in ${formatDuration(timeoutMs)} (last: ${lastCode}): ` +
            "something else keeps connections to it open without authenticating",
        );
      }
      if (left <= 0) {
        throw new TimeoutError(
          `waiting for master ${where}: nothing accepted a connection within ${formatDuration(timeoutMs)} (${lastCode || "no answer"}): ` +
            "is the launcher (or rank 0, which hosts the store without one) running, and MASTER_ADDR/MASTER_PORT right?",
        );
      }
      let socket: Socket;
      let at = options.path;
      try {
        if (options.locate) {
          [socket, at] = await openFound(options, options.locate.find(), left);
        } else socket = await openSocket(options, left);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? "";
        lastCode = code || "connect timed out";
        if (e instanceof TimeoutError) continue;
        // ENOENT: the socket file is not there yet (its host creates it when it starts).
        const retry = ["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", ...(unix ? ["ENOENT"] : [])];
        if (!retry.includes(code)) {
          if (code === "EACCES" && unix) {
            throw new InvalidArgumentError(
              { op: "store connect", arg: "MASTER_PORT" },
              `cannot reach the store's socket ${(e as { path?: string }).path ?? where}: permission denied (it belongs to another user)`,
            );
          }
          throw e;
        }
        // The store may not be listening yet (its host starts it): back off and retry.
        await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, end - Date.now()))));
        delay = Math.min(delay * 2, 500);
        continue;
      }
      const c = new StoreClient(socket, at === undefined ? options : { ...options, path: at });
      const role =
        "rank" in options.role
          ? ["rank", String(options.role.rank)]
          : ["launcher", String(options.role.launcherOfNode)];
      try {
        const [magic, version] = await c.request(
          OP.AUTH,
          [MAGIC, VERSION, options.token, ...role],
          "AUTH",
          end - Date.now(),
          timeoutMs,
        );
        if (magic?.toString() !== MAGIC || version?.toString() !== VERSION) {
          throw new AbortError(`the peer at ${where} is not a ${MAGIC}/${VERSION} server`);
        }
        c.reader.limit = options.maxFrame ?? DEFAULT_MAX_FRAME;
        return c;
      } catch (e) {
        c.socket.destroy();
        if (!(e instanceof StoreBusy)) throw e;
        // Shed before AUTH (connections nobody authenticated filled the store's room): again, soon.
        busy++;
        lastCode = e.message;
        await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, end - Date.now()))));
        delay = Math.min(delay * 2, 200);
      }
    }
  }

  /** Called once if the connection to the server is lost (not when we close it). */
  onLost(listener: (e: Error) => void): () => void {
    if (this.lost && !this.closedByUs) {
      listener(this.lost);
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  private authenticated(): boolean {
    return this.reader.limit !== PRE_AUTH_MAX_FRAME;
  }

  private onClose(): void {
    let e: Error;
    if (this.closedByUs) e = new AbortError("store client closed");
    else if (!this.authenticated()) {
      e = new AbortError(
        `the peer at ${this.where} closed the connection during the handshake without an answer: it is not a ${MAGIC}/${VERSION} server (or is shutting down)`,
      );
    } else {
      e = new AbortError(
        `lost the connection to the store at ${this.where} (the launcher or the rank hosting it exited)`,
      );
    }
    this.lost ??= e;
    for (const p of this.pending.values()) {
      p.cancel();
      p.reject(this.lost);
    }
    this.pending.clear();
    if (!this.closedByUs) for (const l of this.closeListeners) l(this.lost);
  }

  private fatal(e: Error): void {
    this.lost ??= e;
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    const frames = this.reader.push(d);
    if (!Array.isArray(frames)) {
      const sent = this.reader.peek();
      this.fatal(
        new AbortError(
          this.authenticated()
            ? `store at ${this.where} sent a frame of ${frames.oversized} bytes, over the limit of ${this.reader.limit}`
            : `the peer at ${this.where} is not a ${MAGIC} server (it sent ${showBytes(sent)})`,
        ),
      );
      return;
    }
    for (const payload of frames) {
      const f = parsePayload(payload);
      const p = f && this.pending.get(f.id);
      if (f && !p && f.head === STATUS.ERROR && !this.authenticated()) {
        const why = f.fields[0]?.toString("utf8").slice(0, 1000) ?? "";
        if (why.startsWith(BUSY)) {
          this.fatal(new StoreBusy(`store at ${this.where}: ${why}`));
          return;
        }
      }
      if (f && !p && f.head === STATUS.ERROR && this.authenticated()) {
        // The server's reason for closing this connection (it could not tell which request).
        const why = f.fields[0]?.toString("utf8").slice(0, 1000) ?? "no reason given";
        this.fatal(new AbortError(`store at ${this.where} closed this connection: ${why}`));
        return;
      }
      if (!f || !p) {
        const why = this.authenticated()
          ? `store at ${this.where} sent a reply that matches no request`
          : `the peer at ${this.where} is not a ${MAGIC} server (it sent ${showBytes(payload)})`;
        this.fatal(new AbortError(why));
        return;
      }
      this.pending.delete(f.id);
      p.cancel();
      if (f.head === STATUS.OK) p.resolve(f.fields);
      else if (f.head === STATUS.TIMEOUT) p.reject(new TimeoutError(`store: ${p.what} timed out`));
      else {
        const why = f.fields[0]?.toString("utf8").slice(0, 1000) ?? "no reason given";
        p.reject(
          p.what === "AUTH"
            ? new InvalidArgumentError(
                { op: "store connect", arg: refusedArg(why) },
                `store at ${this.where} refused this client: ${why}`,
              )
            : new InvalidArgumentError({ op: `store ${p.what}` }, why),
        );
      }
    }
  }

  /** One request; its reply must come within replyMs (Infinity: the abort watch's long poll). */
  private request(
    op: number,
    fields: (string | Uint8Array)[],
    what: string,
    replyMs = this.timeoutMs,
    /** The deadline as messages state it (AUTH's is what is left of the whole connect's). */
    statedMs = replyMs,
  ): Promise<Buffer[]> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++ >>> 0;
    const frame = encodeFrame(op, id, fields);
    const max = this.options.maxFrame ?? DEFAULT_MAX_FRAME;
    if (frame.length - 4 > max) {
      return Promise.reject(
        new InvalidArgumentError(
          { op: `store ${what}`, arg: "value" },
          `frame of ${frame.length} bytes is over the limit of ${max}`,
        ),
      );
    }
    // A reply with a deadline is awaited: the socket holds the process until it comes.
    const holds = Number.isFinite(replyMs);
    if (holds && this.holding++ === 0) this.socket.ref();
    const release = () => {
      if (holds && --this.holding === 0) this.socket.unref();
    };
    return new Promise((resolve, reject) => {
      const p: Pending = { resolve, reject, what, cancel: () => {} };
      const stop = deadline(
        replyMs,
        () => {
          if (!this.pending.delete(id)) return;
          release();
          reject(
            new TimeoutError(
              what === "AUTH"
                ? `store: the peer at ${this.where} accepted the connection but did not answer AUTH within ${formatDuration(statedMs)} (not a ${MAGIC} server, or its host is stopped)`
                : `store at ${this.where} did not answer '${what}' within ${formatDuration(statedMs)} (is the launcher stopped or overloaded?)`,
            ),
          );
        },
        { ref: false },
      );
      p.cancel = () => {
        stop();
        release();
      };
      this.pending.set(id, p);
      this.socket.write(frame);
    });
  }

  async set(key: string, value: string | Uint8Array): Promise<void> {
    await this.request(OP.SET, [key, value], `set ${key}`);
  }
  async get(key: string, timeoutMs = this.timeoutMs): Promise<Buffer> {
    try {
      const [v] = await this.request(OP.GET, [key, formatWaitMs(timeoutMs)], `get ${key}`, timeoutMs + REPLY_GRACE_MS);
      return v!;
    } catch (e) {
      throw e instanceof TimeoutError && e.message.endsWith("timed out") ? waitTimeout([key], timeoutMs) : e;
    }
  }
  async wait(keys: readonly string[], timeoutMs = this.timeoutMs): Promise<void> {
    try {
      await this.request(OP.WAIT, [formatWaitMs(timeoutMs), ...keys], "wait", timeoutMs + REPLY_GRACE_MS);
    } catch (e) {
      throw e instanceof TimeoutError && e.message.endsWith("timed out") ? waitTimeout(keys, timeoutMs) : e;
    }
  }
  async add(key: string, delta: number): Promise<number> {
    const [v] = await this.request(OP.ADD, [key, String(delta)], `add ${key}`);
    return Number(v!.toString("utf8"));
  }
  async setIfAbsent(key: string, value: string | Uint8Array): Promise<Buffer> {
    const [v] = await this.request(OP.SETNX, [key, value], `setIfAbsent ${key}`);
    return v!;
  }
  async check(keys: readonly string[]): Promise<boolean> {
    const [v] = await this.request(OP.CHECK, [...keys], "check");
    return v!.toString("utf8") === "1";
  }
  async delete(key: string): Promise<boolean> {
    const [v] = await this.request(OP.DELETE, [key], `delete ${key}`);
    return v!.toString("utf8") === "1";
  }
  async abort(rank: number, reason: string): Promise<AbortRecord> {
    const [v] = await this.request(OP.ABORT, [String(rank), reason], "abort");
    return parseAbort(v!);
  }
  /**
   * Sends an abort without waiting for the reply: for an exit handler, where nothing can be
   * awaited (a socket write with an empty queue goes out at once).
   */
  abortNow(rank: number, reason: string): void {
    if (this.lost || this.socket.destroyed) return;
    this.socket.write(encodeFrame(OP.ABORT, this.nextId++ >>> 0, [String(rank), reason]));
  }

  async ping(): Promise<void> {
    await this.request(OP.PING, [], "ping");
  }

  /** Says goodbye (so the server does not report this rank as dead) and closes. */
  async close(): Promise<void> {
    if (this.lost) return;
    try {
      await this.request(OP.BYE, [], "bye", Math.min(this.timeoutMs, REPLY_GRACE_MS));
    } catch {
      // Already gone, or not answering: there is nobody to say goodbye to.
    }
    this.closedByUs = true;
    this.socket.end();
    this.socket.destroy();
  }

  /** Closes at once, without a goodbye (the server reports this rank as dead): for tests of death. */
  destroy(): void {
    this.socket.destroy();
  }
}

/** Which of this client's arguments a refused AUTH was about, from the server's reason. */
function refusedArg(why: string): string {
  if (why.startsWith("wrong token")) return "CCLAB_STORE_TOKEN";
  if (why.startsWith("rank ")) return "RANK";
  if (why.startsWith("launcher")) return "--node-rank";
  return "protocol";
}

/**
 * The first of `paths` (newest first) that accepts a connection, and its path; none there is
 * ENOENT, none accepting is the last one's error (a job that died left a socket that refuses).
 */
async function openFound(o: StoreClientOptions, paths: readonly string[], ms: number): Promise<[Socket, string]> {
  const end = Date.now() + ms;
  let last: unknown = Object.assign(new Error(`no socket at ${o.locate?.where}`), { code: "ENOENT" });
  for (const path of paths) {
    try {
      return [await openSocket({ ...o, path }, Math.max(1, end - Date.now())), path];
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

/** A TCP (or Unix-domain socket) connection, or an error with the system's code; at most `ms` to get it. */
function openSocket(o: StoreClientOptions, ms: number): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const s = new Socket();
    const cancel = deadline(ms, () => {
      s.destroy();
      reject(new TimeoutError(`store: connecting to ${o.path ?? `${o.host}:${o.port}`} timed out`));
    });
    s.once("error", (e) => {
      cancel();
      reject(e);
    });
    const connected = () => {
      cancel();
      s.removeAllListeners("error");
      resolve(s);
    };
    if (o.path !== undefined) s.connect(o.path, connected);
    else s.connect(o.port, o.host, connected);
  });
}
