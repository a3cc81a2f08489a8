/**
 * The key-value store a job's processes share (torch's c10d Store), as the backends and the
 * runtime see it: NCCL exchanges its unique id through it, the runtime its aborts, barriers and
 * checked-mode fingerprints. Two implementations: MemoryStore here (one process: the sim
 * backend, tests) and the TCP store of src/runtime/store/ (a job of processes).
 *
 * Keys follow one convention, which the TCP store enforces per connection:
 * - `rank/<r>/...` is written only by rank r (ownKey); anyone reads it;
 * - `job/...` is written only by the store itself: who joined, left or died, and the abort,
 *   which the store stamps with the rank of the connection that published it.
 */
import { InvalidArgumentError, TimeoutError } from "./core/errors.js";
import { deadline, formatDuration } from "./core/timer.js";

/** The job's abort (the first one published wins). */
export interface AbortRecord {
  /** The rank that aborted (timed out, failed, or died); -1 when no rank did (the launcher, a lost store). */
  readonly rank: number;
  readonly reason: string;
}

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
  /**
   * Publishes the job's abort unless one is there, and returns the one that won. A TCP store
   * records the rank its connection is bound to, whatever `rank` says; an in-process store
   * (whose callers are all this process) takes `rank` as given.
   */
  abort(rank: number, reason: string): Promise<AbortRecord>;
}

/** Where the abort lives (written only through abort()). */
export const ABORT_KEY = "job/abort";
/** Set by the store when rank r's connection authenticates, says goodbye, or closes without one. */
export const joinedKey = (rank: number) => `job/joined/${rank}`;
export const leftKey = (rank: number) => `job/left/${rank}`;
export const deadKey = (rank: number) => `job/dead/${rank}`;

/** A key in rank r's own namespace: the only keys rank r may write on a TCP store. */
export function ownKey(rank: number, key: string): string {
  return `rank/${rank}/${key}`;
}

/** The rank whose namespace `key` is in, or undefined for any other key. */
export function ownerOf(key: string): number | undefined {
  const m = /^rank\/(0|[1-9]\d{0,8})\//.exec(key);
  return m ? Number(m[1]) : undefined;
}

/** Why rank `rank` may not write `key` (set, setIfAbsent, add, delete), or null where it may. */
export function writeRefusal(rank: number, key: string): string | null {
  return ownerOf(key) === rank ? null : `rank ${rank} may write only keys under rank/${rank}/, not '${key}'`;
}

export function encodeAbort(a: AbortRecord): Buffer {
  return Buffer.from(JSON.stringify({ rank: a.rank, reason: a.reason }));
}

/** Decodes an abort record; a malformed one is reported as such rather than trusted. */
export function parseAbort(v: Buffer): AbortRecord {
  try {
    const o = JSON.parse(v.toString("utf8")) as Partial<AbortRecord>;
    const rank = typeof o.rank === "number" && Number.isInteger(o.rank) && o.rank >= -1 ? o.rank : -1;
    return { rank, reason: typeof o.reason === "string" ? o.reason : "unknown reason" };
  } catch {
    return { rank: -1, reason: `malformed abort record (${v.length} bytes)` };
  }
}

export function toBuffer(x: string | Uint8Array): Buffer {
  return typeof x === "string" ? Buffer.from(x, "utf8") : Buffer.from(x.buffer, x.byteOffset, x.byteLength);
}

/** The message of a wait that timed out, naming (some of) its keys. */
export function waitTimeout(keys: readonly string[], timeoutMs: number): TimeoutError {
  const shown = keys.length > 4 ? `${keys.slice(0, 4).join(", ")}, ... (${keys.length} keys)` : keys.join(", ");
  return new TimeoutError(`store: wait for ${shown} timed out after ${formatDuration(timeoutMs)}`);
}

interface Waiter {
  readonly keys: readonly string[];
  done(ok: boolean): void;
}

export interface TableLimits {
  /** Total bytes of keys and values held; a write past it fails. Default 256 MiB. */
  readonly maxBytes?: number;
  /** Keys held. Default 1,000,000. */
  readonly maxKeys?: number;
}

/** The store's data and waiters: what MemoryStore and the TCP server both serve from. */
export class KeyTable {
  readonly data = new Map<string, Buffer>();
  private readonly waiters = new Set<Waiter>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxKeys: number;

  constructor(limits: TableLimits = {}) {
    this.maxBytes = limits.maxBytes ?? 256 << 20;
    this.maxKeys = limits.maxKeys ?? 1_000_000;
  }

