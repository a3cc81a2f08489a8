/**
 * What the topology families share: the link table they fill, the errors they raise (always
 * naming --topology or the flag at fault), the `key=value` parameter lists of a spec, and the
 * deterministic ECMP hash.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import { suggest } from "../../core/suggest.js";
import type { Links } from "./types.js";

/** An error about the --topology value (or another flag when `flag` says so). */
export function topologyError(detail: string, flag = "--topology"): InvalidArgumentError {
  return new InvalidArgumentError({ op: flag }, detail);
}

/** The directed links of a topology under construction; `finish` freezes them into typed arrays. */
export class LinkTable {
  private from: number[] = [];
  private to: number[] = [];
  private bw: number[] = [];
  private lat: number[] = [];
  private kinds: string[] = [];

  get count(): number {
    return this.from.length;
  }

  /** Adds the link from -> to and returns its id. */
  add(from: number, to: number, bandwidth: number, latency: number, kind: string): number {
    this.from.push(from);
    this.to.push(to);
    this.bw.push(bandwidth);
    this.lat.push(latency);
    this.kinds.push(kind);
    return this.from.length - 1;
  }

  /**
   * Every lower switch joined to every upper one both ways ('up', then 'down'), lower-major;
   * returns the id of the first: the up link of (i, j) is first + 2(i·uppers + j), its down link
   * the next id.
   */
  addComplete(
    lowers: number,
    uppers: number,
    lower: (i: number) => number,
    upper: (j: number) => number,
    bandwidth: number,
    latency: number,
  ): number {
    const first = this.count;
    for (let i = 0; i < lowers; i++) {
      for (let j = 0; j < uppers; j++) {
        this.add(lower(i), upper(j), bandwidth, latency, "up");
        this.add(upper(j), lower(i), bandwidth, latency, "down");
      }
    }
    return first;
  }

  finish(): Links {
    return {
      count: this.from.length,
      from: Int32Array.from(this.from),
      to: Int32Array.from(this.to),
      bandwidth: Float64Array.from(this.bw),
      latency: Float64Array.from(this.lat),
      kind: this.kinds,
    };
  }
}

/** A positive integer parameter of a spec, or an error naming it. */
export function positiveInt(text: string, what: string, spec: string, min = 1): number {
  if (!/^[0-9]+$/.test(text)) throw topologyError(`'${spec}': ${what} must be a whole number >= ${min}, got '${text}'`);
  const v = Number(text);
  if (v < min || !Number.isSafeInteger(v))
    throw topologyError(`'${spec}': ${what} must be a whole number >= ${min}, got '${text}'`);
  return v;
}

/** A positive real parameter (a ratio such as over=2 or over=1.5). */
export function positiveReal(text: string, what: string, spec: string): number {
  const v = Number(text);
  if (text.trim() === "" || !Number.isFinite(v) || !(v > 0))
    throw topologyError(`'${spec}': ${what} must be a positive number, got '${text}'`);
  return v;
}

/**
 * `a=1,b=2` into a map, refusing keys not in `allowed` (with a did-you-mean) and repeats. Items
 * without '=' are returned in order as `positional`.
 */
export function keyValues(
  items: readonly string[],
  allowed: readonly string[],
  spec: string,
): { readonly values: Map<string, string>; readonly positional: string[] } {
  const values = new Map<string, string>();
  const positional: string[] = [];
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq < 0) {
      positional.push(item);
      continue;
    }
    const key = item.slice(0, eq).trim().toLowerCase();
    const value = item.slice(eq + 1).trim();
    if (!allowed.includes(key)) {
      const hint = suggest(key, allowed);
      throw topologyError(
        `'${spec}': unknown parameter '${key}'${hint ? ` (did you mean '${hint}'?)` : ""}; this family takes ${allowed.join(", ")}`,
      );
    }
    if (values.has(key)) throw topologyError(`'${spec}': parameter '${key}' given twice`);
    values.set(key, value);
  }
  return { values, positional };
}

/** `8x8x4` into [8, 8, 4], each at least `min`. */
export function dimsOf(text: string, spec: string, min: number): number[] {
  const parts = text.split(/[xX×]/);
  if (parts.some((p) => p.trim() === ""))
    throw topologyError(`'${spec}': expected dimensions like 8x8 or 4x4x4, got '${text}'`);
  return parts.map((p, i) => positiveInt(p.trim(), `dimension ${i}`, spec, min));
}

/** A well-mixed 32-bit hash of a host pair (murmur3's finalizer): the deterministic ECMP choice. */
export function pairHash(a: number, b: number): number {
  let h = Math.imul(a + 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Throws unless a and b are distinct hosts of a topology with `hosts` hosts. */
export function checkPair(a: number, b: number, hosts: number, op: string): void {
  if (!Number.isInteger(a) || a < 0 || a >= hosts)
    throw new InvalidArgumentError({ op, arg: "a" }, `host ${a} is not in 0..${hosts - 1}`);
  if (!Number.isInteger(b) || b < 0 || b >= hosts)
    throw new InvalidArgumentError({ op, arg: "b" }, `host ${b} is not in 0..${hosts - 1}`);
  if (a === b) throw new InvalidArgumentError({ op, arg: "b" }, `a route needs two distinct hosts, got ${a} twice`);
}
