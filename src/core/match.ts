/**
 * The one send/receive matcher: posted sends and receives wait in first-in first-out queues per
 * key (communicator, sender, receiver, channel), and a new one pairs with the oldest waiting
 * partner, as MPI's and NCCL's non-overtaking order does. The simulator, the schedule
 * interpreter (checker, model, explain) and the NCCL test double all match through it.
 */

/** A first-in first-out queue with O(1) push and shift. */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(x: T): void {
    this.items.push(x);
  }
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const x = this.items[this.head];
    this.items[this.head++] = undefined as T;
    if (this.head > 32 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return x;
  }
  /** Removes one element (a cancelled operation): O(length), off the hot path. */
  remove(x: T): boolean {
    const i = this.items.indexOf(x, this.head);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }
  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as T;
  }
}

/** Pairs sends with receives per key, oldest first. */
export class Matcher<S, R> {
  private readonly sends = new Map<number, Fifo<S>>();
  private readonly recvs = new Map<number, Fifo<R>>();

  /** Posts a send: returns the receive it matches, or undefined (then it waits). */
  send(key: number, s: S): R | undefined {
    const r = this.recvs.get(key)?.shift();
    if (r !== undefined) return r;
    this.queue(this.sends, key).push(s);
    return undefined;
  }

  /** Posts a receive: returns the send it matches, or undefined (then it waits). */
  recv(key: number, r: R): S | undefined {
    const s = this.sends.get(key)?.shift();
    if (s !== undefined) return s;
    this.queue(this.recvs, key).push(r);
    return undefined;
  }

  /** Withdraws a waiting send or receive (timed out, cancelled); false if it was not waiting. */
  cancel(key: number, x: S | R, kind: "send" | "recv"): boolean {
    const q = (kind === "send" ? this.sends : this.recvs).get(key) as Fifo<S | R> | undefined;
    return q ? q.remove(x) : false;
  }

  /** Every waiting send and receive, for diagnostics. */
  *waiting(): IterableIterator<{ key: number; kind: "send" | "recv"; item: S | R }> {
    for (const [key, q] of this.sends) for (const item of q) yield { key, kind: "send", item };
    for (const [key, q] of this.recvs) for (const item of q) yield { key, kind: "recv", item };
  }

  private queue<T>(m: Map<number, Fifo<T>>, key: number): Fifo<T> {
    let q = m.get(key);
    if (!q) m.set(key, (q = new Fifo<T>()));
    return q;
  }
}
