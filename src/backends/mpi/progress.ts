/**
 * Progress for the mpi backend without blocking Node's event loop: every pending operation is
 * polled from the loop (MPI_Improbe for receives waiting to match, MPI_Testsome for posted
 * requests). Polls run on setImmediate while something completes, backing off to 1 ms timers
 * after a stretch of idle polls, so a rank waiting on a slow peer costs little CPU and other
 * JavaScript (and other ranks depending on this one's sends) keeps running.
 */
import type { NativeMpi } from "../../native/types.js";

/** One operation the poller drives to completion. */
export interface Pollable {
  /** Advances the operation without blocking (probe, post); returns the MPI request to test, if any. */
  advance(): number | undefined;
  /** The posted request completed with `bytes`, or failed. */
  complete(bytes: number | Error): void;
  /** ms since the epoch after which the operation times out. */
  readonly deadline: number;
  timeout(): void;
  settled: boolean;
}

const IDLE_IMMEDIATE_POLLS = 256;

export class Progress {
  private readonly ops = new Set<Pollable>();
  private scheduled = false;
  private idle = 0;

  constructor(private readonly mpi: NativeMpi) {}

  add(op: Pollable): void {
    this.ops.add(op);
    this.idle = 0;
    this.schedule();
  }

  /** One non-blocking pass over every pending operation (also used by Work.test()). */
  poll(): void {
    let progressed = false;
    const byRequest = new Map<number, Pollable>();
    for (const op of this.ops) {
      if (op.settled) {
        this.ops.delete(op);
        continue;
      }
      const req = op.advance();
      if (req !== undefined) byRequest.set(req, op);
      else if (op.settled) progressed = true;
    }
    if (byRequest.size > 0) {
      for (const r of this.mpi.testsome([...byRequest.keys()])) {
        const op = byRequest.get(r.request)!;
        op.complete(r.error ? Object.assign(new Error(r.error.message), { code: r.error.code }) : (r.bytes ?? 0));
        progressed = true;
      }
    }
    const now = Date.now();
    for (const op of this.ops) {
      if (op.settled) this.ops.delete(op);
      else if (now > op.deadline) {
        op.timeout();
        this.ops.delete(op);
      }
    }
    this.idle = progressed ? 0 : this.idle + 1;
  }

  private schedule(): void {
    if (this.scheduled || this.ops.size === 0) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.poll();
      this.schedule();
    };
    if (this.idle < IDLE_IMMEDIATE_POLLS) setImmediate(run);
    else setTimeout(run, 1);
  }
}
