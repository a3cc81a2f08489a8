/**
 * How a printed value reads on the page: a tensor (a cclab host buffer, a view of one, a typed
 * array) as its values, as torch prints one; an object as JSON (bigints with their n); the rest
 * as String() does. At most 64 elements of a tensor are shown, with a count of the rest.
 */
import { HostBuffer, isView } from "../../core/buffer.js";

const SHOWN = 64;

function elems(values: readonly (number | bigint)[], total: number): string {
  const more = total > values.length ? `, … (${total - values.length} more)` : "";
  return `[${values.join(", ")}${more}]`;
}

function tensorText(x: unknown): string | undefined {
  if (x instanceof HostBuffer)
    return `tensor(${elems(x.values(0, Math.min(x.count, SHOWN)), x.count)}, dtype=${x.dtype})`;
  if (isView(x) && x.buffer instanceof HostBuffer) {
    const n = Math.min(x.count, SHOWN);
    return `tensor(${elems(x.buffer.values(x.offset, n), x.count)}, dtype=${x.buffer.dtype}) (a view: offset ${x.offset}, count ${x.count})`;
  }
  if (ArrayBuffer.isView(x) && !(x instanceof DataView)) {
    const a = x as unknown as ArrayLike<number | bigint> & { constructor: { name: string } };
    return `${a.constructor.name}(${a.length}) ${elems(
      Array.from({ length: Math.min(a.length, SHOWN) }, (_, i) => a[i] as number | bigint),
      a.length,
    )}`;
  }
  return undefined;
}

/** One printed part as text. */
export function formatValue(x: unknown): string {
  if (typeof x === "string") return x;
  const t = tensorText(x);
  if (t !== undefined) return t;
  if (x instanceof Error) return `${x.name}: ${x.message}`;
  if (typeof x === "object" && x !== null) {
    try {
      return JSON.stringify(x, (_, v: unknown) =>
        typeof v === "bigint" ? `${v}n` : typeof v === "object" && v !== null ? (tensorText(v) ?? v) : v,
      );
    } catch {
      return String(x);
    }
  }
  return String(x);
}

/** A print() or console.log() call's parts as one line. */
export function formatLine(parts: readonly unknown[]): string {
  return parts.map(formatValue).join(" ");
}
