/**
 * Typed arrays that grow, and the binary min-heap built on them: the one place the model's
 * walkers and flow solver (src/model/network/) get both. Growth doubles, so n appends cost O(n).
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

/** A binary min-heap of (key, id, version); the version lets a caller skip entries it has superseded. Equal keys come out in no set order. */
export class MinHeap {
  private k = new Float64Array(64);
  private i = new Int32Array(64);
  private v = new Int32Array(64);
  size = 0;
  push(key: number, id: number, version = 0): void {
    if (this.size === this.k.length) {
      this.k = grow(this.k, this.size * 2);
      this.i = grow(this.i, this.size * 2);
      this.v = grow(this.v, this.size * 2);
    }
    const { k, i: ids, v } = this;
    let at = this.size++;
    while (at > 0) {
      const p = (at - 1) >> 1;
      if ((k[p] as number) <= key) break;
      k[at] = k[p] as number;
      ids[at] = ids[p] as number;
      v[at] = v[p] as number;
      at = p;
    }
    k[at] = key;
    ids[at] = id;
    v[at] = version;
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
    const { k, i: ids, v } = this;
    const top = ids[0] as number;
    const last = --this.size;
    if (last > 0) {
      const key = k[last] as number;
      const id = ids[last] as number;
      const ver = v[last] as number;
      let at = 0;
      for (;;) {
        let c = 2 * at + 1;
        if (c >= last) break;
        if (c + 1 < last && (k[c + 1] as number) < (k[c] as number)) c++;
        if (key <= (k[c] as number)) break;
        k[at] = k[c] as number;
        ids[at] = ids[c] as number;
        v[at] = v[c] as number;
        at = c;
      }
      k[at] = key;
      ids[at] = id;
      v[at] = ver;
    }
    return top;
  }
}
