/**
 * The TCP store's wire format (cclab-store/2), shared by server.ts and client.ts.
 *
 * Every frame is a 4-byte big-endian payload length, then the payload. A request payload is
 * [u8 op][u32 id][fields...], a reply [u8 status][u32 id][fields...]; each field is a u32 length
 * and that many bytes. The first frame of a connection must be AUTH:
 *   [MAGIC, VERSION, token, role ('rank' | 'launcher'), rank or node index]
 * answered OK [MAGIC, VERSION] or ERROR [why]. An ERROR reply always carries a message; a request
 * the server cannot parse at all (or any frame before AUTH succeeds, other than AUTH) closes the
 * connection after an ERROR reply, so a client of another protocol learns why.
 */

export const MAGIC = "cclab-store";
export const VERSION = "2";
/** The largest frame after authentication (a value, a key list). */
export const DEFAULT_MAX_FRAME = 1 << 20;
/** The largest frame before it: an AUTH frame is about 100 bytes. */
export const PRE_AUTH_MAX_FRAME = 1024;
/**
 * How an ERROR the server sends a connection that has not authenticated yet begins when it only
 * sheds load (evicted to make room, or too slow to send AUTH): the client connects again.
 */
export const BUSY = "busy: ";

export const OP = {
  AUTH: 1,
  SET: 2,
  GET: 3,
  WAIT: 4,
  ADD: 5,
  DELETE: 6,
  CHECK: 7,
  SETNX: 8,
  BYE: 9,
  PING: 10,
  ABORT: 11,
} as const;
export const OP_NAMES: Record<number, string> = Object.fromEntries(Object.entries(OP).map(([k, v]) => [v, k]));

export const STATUS = { OK: 0, TIMEOUT: 1, ERROR: 2 } as const;

/** Fields each op must carry: exact count, or a range for the key lists. */
export const FIELDS: Record<number, { min: number; max: number }> = {
  [OP.AUTH]: { min: 5, max: 5 },
  [OP.SET]: { min: 2, max: 2 },
  [OP.GET]: { min: 2, max: 2 },
  [OP.WAIT]: { min: 2, max: 1 << 12 },
  [OP.ADD]: { min: 2, max: 2 },
  [OP.DELETE]: { min: 1, max: 1 },
  [OP.CHECK]: { min: 0, max: 1 << 12 },
  [OP.SETNX]: { min: 2, max: 2 },
  [OP.BYE]: { min: 0, max: 0 },
  [OP.PING]: { min: 0, max: 0 },
  [OP.ABORT]: { min: 2, max: 2 },
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

export interface Frame {
  readonly head: number;
  readonly id: number;
  readonly fields: Buffer[];
}

/** Parses one payload; null if it is malformed (short, trailing bytes, a field past the end). */
export function parsePayload(p: Buffer): Frame | null {
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

/**
 * Splits a byte stream into payloads. An oversized length is reported as soon as its 4 bytes
 * arrive, before anything is buffered; `limit` can be raised once the peer is trusted.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private have = 0;
  constructor(public limit: number) {}
  /** Bytes held for a frame not yet complete. */
  get buffered(): number {
    return this.have;
  }
  /** The first 16 bytes held, for messages about a peer that does not speak this protocol. */
  peek(): Buffer {
    return Buffer.concat(this.chunks).subarray(0, 16);
  }
  /** Returns the complete payloads, or 'oversized' (with the length announced). */
  push(data: Buffer): Buffer[] | { oversized: number } {
    this.chunks.push(data);
    this.have += data.length;
    const out: Buffer[] = [];
    for (;;) {
      if (this.have < 4) break;
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      this.chunks = [all];
      const n = all.readUInt32BE(0);
      if (n > this.limit) return { oversized: n };
      if (this.have < 4 + n) break;
      out.push(all.subarray(4, 4 + n));
      const rest = all.subarray(4 + n);
      this.chunks = rest.length ? [rest] : [];
      this.have = rest.length;
    }
    return out;
  }
}

/** The longest wait a request may ask for (ms); 'inf' is allowed for the abort watch only by convention. */
export const MAX_WAIT_MS = 10 * 365 * 86_400_000;

/** A wait's timeout field: decimal ms up to MAX_WAIT_MS, or 'inf'; null for anything else. */
export function parseWaitMs(b: Buffer | undefined): number | null {
  const s = b?.toString("latin1") ?? "";
  if (s === "inf") return Number.POSITIVE_INFINITY;
  if (!/^(0|[1-9]\d{0,12})$/.test(s)) return null;
  const n = Number(s);
  return n <= MAX_WAIT_MS ? n : null;
}

export function formatWaitMs(ms: number): string {
  return Number.isFinite(ms) ? String(Math.min(MAX_WAIT_MS, Math.max(0, Math.round(ms)))) : "inf";
}

/** A rank or node index field: a decimal integer in [0, bound). */
export function parseIndex(b: Buffer | undefined, bound: number): number | null {
  const s = b?.toString("latin1") ?? "";
  if (!/^(0|[1-9]\d{0,8})$/.test(s)) return null;
  const n = Number(s);
  return n < bound ? n : null;
}

/** Printable text of up to 16 bytes a peer sent, for 'not a cclab store' messages. */
export function showBytes(b: Buffer): string {
  return JSON.stringify(b.toString("latin1").replace(/[^\x20-\x7e]/g, "."));
}
