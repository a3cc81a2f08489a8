/**
 * The Worker's memory bound. A browser's Worker shares the tab's renderer, so a program that
 * allocates without end would take the tab down with it before any time bound ends it. Every
 * buffer the simulator and the program allocate is a typed array or an ArrayBuffer: here each
 * such constructor (and the species the typed arrays' own methods create) is replaced by one
 * that checks the size asked for before allocating, against a bound per buffer and a bound on
 * all live buffers together (freed ones are subtracted as the collector reclaims them). Over
 * either bound it throws, saying what was asked, what is allowed, and what to do.
 */
import { InvalidArgumentError } from "../../core/errors.js";

export interface MemoryBound {
  /** Bytes one buffer may hold. */
  readonly perBuffer: number;
  /** Bytes all live buffers may hold together. */
  readonly total: number;
}

export const MEMORY_BOUND: MemoryBound = { perBuffer: 256 * 2 ** 20, total: 1024 * 2 ** 20 };

const TYPED = [
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
] as const;

const mib = (b: number) => `${(b / 2 ** 20).toFixed(b < 2 ** 20 ? 3 : 0)} MiB`;

/** Bytes a typed array constructor call would allocate (0 for a view of an existing buffer). */
function typedBytes(args: readonly unknown[], per: number): number {
  const a = args[0];
  if (a === undefined || a === null) return 0;
  if (typeof a === "number") return Number.isFinite(a) && a > 0 ? Math.floor(a) * per : 0;
  if (a instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && a instanceof SharedArrayBuffer))
    return 0;
  if (typeof a === "object") {
    const n = (a as { length?: unknown }).length;
    if (typeof n === "number" && Number.isFinite(n) && n > 0) return Math.floor(n) * per;
  }
  return 0;
}

/** Live bytes, as far as the collector has told (finalization runs between tasks). */
let live = 0;
let bound = MEMORY_BOUND;
const freed = new FinalizationRegistry<number>((bytes) => {
  live -= bytes;
});

function admit(what: string, bytes: number): void {
  if (bytes > bound.perBuffer) {
    throw new InvalidArgumentError(
      { op: `new ${what}`, arg: "length" },
      `asks for ${mib(bytes)}; a buffer in the playground may hold at most ${mib(bound.perBuffer)} (the page shares this tab's memory): use a smaller count, or run the program from a checkout (cclab run)`,
    );
  }
  if (live + bytes > bound.total) {
    throw new InvalidArgumentError(
      { op: `new ${what}`, arg: "length" },
      `asks for ${mib(bytes)} more while the program's buffers already hold ${mib(live)}; all its buffers together may hold at most ${mib(bound.total)} in the playground (the page shares this tab's memory): free buffers you no longer need, use smaller counts, or run the program from a checkout (cclab run)`,
    );
  }
}

function track(obj: object, bytes: number): void {
  if (bytes <= 0) return;
  live += bytes;
  freed.register(obj, bytes);
}

let installed = false;

/**
 * Replaces the global typed array and ArrayBuffer constructors by bounded ones (once; a second
 * call only changes the bound).
 */
export function boundMemory(b: MemoryBound = MEMORY_BOUND): void {
  bound = b;
  if (installed) return;
  installed = true;
  const g = globalThis as unknown as Record<string, unknown>;
  for (const name of TYPED) {
    const Ctor = g[name] as (new (...a: unknown[]) => object) & { BYTES_PER_ELEMENT: number; prototype: object };
    if (typeof Ctor !== "function") continue;
    const per = Ctor.BYTES_PER_ELEMENT;
    const bounded = new Proxy(Ctor, {
      construct(target, args, newTarget) {
        const bytes = typedBytes(args, per);
        admit(name, bytes);
        const obj = Reflect.construct(target, args, newTarget === bounded ? target : newTarget) as object;
        track(obj, bytes);
        return obj;
      },
    });
    g[name] = bounded;
    // slice(), map(), filter() build their result with the species of the array's constructor.
    Object.defineProperty(Ctor.prototype, "constructor", { value: bounded, writable: true, configurable: true });
  }
  const AB = ArrayBuffer;
  const boundedAB = new Proxy(AB, {
    construct(target, args, newTarget) {
      const n = Number(args[0] ?? 0);
      const max = (args[1] as { maxByteLength?: unknown } | undefined)?.maxByteLength;
      const bytes = Math.max(Number.isFinite(n) && n > 0 ? n : 0, typeof max === "number" && max > 0 ? max : 0);
      admit("ArrayBuffer", bytes);
      const obj = Reflect.construct(target, args, newTarget === boundedAB ? target : newTarget) as object;
      track(obj, bytes);
      return obj;
    },
  });
  g.ArrayBuffer = boundedAB;
  const slice = AB.prototype.slice;
  Object.defineProperty(AB.prototype, "slice", {
    value: function (this: ArrayBuffer, begin?: number, end?: number) {
      const len = this.byteLength;
      const rel = (v: number | undefined, d: number) => {
        const x = v === undefined ? d : Math.trunc(Number(v)) || 0;
        return x < 0 ? Math.max(len + x, 0) : Math.min(x, len);
      };
      const bytes = Math.max(0, rel(end, len) - rel(begin, 0));
      admit("ArrayBuffer (slice)", bytes);
      const out = slice.call(this, begin, end);
      track(out, bytes);
      return out;
    },
    writable: true,
    configurable: true,
  });
}

/** Live bytes the bound counts now. */
export function liveBytes(): number {
  return live;
}

// In a Worker, at once: this module is the Worker's first import, so the constructors the
// simulator's modules keep (dtype.ts's table) are already the bounded ones when they load.
if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined") boundMemory();
