/**
 * The one place the native addon is loaded. Candidates, in order: $CCLAB_NATIVE (a path to a
 * cclab.node), build/Release/cclab.node, build/Debug/cclab.node. When none loads, the result says
 * why for every candidate, so "why is MPI unavailable" has an answer. CCLAB_NO_NATIVE=1 disables
 * the addon (the pure TypeScript paths are then used everywhere).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { EngineError } from "../core/errors.js";
import { buildCommand, PACKAGE_ROOT } from "./root.js";
import type { NativeAddon } from "./types.js";

export type NativeLoad =
  | { readonly ok: true; readonly addon: NativeAddon; readonly path: string }
  | { readonly ok: false; readonly reason: string; readonly tried: readonly { path: string; reason: string }[] };

const ROOT = PACKAGE_ROOT;

export function nativeCandidates(): string[] {
  const out: string[] = [];
  const env = process.env.CCLAB_NATIVE;
  if (env) out.push(resolve(env));
  out.push(join(ROOT, "build", "Release", "cclab.node"), join(ROOT, "build", "Debug", "cclab.node"));
  return out;
}

let cached: NativeLoad | undefined;

/** Loads the addon once per process (later calls return the same result). */
export function loadNative(): NativeLoad {
  if (cached) return cached;
  if (/^(1|true|yes|on)$/i.test(process.env.CCLAB_NO_NATIVE ?? "")) {
    cached = { ok: false, reason: "CCLAB_NO_NATIVE is set", tried: [] };
    return cached;
  }
  cached = tryLoad(nativeCandidates());
  return cached;
}

/** Tries each candidate in order; the first that loads wins, else every reason is reported. */
export function tryLoad(candidates: readonly string[]): NativeLoad {
  const require = createRequire(import.meta.url);
  const tried: { path: string; reason: string }[] = [];
  for (const path of candidates) {
    if (!existsSync(path)) {
      tried.push({ path, reason: "not found" });
      continue;
    }
    try {
      const addon = require(path) as NativeAddon;
      if (typeof addon?.engines !== "function") throw new Error("not a cclab addon (no engines())");
      return { ok: true, addon, path };
    } catch (e) {
      tried.push({ path, reason: e instanceof Error ? e.message.split("\n")[0]! : String(e) });
    }
  }
  const lines = tried.map((t) => `  ${t.path}: ${t.reason}`).join("\n");
  return {
    ok: false,
    reason: `the native addon did not load; tried:\n${lines}\n(build it with: ${buildCommand()})`,
    tried,
  };
}

/** The addon, or undefined where it did not load (callers then use TypeScript). */
export function native(): NativeAddon | undefined {
  const l = loadNative();
  return l.ok ? l.addon : undefined;
}

/** The shape of an error thrown by an engine binding (native/mpi.cc's Throw). */
interface NativeEngineErrorShape {
  engine: string;
  code: number;
  engineMessage: string;
  context: string;
}

function isNativeEngineError(e: unknown): e is Error & NativeEngineErrorShape {
  return (
    e instanceof Error &&
    typeof (e as Partial<NativeEngineErrorShape>).engine === "string" &&
    typeof (e as Partial<NativeEngineErrorShape>).code === "number"
  );
}

/**
 * Turns an engine's native error into EngineError (engine, code, the engine's own message from
 * MPI_Error_string), prefixed with `where` (e.g. 'rank 2: send to peer 3'); other errors pass through.
 */
export function toEngineError(e: unknown, where?: string): unknown {
  if (!isNativeEngineError(e)) return e;
  const context = where ? `${where}: ${e.context}` : e.context;
  return new EngineError(e.engine, e.code, e.engineMessage, context);
}

/** Runs a native engine call, rethrowing its errors as EngineError. */
export function engineCall<T>(where: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw toEngineError(e, where);
  }
}
