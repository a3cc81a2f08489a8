/**
 * What the nccl backend's device (device.ts) queues and tracks: the communicator it needs to know
 * (CommRef), an isend/irecv waiting for the next group (P2PItem, NcclWork), and a posted group or
 * collective until its kernels are on the stream (Enqueue). Plain records and their promises: the
 * NCCL and CUDA calls are the device's.
 */
import type { DeviceBuffer } from "./buffer.js";

/** What the device needs of a communicator. */
export interface CommRef {
  readonly handle: number;
  readonly rank: number;
  aborted?: Error;
}

export interface P2PItem {
  readonly kind: "send" | "recv";
  readonly comm: CommRef;
  /** Kept so the memory outlives the (possibly still enqueuing) group. */
  readonly buffer: DeviceBuffer;
  readonly off: number;
  readonly count: number;
  readonly peer: number;
  /** 'rank 1: send to peer 2 (label)'. */
  readonly what: string;
}

/** A posted NCCL group (or collective) until its kernels are on the stream. */
export class Enqueue {
  state: "enqueuing" | "enqueued" | "failed" = "enqueuing";
  /** The completion event (0: none, or given back once the group was seen complete). */
  event = 0;
  /** Position of the event on the stream (see NcclDevice.passed). */
  seq = 0;
  /** Seen complete on the device. */
  complete = false;
  deadline = Number.POSITIVE_INFINITY;
  readonly enqueued: Promise<void>;
  private resolveFn!: () => void;
  private rejectFn!: (e: unknown) => void;
  constructor(
    readonly comms: readonly CommRef[],
    readonly what: string,
    readonly keep: readonly unknown[],
    /** isend/irecv in it may ask whether it completed: record an event after it. */
    readonly needsEvent = false,
    /** A communicator being created (commReady), not work on the stream. */
    readonly init = false,
  ) {
    this.enqueued = new Promise((res, rej) => {
      this.resolveFn = res;
      this.rejectFn = rej;
    });
    this.enqueued.catch(() => {});
  }
  done(): void {
    if (this.state !== "enqueuing") return;
    this.state = "enqueued";
    this.resolveFn();
  }
  fail(e: unknown): void {
    if (this.state !== "enqueuing") return;
    this.state = "failed";
    this.rejectFn(e);
  }
}

/** What an NcclWork asks of its device (NcclDevice): an interface, so work.ts and device.ts do not import each other. */
export interface GroupIssuer {
  flush(extra: P2PItem[], what: string): Promise<void>;
  busy(): boolean;
  issueGroup(extra: P2PItem[], what: string): Enqueue | undefined;
  completed(g: Enqueue | undefined): boolean;
}

/** An isend/irecv: held until the next flush, then settled when its group is enqueued. */
export class NcclWork {
  group: Enqueue | undefined;
  error: unknown;
  constructor(
    private readonly device: GroupIssuer,
    readonly item: P2PItem,
  ) {}
  async wait(): Promise<void> {
    if (this.error !== undefined) throw this.error;
    if (!this.group) await this.device.flush([], `${this.item.what}: wait`);
    if (this.error !== undefined) throw this.error;
    await this.group?.enqueued;
  }
  test(): boolean {
    if (this.error !== undefined) return true;
    if (!this.group) {
      if (this.device.busy()) return false;
      try {
        this.device.issueGroup([], `${this.item.what}: test`);
      } catch {
        return true;
      }
    }
    return this.device.completed(this.group);
  }
}
