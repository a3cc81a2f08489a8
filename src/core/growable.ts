/**
 * Typed arrays that grow, and the binary min-heap built on them: the one place the model's
 * walkers and flow solver (src/model/network/), the schedule walk (interpret.ts) and the
 * compiler's dependencies (deps.ts) get them. Growth doubles, so n appends cost O(n).
 */

/** The typed arrays the model keeps its state in. */
export type GrowableArray = Float64Array | Int32Array | Uint8Array;

/** `a`, or a copy of it with room for `need` elements (at least twice as many). */
export function grow<T extends GrowableArray>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

/** A typed array appended to: `a` holds `length` elements and room for more. */
export class Growable<T extends GrowableArray> {
  length = 0;
  constructor(public a: T) {}
  /** Room for n elements (the length is the caller's to set). */
  ensure(n: number): void {
    this.a = grow(this.a, n);
  }
  push(x: number): void {
    if (this.length === this.a.length) this.a = grow(this.a, this.length + 1);
    this.a[this.length++] = x;
  }
  /** The elements, in an array of their own size. */
  done(): T {
    return this.a.slice(0, this.length) as T;
  }
}

/**
 * A binary min-heap of (key, id, version); the version lets a caller skip entries it has
 * superseded. Equal keys come out in no set order, or, made with `fifo`, in the order they were
 * pushed (the schedule walk's events: same time, scheduling order).
 */
export class MinHeap {
  // Keys are finite (times, rates): NaN has no place in either order.
  private k = new Float64Array(64);
  private i = new Int32Array(64);
  private v = new Int32Array(64);
  /** fifo: each entry's push number, compared where keys are equal. */
  private s: Float64Array | undefined;
  private pushed = 0;
  size = 0;
  constructor(fifo = false) {
    if (fifo) this.s = new Float64Array(64);
  }
  /** Whether entry a comes out strictly before an entry of key `key` and push number `seq`. */
  private before(a: number, key: number, seq: number): boolean {
    const ka = this.k[a] as number;
    return ka < key || (ka === key && this.s !== undefined && (this.s[a] as number) < seq);
  }
  private move(from: number, to: number): void {
    this.k[to] = this.k[from] as number;
    this.i[to] = this.i[from] as number;
    this.v[to] = this.v[from] as number;
    if (this.s) this.s[to] = this.s[from] as number;
  }
  private put(at: number, key: number, id: number, version: number, seq: number): void {
    this.k[at] = key;
    this.i[at] = id;
    this.v[at] = version;
    if (this.s) this.s[at] = seq;
  }
  push(key: number, id: number, version = 0): void {
    if (this.size === this.k.length) {
      this.k = grow(this.k, this.size * 2);
      this.i = grow(this.i, this.size * 2);
      this.v = grow(this.v, this.size * 2);
      if (this.s) this.s = grow(this.s, this.size * 2);
    }
    const seq = this.pushed++;
    let at = this.size++;
    while (at > 0) {
      const p = (at - 1) >> 1;
      if (this.s ? this.before(p, key, seq) : (this.k[p] as number) <= key) break;
      this.move(p, at);
      at = p;
    }
    this.put(at, key, id, version, seq);
  }
  /** The smallest key (Infinity when empty). */
  peek(): number {
    return this.size > 0 ? (this.k[0] as number) : Number.POSITIVE_INFINITY;
  }
  /** The id and version of the smallest key (size > 0). */
  topId(): number {
    return this.i[0] as number;
  }
  topVersion(): number {
    return this.v[0] as number;
  }
  /** The ids held, in no order. */
  ids(): Int32Array {
    return this.i.subarray(0, this.size);
  }
  clear(): void {
    this.size = 0;
  }
  /** Removes the smallest key; returns its id. */
  pop(): number {
    const top = this.i[0] as number;
    const last = --this.size;
    if (last > 0) {
      const key = this.k[last] as number;
      const id = this.i[last] as number;
      const ver = this.v[last] as number;
      const seq = this.s ? (this.s[last] as number) : 0;
      let at = 0;
      for (;;) {
        let c = 2 * at + 1;
        if (c >= last) break;
        if (c + 1 < last && this.before(c + 1, this.k[c] as number, this.s ? (this.s[c] as number) : 0)) c++;
        if (!this.before(c, key, seq)) break;
        this.move(c, at);
        at = c;
      }
      this.put(at, key, id, ver, seq);
    }
    return top;
  }
}
