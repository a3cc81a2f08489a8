/**
 * Share: the workspace (its files, which is open, which runs) and the settings, as JSON,
 * deflated by the browser's own CompressionStream and written base64url into the URL's
 * fragment ('#s=...'), so a link carries the program itself and no server is involved. A
 * readable form opens a file the site carries: '#example=examples/deadlock.ts&semantics=nccl&run=1'
 * (docs/teaching.md links its lessons that way).
 */
import type { Semantics } from "../../sim/ops.js";
import { checkShared } from "./check.js";
import type { Shared } from "./protocol.js";

export type { Shared } from "./protocol.js";

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

/** What a damaged link's message ends with: what the reader can do. */
const DAMAGED_FIX =
  "ask whoever sent it for the whole link again (a link cut short, or changed, reads this way), or pick a program from the Examples menu";

/**
 * The state a fragment holds; undefined for none. A damaged one (cut short, changed, or not a
 * playground link at all) throws an Error that says so, what is wrong, and what to do.
 */
export async function decodeShared(hash: string): Promise<(Partial<Shared> & { example?: string }) | undefined> {
  const h = hash.replace(/^#/, "");
  if (h === "") return undefined;
  const params = new URLSearchParams(h);
  const s = params.get("s");
  if (s !== null) {
    let json: string;
    try {
      if (!/^[A-Za-z0-9_-]+$/.test(s)) throw new Error("it holds characters base64url has not");
      const bytes = await through(fromBase64Url(s), new DecompressionStream("deflate-raw"));
      json = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (e) {
      // The browser's own words here ('Failed to fetch') say nothing of the link: ours do.
      const why = e instanceof Error && /base64url/.test(e.message) ? ` (${e.message})` : "";
      throw new Error(`this link is damaged: its program does not unpack${why}; ${DAMAGED_FIX}`);
    }
    let state: unknown;
    try {
      state = JSON.parse(json);
    } catch (e) {
      throw new Error(
        `this link is damaged: its state is not JSON (${e instanceof Error ? e.message : String(e)}); ${DAMAGED_FIX}`,
      );
    }
    try {
      const checked = checkShared(state);
      if (!checked.files) throw new Error("it carries no files");
      return checked;
    } catch (e) {
      throw new Error(`this link is damaged: ${e instanceof Error ? e.message : String(e)}; ${DAMAGED_FIX}`);
    }
  }
  const num = (k: string) => (params.has(k) ? Number(params.get(k)) : undefined);
  const out: { -readonly [K in keyof Shared]?: Shared[K] } & { example?: string } = {};
  const set = <K extends keyof typeof out>(k: K, v: (typeof out)[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("n", num("n"));
  set("semantics", (params.get("semantics") as Semantics | null) ?? undefined);
  set("seed", num("seed"));
  set("step", num("step"));
  set("topology", params.get("topology") ?? undefined);
  if (params.get("run") === "1") out.action = "run";
  if (params.get("explain") === "1") out.action = "explain";
  let checked: Partial<Shared>;
  try {
    checked = checkShared(out);
  } catch (e) {
    throw new Error(`this link is damaged: ${e instanceof Error ? e.message : String(e)}; ${DAMAGED_FIX}`);
  }
  const example = params.get("example");
  return example === null ? checked : { ...checked, example };
}
