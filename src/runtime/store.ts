/**
 * The rendezvous store: a small TCP key-value store (torch's c10d TCPStore) that a job's ranks use
 * to find each other, agree on barriers, publish aborts and notice dead ranks. The launcher (or
 * rank 0 under an outside launcher) hosts the server; every rank holds one client.
 *
 * Wire format: every frame is a 4-byte big-endian payload length, then the payload. A request
 * payload is [u8 op][u32 id][fields...], a reply [u8 status][u32 id][fields...]; each field is a
 * u32 length and that many bytes. The first frame of a connection must be AUTH with the job's
 * token; anything malformed, oversized or unauthenticated closes that connection only.
 *
 * MemoryStore implements the same `KVStore` interface in-process, for the sim backend and tests.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server, Socket } from "node:net";
import { AbortError, InvalidArgumentError, TimeoutError } from "../core/errors.js";

export const DEFAULT_MAX_FRAME = 1 << 20;

/** What guard, checked mode and the launcher need from a store; StoreClient and MemoryStore have it. */
export interface KVStore {
  set(key: string, value: string | Uint8Array): Promise<void>;
  /** Waits until `key` exists (c10d's get), up to timeoutMs (default: the store's timeout). */
  get(key: string, timeoutMs?: number): Promise<Buffer>;
  /** Waits until every key exists; rejects with TimeoutError after timeoutMs. */
  wait(keys: readonly string[], timeoutMs?: number): Promise<void>;
  /** Atomic counter: adds delta (creating the key at 0) and returns the new value. */
  add(key: string, delta: number): Promise<number>;
  /** Sets key only if absent; returns the value the key holds afterwards (the winner's). */
  setIfAbsent(key: string, value: string | Uint8Array): Promise<Buffer>;
  /** True if every key exists; never blocks. */
  check(keys: readonly string[]): Promise<boolean>;
  delete(key: string): Promise<boolean>;
}

// ---- frames ----

const OP = { AUTH: 1, SET: 2, GET: 3, WAIT: 4, ADD: 5, DELETE: 6, CHECK: 7, SETNX: 8, BYE: 9, PING: 10 } as const;
const STATUS = { OK: 0, TIMEOUT: 1, ERROR: 2 } as const;
/** Fields each op must carry: exact count, or a minimum for the key lists. */
const FIELDS: Record<number, { min: number; max: number }> = {
  [OP.AUTH]: { min: 2, max: 2 },
  [OP.SET]: { min: 2, max: 2 },
  [OP.GET]: { min: 2, max: 2 },
  [OP.WAIT]: { min: 1, max: 1 << 16 },
  [OP.ADD]: { min: 2, max: 2 },
  [OP.DELETE]: { min: 1, max: 1 },
  [OP.CHECK]: { min: 0, max: 1 << 16 },
  [OP.SETNX]: { min: 2, max: 2 },
  [OP.BYE]: { min: 0, max: 0 },
  [OP.PING]: { min: 0, max: 0 },
};

function toBuf(x: string | Uint8Array): Buffer {
  return typeof x === "string" ? Buffer.from(x, "utf8") : Buffer.from(x.buffer, x.byteOffset, x.byteLength);
}

/** Encodes one frame: length prefix, head byte, id, then length-prefixed fields. */
export function encodeFrame(head: number, id: number, fields: readonly (string | Uint8Array)[]): Buffer {
  const bufs = fields.map(toBuf);
  const size = 5 + bufs.reduce((s, b) => s + 4 + b.length, 0);
  const out = Buffer.allocUnsafe(4 + size);
  out.writeUInt32BE(size, 0);
  out.writeUInt8(head, 4);
  out.writeUInt32BE(id >>> 0, 5);
  let at = 9;
  for (const b of bufs) {
    out.writeUInt32BE(b.length, at);
    b.copy(out, at + 4);
    at += 4 + b.length;
  }
  return out;
}

interface Frame {
  head: number;
  id: number;
  fields: Buffer[];
}

