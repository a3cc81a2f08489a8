/**
 * Share: the workspace (its files, which is open, which runs) and the settings, as JSON,
 * deflated by the browser's own CompressionStream and written base64url into the URL's
 * fragment ('#s=...'), so a link carries the program itself and no server is involved. A
 * readable form opens a file the site carries: '#example=examples/deadlock.ts&semantics=nccl&run=1'
 * (docs/teaching.md links its lessons that way).
 */
import type { Semantics } from "../../sim/ops.js";
import type { Files } from "./protocol.js";

export interface Shared {
  readonly files: Files;
  readonly main: string;
  readonly current: string;
  readonly n: number;
  readonly semantics: Semantics;
  readonly seed: number;
  readonly lo: number;
  readonly hi: number;
  readonly runs: number;
  readonly limit: number;
  /** What was last done (reopening the link does it again), and the step it showed. */
  readonly action?: "run" | "explain";
  readonly step?: number;
}

function toBase64Url(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(s: string): Uint8Array {
  const b = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

async function through(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const out = new Response(new Blob([bytes as BlobPart]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

/** The fragment ('s=...') for a state. */
export async function encodeShared(s: Shared): Promise<string> {
  const json = new TextEncoder().encode(JSON.stringify(s));
  return `s=${toBase64Url(await through(json, new CompressionStream("deflate-raw")))}`;
}

/** The state a fragment holds; undefined for none; an Error naming what is wrong for a damaged one. */
export async function decodeShared(hash: string): Promise<(Partial<Shared> & { example?: string }) | undefined> {
  const h = hash.replace(/^#/, "");
  if (h === "") return undefined;
  const params = new URLSearchParams(h);
  const s = params.get("s");
  if (s) {
    const bytes = await through(fromBase64Url(s), new DecompressionStream("deflate-raw"));
    return JSON.parse(new TextDecoder().decode(bytes)) as Shared;
  }
  const num = (k: string) => (params.has(k) ? Number(params.get(k)) : undefined);
  const out: { -readonly [K in keyof Shared]?: Shared[K] } & { example?: string } = {};
  const set = <K extends keyof typeof out>(k: K, v: (typeof out)[K] | undefined) => {
    if (v !== undefined && !(typeof v === "number" && Number.isNaN(v))) out[k] = v;
  };
  set("example", params.get("example") ?? undefined);
  set("n", num("n"));
  set("semantics", (params.get("semantics") as Semantics | null) ?? undefined);
  set("seed", num("seed"));
  set("step", num("step"));
  if (params.get("run") === "1") out.action = "run";
  if (params.get("explain") === "1") out.action = "explain";
  return out;
}
