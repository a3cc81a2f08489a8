/**
 * CommLayer: a Comm that wraps another (the runtime's guard, fault injection, tracing). Every
 * call goes straight to `inner` unless the layer overrides it, so a layer states only what it
 * changes. findLayer walks `inner` to find a layer of a given kind.
 */
import type { CollectiveEvent, Comm, OpOptions, P2POp, Work } from "./comm.js";
import type { DataBuffer, View } from "./core/buffer.js";
import type { DType } from "./core/dtype.js";
import type { ReduceOp } from "./core/op.js";

export abstract class CommLayer implements Comm {
  readonly backend: string;

  constructor(readonly inner: Comm) {
    this.backend = inner.backend;
  }

  get rank(): number {
    return this.inner.rank;
  }
  get size(): number {
    return this.inner.size;
  }
  get worldRanks(): readonly number[] {
    return this.inner.worldRanks;
  }

  /** A layer must wrap the communicators split from it too. */
  abstract split(ranks: readonly number[]): Promise<Comm>;

  send(view: View, peer: number, options?: OpOptions): Promise<void> {
    return this.inner.send(view, peer, options);
  }
  recv(view: View, peer: number, options?: OpOptions): Promise<void> {
    return this.inner.recv(view, peer, options);
  }
  isend(view: View, peer: number, options?: OpOptions): Work {
    return this.inner.isend(view, peer, options);
  }
  irecv(view: View, peer: number, options?: OpOptions): Work {
    return this.inner.irecv(view, peer, options);
  }
  group(ops: readonly P2POp[], options?: OpOptions): Promise<void> {
    return this.inner.group(ops, options);
  }
  alloc(dtype: DType, count: number): DataBuffer {
    return this.inner.alloc(dtype, count);
  }
  copy(dst: View, src: View): void {
    this.inner.copy(dst, src);
  }
  reduceInto(dst: View, src: View, op: ReduceOp, a?: View): void {
    this.inner.reduceInto(dst, src, op, a);
  }
  scale(dst: View, src: View, mul: number, div: number): void {
    this.inner.scale(dst, src, mul, div);
  }
  beforeCollective(e: CollectiveEvent): Promise<void> {
    return this.inner.beforeCollective?.(e) ?? Promise.resolve();
  }
  get channels(): boolean | undefined {
    return this.inner.channels;
  }
  get streamOrdered(): boolean | undefined {
    return this.inner.streamOrdered;
  }
  synchronize(): Promise<void> {
    return this.inner.synchronize();
  }
  destroy(): void {
    this.inner.destroy();
  }
}

/** Unwraps a layered comm chain (guard, faults, tracing) to the first layer that passes `is`. */
export function findLayer<T>(comm: Comm, is: (c: Comm) => c is Comm & T): (Comm & T) | null {
  let c: Comm | undefined = comm;
  for (let i = 0; c && i < 16; i++) {
    if (is(c)) return c;
    c = (c as { inner?: Comm }).inner;
  }
  return null;
}