  /** Bytes of keys and values held now. */
  get size(): number {
    return this.bytes;
  }
  get waiting(): number {
    return this.waiters.size;
  }

  has(key: string): boolean {
    return this.data.has(key);
  }
  read(key: string): Buffer | undefined {
    return this.data.get(key);
  }

  set(key: string, value: Buffer): void {
    const old = this.data.get(key);
    const grow = value.length - (old ? old.length : -key.length);
    if (!old && this.data.size >= this.maxKeys) throw full(key, `it holds ${this.maxKeys} keys`);
    if (grow > 0 && this.bytes + grow > this.maxBytes) {
      throw full(key, `it holds ${this.bytes} of ${this.maxBytes} bytes; this needs ${grow} more`);
    }
    this.bytes += grow;
    this.data.set(key, value);
    for (const w of [...this.waiters]) {
      if (w.keys.includes(key) && w.keys.every((k) => this.data.has(k))) {
        this.waiters.delete(w);
        w.done(true);
      }
    }
  }
  delete(key: string): boolean {
    const old = this.data.get(key);
    if (!old) return false;
    this.bytes -= key.length + old.length;
    return this.data.delete(key);
  }
  add(key: string, delta: number): number {
    const cur = Number(this.data.get(key)?.toString("utf8") ?? "0");
    const next = (Number.isSafeInteger(cur) ? cur : 0) + delta;
    if (!Number.isSafeInteger(next)) {
      throw new InvalidArgumentError({ op: "store add", arg: "delta" }, `'${key}' would leave the safe integers`);
    }
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
    let cancelTimer = () => {};
    const w: Waiter = {
      keys,
      done: (ok) => {
        cancelTimer();
        done(ok);
      },
    };
    this.waiters.add(w);
    cancelTimer = deadline(timeoutMs, () => {
      if (this.waiters.delete(w)) done(false);
    });
    return () => {
      cancelTimer();
      this.waiters.delete(w);
    };
  }
  cancelAll(): void {
    for (const w of this.waiters) w.done(false);
    this.waiters.clear();
  }
}

/** A write the store has no room for. */
function full(key: string, why: string): InvalidArgumentError {
  return new InvalidArgumentError(
    { op: "store set", arg: "value" },
    `no room for '${key}': the store is full (${why})`,
  );
}

/** The store's semantics without a socket: for the sim backend (one process), tests, and the server's own use. */
export class MemoryStore implements KVStore {
  /**
   * `writer`: the rank this store speaks for, where ranks share one table (tests of several ranks
   * in one process); its writes are then held to the TCP store's rule (writeRefusal).
   */
  constructor(
    readonly table = new KeyTable(),
    private readonly defaultTimeoutMs = 300_000,
    private readonly writer?: number,
  ) {}
  /** Throws as the TCP store's client does where the server refuses the write. */
  private mayWrite(op: string, key: string): void {
    const refused = this.writer === undefined ? null : writeRefusal(this.writer, key);
    if (refused) throw new InvalidArgumentError({ op: `store ${op} ${key}` }, refused);
  }
  async set(key: string, value: string | Uint8Array): Promise<void> {
    this.mayWrite("set", key);
    this.table.set(key, Buffer.from(toBuffer(value)));
  }
  async get(key: string, timeoutMs = this.defaultTimeoutMs): Promise<Buffer> {
    await this.wait([key], timeoutMs);
    return this.table.read(key)!;
  }
  wait(keys: readonly string[], timeoutMs = this.defaultTimeoutMs): Promise<void> {
    return new Promise((resolve, reject) =>
      this.table.wait(keys, timeoutMs, (ok) => (ok ? resolve() : reject(waitTimeout(keys, timeoutMs)))),
    );
  }
  async add(key: string, delta: number): Promise<number> {
    this.mayWrite("add", key);
    return this.table.add(key, delta);
  }
  async setIfAbsent(key: string, value: string | Uint8Array): Promise<Buffer> {
    this.mayWrite("setIfAbsent", key);
    return this.table.setIfAbsent(key, Buffer.from(toBuffer(value)));
  }
  async check(keys: readonly string[]): Promise<boolean> {
    return keys.every((k) => this.table.has(k));
  }
  async delete(key: string): Promise<boolean> {
    this.mayWrite("delete", key);
    return this.table.delete(key);
  }
  async abort(rank: number, reason: string): Promise<AbortRecord> {
    // Speaking for a rank, the abort carries that rank, whatever the caller claims (as the TCP store stamps it).
    const by = this.writer ?? rank;
    return parseAbort(this.table.setIfAbsent(ABORT_KEY, encodeAbort({ rank: by, reason })));
  }
}
