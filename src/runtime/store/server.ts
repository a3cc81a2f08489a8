/**
 * The TCP store's server (torch's c10d TCPStore master): hosted by the launcher, or by rank 0 of a
 * job started by torchrun-style variables. Everything a connection sends is untrusted until it
 * authenticates, and bounded after:
 * - before AUTH: frames of at most PRE_AUTH_MAX_FRAME bytes, a short AUTH deadline (3 s), and a
 *   cap on such connections (16) kept by evicting the oldest when a new one arrives, so connections
 *   that never authenticate (anyone on the machine can open them, with no token) cannot keep a
 *   rank out: a rank sends AUTH the moment it connects, and one evicted all the same connects
 *   again (client.ts);
 * - AUTH names the protocol version, the job's token (compared in constant time) and a role: rank r
 *   (each rank once per job, so nobody can pose as a live rank) or the launcher of node k;
 * - a rank writes only its own keys (`rank/<r>/...`); `job/...` is the server's: who joined, left
 *   or died, and the abort, stamped with the rank of the connection that published it;
 * - frames, keys held, bytes held, pending waits and unread replies are capped; a connection past
 *   a cap, or sending garbage, gets an ERROR reply saying why and is closed, alone.
 */
import { timingSafeEqual } from "node:crypto";
import { unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { InvalidArgumentError } from "../../core/errors.js";
import { deadline, formatDuration } from "../../core/timer.js";
import {
  ABORT_KEY,
  deadKey,
  encodeAbort,
  joinedKey,
  KeyTable,
  type KVStore,
  leftKey,
  MemoryStore,
  parseAbort,
  type TableLimits,
  writeRefusal,
} from "../../kvstore.js";
import {
  BUSY,
  DEFAULT_MAX_FRAME,
  encodeFrame,
  FIELDS,
  type Frame,
  FrameReader,
  MAGIC,
  OP,
  OP_NAMES,
  PRE_AUTH_MAX_FRAME,
  parseIndex,
  parsePayload,
  parseWaitMs,
  STATUS,
  VERSION,
} from "./protocol.js";

export interface StoreServerOptions extends TableLimits {
  /** The job's token every connection must present (random, from the launcher). */
  readonly token: string;
  /** Ranks 0..world-1 may join, each once. */
  readonly world: number;
  /** Nodes of the job: launchers of nodes 1..nodes-1 may connect (default 1: none). */
  readonly nodes?: number;
  /** 127.0.0.1 unless the job spans machines. */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Largest frame after AUTH (default 1 MiB). */
  readonly maxFrame?: number;
  /** How long a new connection has to authenticate (default 3 s; a rank sends AUTH as soon as it connects). */
  readonly authTimeoutMs?: number;
  /** Connections at once, authenticated or not (default world + nodes + 16); past it the oldest unauthenticated one goes. */
  readonly maxConnections?: number;
  /** Connections not yet authenticated (default 16); a new one past it evicts the oldest. */
  readonly maxUnauthenticated?: number;
  /** Listen on this Unix-domain socket instead of TCP (one host, a user-private directory: env.ts). */
  readonly path?: string;
  /** GET/WAIT requests one connection may have pending (default 1024). */
  readonly maxPending?: number;
  /** Reply bytes a connection may leave unread before it is closed (default 16 MiB). */
  readonly maxUnread?: number;
  /** Request bytes (key lists) one connection's pending waits may hold (default 4 MiB). */
  readonly maxPendingBytes?: number;
}

type Role = { kind: "rank"; rank: number } | { kind: "launcher"; node: number };

interface Conn {
  readonly socket: Socket;
  readonly reader: FrameReader;
  role: Role | null;
  /** When it connected (evicting the oldest unauthenticated one says how long it waited). */
  readonly since: number;
  /** Said BYE: a clean exit, not a death. */
  bye: boolean;
  /** Closed for bad input: what it still sends is ignored while the ERROR reply drains. */
  dropped: boolean;
  readonly cancels: Set<() => void>;
  /** Bytes of the requests behind `cancels`. */
  pendingBytes: number;
  cancelAuth: () => void;
}

export class StoreServer {
  private readonly table: KeyTable;
  private readonly conns = new Set<Conn>();
  private server: Server | null = null;
  private closing = false;
  /** Connections refused or closed for bad input, by reason (counts, so hostile traffic cannot grow it). */
  readonly rejected = new Map<string, number>();
  readonly maxFrame: number;
  private readonly o: Required<Omit<StoreServerOptions, keyof TableLimits | "host" | "port" | "path">>;

  private constructor(private readonly options: StoreServerOptions) {
    const world = options.world;
    if (!Number.isInteger(world) || world < 1) {
      throw new InvalidArgumentError({ op: "StoreServer", arg: "world" }, `must be a positive integer, got ${world}`);
    }
    if (typeof options.token !== "string" || options.token.length < 16) {
      throw new InvalidArgumentError({ op: "StoreServer", arg: "token" }, "needs at least 16 characters");
    }
    const nodes = options.nodes ?? 1;
    this.o = {
      token: options.token,
      world,
      nodes,
      maxFrame: options.maxFrame ?? DEFAULT_MAX_FRAME,
      authTimeoutMs: options.authTimeoutMs ?? 3000,
      maxConnections: options.maxConnections ?? world + nodes + 16,
      maxUnauthenticated: options.maxUnauthenticated ?? 16,
      maxPending: options.maxPending ?? 1024,
      maxUnread: options.maxUnread ?? 16 << 20,
      maxPendingBytes: options.maxPendingBytes ?? 4 << 20,
    };
    this.maxFrame = this.o.maxFrame;
    this.table = new KeyTable(options);
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
  /** Where clients connect, for messages: host:port, or the socket's path. */
  get where(): string {
    return this.options.path ?? `${this.host}:${this.port}`;
  }
  /** The store for the process hosting the server (the launcher): no socket, no rank binding. */
  get local(): KVStore {
    return new MemoryStore(this.table);
  }
  /** Bytes held in keys and values, and connections open: for tests that bound the server's growth. */
  get usage(): { bytes: number; connections: number; waiting: number } {
    return { bytes: this.table.size, connections: this.conns.size, waiting: this.table.waiting };
  }

  private async listen(): Promise<void> {
    // No server.maxConnections: Node would drop a rank's connection past it, before accept() could
    // make room by evicting a connection that never authenticated.
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    const attempt = () =>
      new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        const listening = () => {
          server.off("error", reject);
          resolve();
        };
        if (this.options.path !== undefined) server.listen(this.options.path, listening);
        else server.listen(this.options.port ?? 0, this.host, listening);
      });
    const path = this.options.path;
    try {
      await attempt();
    } catch (e) {
      if (path === undefined || (e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e;
      // A socket file left by a job that died: nothing answers there, so it may go.
      if (await answers(path)) {
        throw new Error(`another store already listens at ${path} (a job of this user with the same MASTER_PORT?)`);
      }
      unlinkSync(path);
      await attempt();
    }
  }

  private count(reason: string): void {
    this.rejected.set(reason, (this.rejected.get(reason) ?? 0) + 1);
  }

  private accept(socket: Socket): void {
    socket.on("error", () => {}); // a reset peer is reported through 'close'
    // Make room: the oldest connections that have not authenticated go first (a rank sends AUTH as
    // soon as it connects, so the oldest waiting are the idle ones); authenticated ones never.
    const live = [...this.conns].filter((c) => !c.dropped);
    const waiting = live.filter((c) => !c.role);
    const excess = Math.max(waiting.length - this.o.maxUnauthenticated + 1, live.length - this.o.maxConnections + 1, 0);
    for (const old of waiting.slice(0, excess)) {
      const s = ((Date.now() - old.since) / 1000).toFixed(1);
      this.drop(
        old,
        `${BUSY}evicted after ${s} s without AUTH: a newer connection needed the room (at most ${this.o.maxUnauthenticated} may wait to authenticate)`,
        0,
        "evicted: too many connections waiting to authenticate",
      );
    }
    if (this.closing || excess > waiting.length) {
      const reason = this.closing ? "the store is closing" : "too many connections (every one authenticated)";
      this.count(reason);
      socket.end(encodeFrame(STATUS.ERROR, 0, [reason]));
      socket.destroySoon();
      return;
    }
    if (socket.setNoDelay) socket.setNoDelay(true);
    if (this.options.path === undefined) socket.setKeepAlive(true, 1000);
    const c: Conn = {
      since: Date.now(),
      socket,
      reader: new FrameReader(Math.min(PRE_AUTH_MAX_FRAME, this.o.maxFrame)),
      role: null,
      bye: false,
      dropped: false,
      cancels: new Set(),
      pendingBytes: 0,
      cancelAuth: () => {},
    };
    this.conns.add(c);
    c.cancelAuth = deadline(this.o.authTimeoutMs, () =>
      this.drop(c, `${BUSY}no AUTH within ${formatDuration(this.o.authTimeoutMs)}`, 0, "no AUTH in time"),
    );
    socket.on("close", () => this.closed(c));
    socket.on("data", (data: Buffer) => this.receive(c, data));
  }

  private closed(c: Conn): void {
    this.conns.delete(c);
    c.cancelAuth();
    for (const cancel of c.cancels) cancel();
    c.cancels.clear();
    const role = c.role;
    if (role?.kind !== "rank" || this.closing) return;
    if (c.bye) {
      this.table.setIfAbsent(leftKey(role.rank), Buffer.from("1"));
      return;
    }
    this.table.setIfAbsent(deadKey(role.rank), Buffer.from("1"));
    const reason = `rank ${role.rank} died (its connection to the store closed without a goodbye: killed or crashed)`;
    this.table.setIfAbsent(ABORT_KEY, encodeAbort({ rank: role.rank, reason }));
  }

  private reply(c: Conn, id: number, status: number, fields: (string | Uint8Array)[] = []): void {
    if (c.socket.destroyed || c.dropped) return;
    c.socket.write(encodeFrame(status, id, fields));
    if (c.socket.writableLength > this.o.maxUnread) this.drop(c, "does not read its replies");
  }

  /** Closes one connection for bad input, telling it why first (best effort); `counted` groups it in `rejected`. */
  private drop(c: Conn, reason: string, id = 0, counted = reason): void {
    if (c.socket.destroyed || c.dropped) return;
    c.dropped = true;
    c.cancelAuth();
    this.count(counted);
    c.socket.end(encodeFrame(STATUS.ERROR, id, [reason]));
    c.socket.destroySoon();
  }

  private receive(c: Conn, data: Buffer): void {
    if (c.socket.destroyed || c.dropped) return;
    const frames = c.reader.push(data);
    if (!Array.isArray(frames)) {
      const what = c.role ? "" : " before AUTH";
      this.drop(c, `frame of ${frames.oversized} bytes is over the limit of ${c.reader.limit}${what}`);
      return;
    }
    for (const payload of frames) {
      if (c.socket.destroyed || c.dropped) return;
      const f = parsePayload(payload);
      if (!f) {
        this.drop(c, "malformed frame");
        return;
      }
      const shape = FIELDS[f.head];
      if (!shape) {
        if (!c.role) {
          this.drop(c, `unknown op ${f.head} before AUTH`, f.id);
          return;
        }
        this.count(`unknown op`);
        this.reply(c, f.id, STATUS.ERROR, [`unknown op ${f.head} (this store speaks ${MAGIC}/${VERSION})`]);
        continue;
      }
      if (f.fields.length < shape.min || f.fields.length > shape.max) {
        this.drop(c, `${OP_NAMES[f.head]} with ${f.fields.length} fields`, f.id);
        return;
      }
      if (!c.role) {
        if (f.head !== OP.AUTH) {
          this.drop(c, "first frame is not AUTH", f.id);
          return;
        }
        this.authenticate(c, f);
        continue;
      }
      this.serve(c, c.role, f);
    }
  }

  private authenticate(c: Conn, f: Frame): void {
    const [magic, version, , role, index] = f.fields.map((b) => b.toString("latin1"));
    if (magic !== MAGIC) {
      this.drop(c, `not a ${MAGIC} AUTH`, f.id);
      return;
    }
    if (version !== VERSION) {
      this.drop(c, `protocol version ${JSON.stringify(version)}; this store speaks ${MAGIC}/${VERSION}`, f.id);
      return;
    }
    const want = Buffer.from(this.o.token, "utf8");
    const got = f.fields[2]!;
    if (got.length !== want.length || !timingSafeEqual(got, want)) {
      this.drop(c, "wrong token (CCLAB_STORE_TOKEN differs from the launcher's)", f.id);
      return;
    }
    if (role === "rank") {
      const rank = parseIndex(f.fields[4], this.o.world);
      if (rank === null) {
        this.drop(c, `rank ${JSON.stringify(index)} is not a rank of this job (0..${this.o.world - 1})`, f.id);
        return;
      }
      if (this.table.has(joinedKey(rank))) {
        this.drop(c, `rank ${rank} already joined this job (a second process claims to be rank ${rank})`, f.id);
        return;
      }
      c.role = { kind: "rank", rank };
      this.table.set(joinedKey(rank), Buffer.from("1"));
    } else if (role === "launcher") {
      const node = parseIndex(f.fields[4], this.o.nodes);
      if (node === null || node === 0) {
        this.drop(c, `launcher of node ${JSON.stringify(index)}: not a remote node of this job`, f.id);
        return;
      }
      c.role = { kind: "launcher", node };
    } else {
      this.drop(c, `unknown role ${JSON.stringify(role)}`, f.id);
      return;
    }
    c.cancelAuth();
    c.reader.limit = this.o.maxFrame;
    this.reply(c, f.id, STATUS.OK, [MAGIC, VERSION]);
  }

  /** A rank may write only its own namespace; a launcher nothing but aborts. */
  private mayWrite(role: Role, key: string): string | null {
    if (role.kind === "rank") return writeRefusal(role.rank, key);
    return `the launcher of node ${role.node} writes no keys (only aborts), not '${key}'`;
  }

  private serve(c: Conn, role: Role, f: Frame): void {
    const key = (i: number) => f.fields[i]!.toString("utf8");
    const error = (why: string) => this.reply(c, f.id, STATUS.ERROR, [why]);
    const write = (k: string, then: () => void) => {
      const refused = this.mayWrite(role, k);
      if (refused) {
        this.count("write outside its own keys");
        error(refused);
        return;
      }
      try {
        then();
      } catch (e) {
        error((e as Error).message);
      }
    };
    switch (f.head) {
      case OP.AUTH:
        this.drop(c, "second AUTH", f.id);
        return;
      case OP.SET:
        write(key(0), () => {
          this.table.set(key(0), Buffer.from(f.fields[1]!));
          this.reply(c, f.id, STATUS.OK);
        });
        return;
      case OP.SETNX:
        write(key(0), () =>
          this.reply(c, f.id, STATUS.OK, [this.table.setIfAbsent(key(0), Buffer.from(f.fields[1]!))]),
        );
        return;
      case OP.ADD: {
        const s = key(1);
        const delta = /^-?\d{1,16}$/.test(s) ? Number(s) : Number.NaN;
        if (!Number.isSafeInteger(delta)) {
          error(`ADD delta ${JSON.stringify(s.slice(0, 20))} is not an integer`);
          return;
        }
        write(key(0), () => this.reply(c, f.id, STATUS.OK, [String(this.table.add(key(0), delta))]));
        return;
      }
      case OP.DELETE:
        write(key(0), () => this.reply(c, f.id, STATUS.OK, [this.table.delete(key(0)) ? "1" : "0"]));
        return;
      case OP.CHECK:
        this.reply(c, f.id, STATUS.OK, [f.fields.every((k) => this.table.has(k.toString("utf8"))) ? "1" : "0"]);
        return;
      case OP.PING:
        this.reply(c, f.id, STATUS.OK);
        return;
      case OP.BYE:
        c.bye = true;
        this.reply(c, f.id, STATUS.OK);
        return;
      case OP.ABORT:
        this.abort(c, role, f);
        return;
      case OP.GET:
      case OP.WAIT:
        this.wait(c, f);
        return;
    }
  }

  /** The abort carries the connection's rank (a launcher's: a rank of its node), never one it claims. */
  private abort(c: Conn, role: Role, f: Frame): void {
    let rank: number;
    if (role.kind === "rank") rank = role.rank;
    else {
      const per = this.o.world / this.o.nodes;
      const r = parseIndex(f.fields[0], this.o.world);
      if (r === null || Math.floor(r / per) !== role.node) {
        this.reply(c, f.id, STATUS.ERROR, [
          `the launcher of node ${role.node} may abort only for its own ranks, not ${JSON.stringify(f.fields[0]!.toString("latin1").slice(0, 12))}`,
        ]);
        return;
      }
      rank = r;
    }
    const reason = f.fields[1]!.toString("utf8").slice(0, 4096);
    const won = this.table.setIfAbsent(ABORT_KEY, encodeAbort({ rank, reason }));
    this.reply(c, f.id, STATUS.OK, [encodeAbort(parseAbort(won))]);
  }

  private wait(c: Conn, f: Frame): void {
    const isGet = f.head === OP.GET;
    const timeout = parseWaitMs(isGet ? f.fields[1] : f.fields[0]);
    if (timeout === null) {
      this.drop(c, "bad timeout field", f.id);
      return;
    }
    const bytes = f.fields.reduce((s, b) => s + b.length, 0);
    if (c.cancels.size >= this.o.maxPending || c.pendingBytes + bytes > this.o.maxPendingBytes) {
      this.count("too many pending waits");
      this.reply(c, f.id, STATUS.ERROR, [
        `too many waits pending on one connection (at most ${this.o.maxPending}, holding ${this.o.maxPendingBytes} bytes of keys)`,
      ]);
      return;
    }
    const keys = isGet ? [f.fields[0]!.toString("utf8")] : f.fields.slice(1).map((b) => b.toString("utf8"));
    const id = f.id;
    let done = false;
    let cancel: (() => void) | undefined;
    cancel = this.table.wait(keys, timeout, (ok) => {
      done = true;
      if (cancel && c.cancels.delete(cancel)) c.pendingBytes -= bytes;
      if (!ok) {
        this.reply(c, id, STATUS.TIMEOUT);
        return;
      }
      this.reply(c, id, STATUS.OK, isGet ? [this.table.read(keys[0]!)!] : []);
    });
    // Already satisfied: the callback ran before `cancel` existed.
    if (!done) {
      c.cancels.add(cancel);
      c.pendingBytes += bytes;
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.table.cancelAll();
    for (const c of this.conns) c.socket.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}

/** True when something accepts connections at the Unix-domain socket `path`. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}
