/**
 * Dependencies from memory: which earlier operations of a rank an operation waits for, found
 * from the intervals of memory each reads and writes (plan.ts's compiler uses it).
 */
import { invariant } from "../core/assert.js";
import { lastAtMost } from "../core/extent.js";
import { grow } from "../core/growable.js";

/**
 * Last writer and readers since, per interval of one memory. The intervals are fixed before any
 * operation is recorded: every boundary any operation of the plan names starts one (an interval
 * split later would inherit its whole's writer and readers, so cutting it first changes nothing).
 * Cutting as operations came, into sorted arrays, moved every later interval at each cut: PAT
 * reduce-scatter at 1,024 ranks made about twenty million such moves a rank. Readers are lists
 * threaded through typed arrays (a pool of nodes that grows and is not reused after a write), so
 * recording them makes no object.
 */
export class Intervals {
  private readonly starts: Float64Array;
  private readonly writer: Int32Array;
  /** Per interval its oldest and newest reader node (-1 none); node k is reader op readerOp[k], then node readerNext[k]. */
  private readonly head: Int32Array;
  private readonly tail: Int32Array;
  private readerOp = new Int32Array(64);
  private readerNext = new Int32Array(64);
  private nodes = 0;

  /** `bounds`: every boundary operations name in this memory, in any order, repeats allowed. */
  constructor(bounds: readonly number[]) {
    // Element 0 starts the first interval. Sorted as 32-bit integers where they fit (four times
    // faster than as doubles); the model compiles buffers of 2^31 elements and more.
    let small = true;
    for (const b of bounds) if (b > 0x7fffffff) small = false;
    const sorted = new Float64Array(bounds.length + 1);
    if (small) {
      const ints = new Int32Array(bounds.length + 1);
      ints.set(bounds);
      sorted.set(ints.sort());
    } else {
      sorted.set(bounds);
      sorted.sort();
    }
    let k = 0;
    for (let i = 0; i < sorted.length; i++)
      if (i === 0 || sorted[i] !== sorted[k - 1]) sorted[k++] = sorted[i] as number;
    this.starts = sorted.slice(0, k);
    this.writer = new Int32Array(k).fill(-1);
    this.head = new Int32Array(k).fill(-1);
    this.tail = new Int32Array(k).fill(-1);
  }

  /** The interval that starts at `at` (a boundary the constructor was given). */
  private find(at: number): number {
    const lo = lastAtMost(this.starts, at);
    invariant(this.starts[lo] === at, () => `interval boundary ${at} was not announced`);
    return lo;
  }

  /** The intervals [from, to) spans: [first, end). */
  private span(from: number, to: number): [number, number] {
    const i0 = this.find(from);
    return [i0, to === from ? i0 : this.find(to)];
  }

  /** Operations [from, to) depends on: the last writer, and also the readers when it writes. */
  depsOf(from: number, to: number, writes: boolean, into: Deps): void {
    if (from >= to) return;
    const [i0, i1] = this.span(from, to);
    for (let i = i0; i < i1; i++) {
      const w = this.writer[i] as number;
      if (w >= 0) into.add(w);
      if (writes)
        for (let k = this.head[i] as number; k >= 0; k = this.readerNext[k] as number)
          into.add(this.readerOp[k] as number);
    }
  }

  record(from: number, to: number, op: number, writes: boolean): void {
    if (from >= to) return;
    const [i0, i1] = this.span(from, to);
    for (let i = i0; i < i1; i++) {
      if (writes) {
        this.writer[i] = op;
        this.head[i] = -1;
        this.tail[i] = -1;
      } else {
        if (this.nodes === this.readerOp.length) {
          this.readerOp = grow(this.readerOp, 2 * this.nodes);
          this.readerNext = grow(this.readerNext, 2 * this.nodes);
        }
        const node = this.nodes++;
        this.readerOp[node] = op;
        this.readerNext[node] = -1;
        const last = this.tail[i] as number;
        if (last < 0) this.head[i] = node;
        else this.readerNext[last] = node;
        this.tail[i] = node;
      }
    }
  }
}

/** One operation's dependencies, each once: seen[op] holds the stamp of the operation that last added it. */
export class Deps {
  private seen = new Int32Array(64);
  private stamp = 0;
  list: number[] = [];
  /** Starts a new operation's set. */
  reset(): void {
    this.stamp++;
    this.list = [];
  }
  add(op: number): void {
    if (op >= this.seen.length) {
      const grown = new Int32Array(Math.max(op + 1, 2 * this.seen.length));
      grown.set(this.seen);
      this.seen = grown;
    }
    if (this.seen[op] === this.stamp) return;
    this.seen[op] = this.stamp;
    this.list.push(op);
  }
}
