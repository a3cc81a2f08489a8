/**
 * A stream of printed lines kept within a bound: the first KEEP_HEAD lines, the last KEEP_TAIL
 * (a ring), and a count of those dropped between them, so a program that prints without end
 * costs the page a fixed amount of memory and of drawing. Both the Worker (deciding what to
 * send) and the page (what to show) keep one per stream.
 */
import { KEEP_HEAD, KEEP_TAIL, MAX_LINE } from "./protocol.js";

/** A line cut to MAX_LINE characters, saying how many it had. */
export function clipLine(line: string): string {
  return line.length <= MAX_LINE ? line : `${line.slice(0, MAX_LINE)}… (${line.length - MAX_LINE} more characters)`;
}

export class Kept {
  readonly head: string[] = [];
  private readonly ring: string[] = [];
  private next = 0;
  /** Lines printed but kept in neither part. */
  dropped = 0;
  /** Lines printed in all. */
  total = 0;

  constructor(
    private readonly headMax = KEEP_HEAD,
    private readonly tailMax = KEEP_TAIL,
  ) {}

  add(line: string): void {
    this.total++;
    if (this.head.length < this.headMax) {
      this.head.push(line);
      return;
    }
    if (this.ring.length < this.tailMax) {
      this.ring.push(line);
      return;
    }
    this.ring[this.next] = line;
    this.next = (this.next + 1) % this.tailMax;
    this.dropped++;
  }

  /** Lines printed (elsewhere) and left out, before those added next. */
  skip(n: number): void {
    this.total += n;
    this.dropped += n;
  }

  /** The kept tail, oldest first. */
  tail(): string[] {
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  /** Empties the tail (the Worker, once it has sent it), returning it. */
  takeTail(): string[] {
    const t = this.tail();
    this.ring.length = 0;
    this.next = 0;
    return t;
  }

  /** The stream as the page shows it. */
  text(): string {
    const gap = this.dropped > 0 ? [`… ${this.dropped} line${this.dropped > 1 ? "s" : ""} not kept …`] : [];
    return [...this.head, ...gap, ...this.tail()].join("\n");
  }
}