/** Parses one payload; null if it is malformed (short, trailing bytes, field past the end). */
function parsePayload(p: Buffer): Frame | null {
  if (p.length < 5) return null;
  const fields: Buffer[] = [];
  let at = 5;
  while (at < p.length) {
    if (at + 4 > p.length) return null;
    const n = p.readUInt32BE(at);
    if (at + 4 + n > p.length) return null;
    fields.push(p.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return { head: p.readUInt8(0), id: p.readUInt32BE(1), fields };
}

/** Splits a byte stream into payloads; reports an oversized length at once, before buffering it. */
class FrameReader {
  private chunks: Buffer[] = [];
  private have = 0;
  constructor(private readonly maxFrame: number) {}
  /** Returns the complete payloads, or 'oversized'. */
  push(data: Buffer): Buffer[] | "oversized" {
    this.chunks.push(data);
    this.have += data.length;
    const out: Buffer[] = [];
    for (;;) {
      if (this.have < 4) break;
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      this.chunks = [all];
      const n = all.readUInt32BE(0);
      if (n > this.maxFrame) return "oversized";
      if (this.have < 4 + n) break;
      out.push(all.subarray(4, 4 + n));
      const rest = all.subarray(4 + n);
      this.chunks = rest.length ? [rest] : [];
      this.have = rest.length;
    }
    return out;
  }
}

function parseTimeout(b: Buffer | undefined): number | null {
  const s = b?.toString("utf8") ?? "";
  if (s === "inf") return Number.POSITIVE_INFINITY;
  const n = Number(s);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

// ---- server ----

export interface StoreServerOptions {
  /** Job token every connection must present first. */
  token: string;
  /** 127.0.0.1 unless the job spans machines ('0.0.0.0'). */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  maxFrame?: number;
  /**
   * Where to publish "rank k died" when a rank's connection closes without a goodbye (the abort
   * key guard watches, e.g. 'abort/<job>'); no publishing when omitted.
   */
  abortKey?: string;
}

interface Waiter {
  keys: readonly string[];
  done(ok: boolean): void;
}

/** The in-memory table both the TCP server and MemoryStore serve from. */
class Table {
  readonly data = new Map<string, Buffer>();
  private waiters = new Set<Waiter>();

  set(key: string, value: Buffer): void {
    this.data.set(key, value);
    for (const w of [...this.waiters]) {
      if (w.keys.includes(key) && w.keys.every((k) => this.data.has(k))) {
        this.waiters.delete(w);
        w.done(true);
      }
    }
  }
  add(key: string, delta: number): number {
    const cur = Number(this.data.get(key)?.toString("utf8") ?? "0");
    const next = (Number.isFinite(cur) ? cur : 0) + delta;
    this.set(key, Buffer.from(String(next)));
    return next;
  }
  setIfAbsent(key: string, value: Buffer): Buffer {
    const cur = this.data.get(key);
    if (cur) return cur;
    this.set(key, value);
    return value;
  }
  /** Calls done(true) once every key exists, done(false) after timeoutMs; returns a canceller. */
  wait(keys: readonly string[], timeoutMs: number, done: (ok: boolean) => void): () => void {
    if (keys.every((k) => this.data.has(k))) {
      done(true);
      return () => {};
    }
    let timer: NodeJS.Timeout | undefined;
    const w: Waiter = {
      keys,
      done: (ok) => {
        if (timer) clearTimeout(timer);
        done(ok);
      },
    };
    this.waiters.add(w);
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => {
        if (this.waiters.delete(w)) done(false);
      }, timeoutMs);
    }
    return () => {
      if (timer) clearTimeout(timer);
      this.waiters.delete(w);
    };
  }
  cancelAll(): void {
    for (const w of this.waiters) w.done(false);
    this.waiters.clear();
  }
}

export class StoreServer {
  private readonly table = new Table();
  private readonly sockets = new Set<Socket>();
  /** Authenticated connections that said which rank they are, so a lost one can be reported. */
  private readonly rankOf = new Map<Socket, number>();
  private server: Server | null = null;
  /** Connections closed for bad input, by reason; tests read this. */
  readonly rejected: { reason: string }[] = [];
  readonly maxFrame: number;
  private closing = false;

  private constructor(private readonly options: StoreServerOptions) {
    this.maxFrame = options.maxFrame ?? DEFAULT_MAX_FRAME;
  }

  static async start(options: StoreServerOptions): Promise<StoreServer> {
    const s = new StoreServer(options);
    await s.listen();
    return s;
  }

  get port(): number {
    const a = this.server?.address();
    return typeof a === "object" && a ? a.port : 0;
  }
  get host(): string {
    return this.options.host ?? "127.0.0.1";
  }
  /** Direct access for the process hosting the server (the launcher reads the abort key). */
  get local(): KVStore {
    return new MemoryStore(this.table);
  }

  private listen(): Promise<void> {
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port ?? 0, this.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    const reader = new FrameReader(this.maxFrame);
    const cancels = new Set<() => void>();
    let authed = false;
    let said = false; // sent BYE: a clean exit, not a death
    const drop = (reason: string) => {
      this.rejected.push({ reason });
      socket.destroy();
    };
    socket.on("error", () => {}); // a reset peer is reported through 'close'
    socket.on("close", () => {
      this.sockets.delete(socket);
      for (const c of cancels) c();
      const rank = this.rankOf.get(socket);
      this.rankOf.delete(socket);
      if (rank !== undefined && !said && !this.closing) this.rankLost(rank);
    });
    const reply = (id: number, status: number, fields: (string | Uint8Array)[] = []) => {
      if (!socket.destroyed) socket.write(encodeFrame(status, id, fields));
    };
    socket.on("data", (data: Buffer) => {
      if (socket.destroyed) return;
      const frames = reader.push(data);
      if (frames === "oversized") return drop(`frame larger than ${this.maxFrame} bytes`);
      for (const payload of frames) {
        const f = parsePayload(payload);
        const shape = f && FIELDS[f.head];
        if (!f || !shape || f.fields.length < shape.min || f.fields.length > shape.max) return drop("malformed frame");
        if (!authed) {
          if (f.head !== OP.AUTH) return drop("first frame is not AUTH");
          const want = Buffer.from(this.options.token, "utf8");
          const got = f.fields[0]!;
          if (got.length !== want.length || !timingSafeEqual(got, want)) return drop("wrong token");
          authed = true;
          const rank = Number(f.fields[1]!.toString("utf8"));
          if (Number.isInteger(rank) && rank >= 0) this.rankOf.set(socket, rank);
          reply(f.id, STATUS.OK);
          continue;
        }
        const key = (i: number) => f.fields[i]!.toString("utf8");
        switch (f.head) {
          case OP.AUTH:
            return drop("second AUTH");
          case OP.SET:
            this.table.set(key(0), Buffer.from(f.fields[1]!));
            reply(f.id, STATUS.OK);
            break;
          case OP.SETNX:
            reply(f.id, STATUS.OK, [this.table.setIfAbsent(key(0), Buffer.from(f.fields[1]!))]);
            break;
          case OP.ADD: {
            const delta = Number(key(1));
            if (!Number.isSafeInteger(delta)) return drop("ADD delta is not an integer");
            reply(f.id, STATUS.OK, [String(this.table.add(key(0), delta))]);
            break;
          }
          case OP.DELETE:
            reply(f.id, STATUS.OK, [this.table.data.delete(key(0)) ? "1" : "0"]);
            break;
          case OP.CHECK:
            reply(f.id, STATUS.OK, [f.fields.every((k) => this.table.data.has(k.toString("utf8"))) ? "1" : "0"]);
            break;
          case OP.PING:
            reply(f.id, STATUS.OK);
            break;
          case OP.BYE:
            said = true;
            reply(f.id, STATUS.OK);
            break;
          case OP.GET:
          case OP.WAIT: {
            const timeout = parseTimeout(f.head === OP.GET ? f.fields[1] : f.fields[0]);
            if (timeout === null) return drop("bad timeout");
            const keys = f.head === OP.GET ? [key(0)] : f.fields.slice(1).map((b) => b.toString("utf8"));
            const id = f.id;
            let done = false;
            let cancel: (() => void) | undefined;
            cancel = this.table.wait(keys, timeout, (ok) => {
              done = true;
              if (cancel) cancels.delete(cancel);
              if (!ok) return reply(id, STATUS.TIMEOUT);
              reply(id, STATUS.OK, f.head === OP.GET ? [this.table.data.get(keys[0]!)!] : []);
            });
            // Already satisfied: the callback ran before `cancel` existed.
            if (!done && cancel) cancels.add(cancel);
            break;
          }
        }
      }
    });
  }

  private rankLost(rank: number): void {
    this.table.setIfAbsent(`dead/${rank}`, Buffer.from("1"));
    if (this.options.abortKey) {
      const reason = `rank ${rank} died (its connection to the store closed without a goodbye: killed or crashed)`;
      this.table.setIfAbsent(this.options.abortKey, Buffer.from(JSON.stringify({ rank, reason })));
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.table.cancelAll();
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}

// ---- in-process store ----

/** The store's semantics without a socket: for the sim backend (one process) and the server's own use. */
export class MemoryStore implements KVStore {
  constructor(
    private readonly table = new Table(),
    private readonly defaultTimeoutMs = 300_000,
  ) {}
  async set(key: string, value: string | Uint8Array): Promise<void> {
    this.table.set(key, Buffer.from(toBuf(value)));
  }
  async get(key: string, timeoutMs = this.defaultTimeoutMs): Promise<Buffer> {
    await this.wait([key], timeoutMs);
    return this.table.data.get(key)!;
  }
  wait(keys: readonly string[], timeoutMs = this.defaultTimeoutMs): Promise<void> {
    return new Promise((resolve, reject) =>
      this.table.wait(keys, timeoutMs, (ok) => (ok ? resolve() : reject(waitTimeout(keys, timeoutMs)))),
    );
  }
  async add(key: string, delta: number): Promise<number> {
    return this.table.add(key, delta);
  }
  async setIfAbsent(key: string, value: string | Uint8Array): Promise<Buffer> {
    return this.table.setIfAbsent(key, Buffer.from(toBuf(value)));
  }
  async check(keys: readonly string[]): Promise<boolean> {
    return keys.every((k) => this.table.data.has(k));
  }
  async delete(key: string): Promise<boolean> {
    return this.table.data.delete(key);
  }
}

function waitTimeout(keys: readonly string[], timeoutMs: number): TimeoutError {
  const shown = keys.length > 4 ? `${keys.slice(0, 4).join(", ")}, ... (${keys.length} keys)` : keys.join(", ");
  return new TimeoutError(`store: wait for ${shown} timed out after ${timeoutMs / 1000} s`);
}

// ---- client ----

export interface StoreClientOptions {
  host: string;
  port: number;
  token: string;
  /** This client's rank, so the server can report it if its connection drops; omit for the launcher. */
  rank?: number;
  /** Default for get/wait and for connecting (the server may not be up yet). */
  timeoutMs?: number;
  maxFrame?: number;
}

interface Pending {
  resolve(fields: Buffer[]): void;
  reject(e: Error): void;
  what: string;
}

export class StoreClient implements KVStore {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly reader: FrameReader;
  private lost: Error | null = null;
  private closedByUs = false;
  private readonly closeListeners = new Set<(e: Error) => void>();
  readonly timeoutMs: number;

  private constructor(
    private readonly socket: Socket,
    private readonly options: StoreClientOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? 300_000;
    this.reader = new FrameReader(options.maxFrame ?? DEFAULT_MAX_FRAME);
    socket.setNoDelay(true);
    socket.on("data", (d: Buffer) => this.onData(d));
    socket.on("error", () => {});
    socket.on("close", () => {
      const e = this.closedByUs
        ? new AbortError(`store client closed`)
        : new AbortError(
            `lost the connection to the store at ${options.host}:${options.port} (the launcher or the rank hosting it exited)`,
          );
      this.lost = e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
      if (!this.closedByUs) for (const l of this.closeListeners) l(e);
    });
  }

  /** Connects, retrying until the server is up or timeoutMs passes, then authenticates. */
  static async connect(options: StoreClientOptions): Promise<StoreClient> {
    const timeoutMs = options.timeoutMs ?? 300_000;
    const deadline = Date.now() + timeoutMs;
    let delay = 20;
    for (;;) {
      try {
        const socket = await new Promise<Socket>((resolve, reject) => {
          const s = new Socket();
          s.once("error", reject);
          s.connect(options.port, options.host, () => {
            s.off("error", reject);
            resolve(s);
          });
        });
        const c = new StoreClient(socket, options);
        await c.request(OP.AUTH, [options.token, String(options.rank ?? -1)], "authenticate");
        return c;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const retriable = code === "ECONNREFUSED" || code === "ECONNRESET" || code === "ENOTFOUND";
        if (!retriable || Date.now() + delay > deadline) {
          if (e instanceof AbortError) {
            throw new AbortError(
              `store at ${options.host}:${options.port} refused this client (wrong CCLAB_STORE_TOKEN?)`,
            );
          }
          if (!retriable) throw e;
          throw new TimeoutError(
            `store: could not connect to ${options.host}:${options.port} within ${timeoutMs / 1000} s (${code})`,
          );
        }
        // The rendezvous host may not be listening yet (rank 0 starts it); back off and retry.
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 500);
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

  private onData(d: Buffer): void {
    const frames = this.reader.push(d);
    if (frames === "oversized") {
      this.socket.destroy();
      return;
    }
    for (const payload of frames) {
      const f = parsePayload(payload);
      const p = f && this.pending.get(f.id);
      if (!f || !p) {
        this.socket.destroy();
        return;
      }
      this.pending.delete(f.id);
      if (f.head === STATUS.OK) p.resolve(f.fields);
      else if (f.head === STATUS.TIMEOUT) p.reject(new TimeoutError(`store: ${p.what} timed out`));
      else p.reject(new AbortError(`store: ${p.what} failed`));
    }
  }

  private request(op: number, fields: (string | Uint8Array)[], what: string): Promise<Buffer[]> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++ >>> 0;
    const frame = encodeFrame(op, id, fields);
    if (frame.length - 4 > (this.options.maxFrame ?? DEFAULT_MAX_FRAME)) {
      return Promise.reject(
        new InvalidArgumentError({ op: "store", arg: "value" }, `frame of ${frame.length} bytes is over the limit`),
      );
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, what });
      this.socket.write(frame);
    });
  }

  async set(key: string, value: string | Uint8Array): Promise<void> {
    await this.request(OP.SET, [key, value], `set ${key}`);
  }
  async get(key: string, timeoutMs = this.timeoutMs): Promise<Buffer> {
    try {
      const [v] = await this.request(OP.GET, [key, fmtTimeout(timeoutMs)], `get ${key}`);
      return v!;
    } catch (e) {
      throw e instanceof TimeoutError ? waitTimeout([key], timeoutMs) : e;
    }
  }
  async wait(keys: readonly string[], timeoutMs = this.timeoutMs): Promise<void> {
    try {
      await this.request(OP.WAIT, [fmtTimeout(timeoutMs), ...keys], `wait`);
    } catch (e) {
      throw e instanceof TimeoutError ? waitTimeout(keys, timeoutMs) : e;
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
    const [v] = await this.request(OP.CHECK, [...keys], `check`);
    return v!.toString("utf8") === "1";
  }
  async delete(key: string): Promise<boolean> {
    const [v] = await this.request(OP.DELETE, [key], `delete ${key}`);
    return v!.toString("utf8") === "1";
  }
  async ping(): Promise<void> {
    await this.request(OP.PING, [], "ping");
  }

  /** Says goodbye (so the server does not report this rank as dead) and closes. */
  async close(): Promise<void> {
    if (this.lost) return;
    try {
      await this.request(OP.BYE, [], "bye");
    } catch {
      // Already gone: nothing to say goodbye to.
    }
    this.closedByUs = true;
    this.socket.end();
    this.socket.destroy();
  }
}

function fmtTimeout(ms: number): string {
  return Number.isFinite(ms) ? String(Math.max(0, Math.round(ms))) : "inf";
}

/** A fresh job token (hex of 16 random bytes), as the launcher puts in CCLAB_STORE_TOKEN. */
export function makeToken(): string {
  return randomBytes(16).toString("hex");
}

// ---- barrier ----

const generations = new WeakMap<KVStore, Map<string, number>>();

/**
 * A reusable barrier on the store: each call is one generation (counted per store handle, so
 * every rank must call it the same number of times); the last arrival sets the done key.
 */
export async function storeBarrier(store: KVStore, name: string, size: number, timeoutMs?: number): Promise<void> {
  let gens = generations.get(store);
  if (!gens) generations.set(store, (gens = new Map()));
  const gen = gens.get(name) ?? 0;
  gens.set(name, gen + 1);
  const base = `barrier/${name}/${gen}`;
  const n = await store.add(`${base}/count`, 1);
  if (n === size) {
    await store.set(`${base}/done`, "1");
    // The previous generation's keys are no longer waited on by anyone (they all passed it).
    if (gen > 0) {
      await store.delete(`barrier/${name}/${gen - 1}/count`);
      await store.delete(`barrier/${name}/${gen - 1}/done`);
    }
  }
  await store.wait([`${base}/done`], timeoutMs);
}
