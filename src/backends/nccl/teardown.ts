/**
 * The end of a communicator's life on the nccl backend's device (device.ts): abort; on the
 * success path ncclCommFinalize, polled (never blocking) until NCCL has flushed what it still
 * holds, its proxy's queued sends included, then ncclCommDestroy; an error, or a finalize past the
 * deadline, aborts instead. At process exit finalizing communicators get a bounded synchronous
 * wait and everything else is aborted.
 *
 * Touches only the communicator calls (commAbort, commFinalize, commGetAsyncError, commDestroy)
 * and the device's set of live communicators; reports through the device's onAbort and asks it to
 * poll (wake). The device calls poll() from its own polling pass while anything finalizes.
 */
import { AbortError, EngineError, TimeoutError } from "../../core/errors.js";
import { toEngineError } from "../../native/load.js";
import { type NativeNccl, NCCL_RESULT } from "../../native/types.js";
import { asError, ncclErrorText, safe } from "./errors.js";
import type { CommRef } from "./work.js";

/** At process exit, the longest synchronous wait for communicators still finalizing. */
const EXIT_FINALIZE_MS = 30_000;

/** What teardown needs of the device. */
export interface TeardownHost {
  readonly native: NativeNccl;
  readonly timeoutMs: number;
  /** The live communicators (polled for async errors); one aborted or retired leaves it. */
  readonly comms: Set<CommRef>;
  readonly onAbort: (e: Error) => void;
  /** Poll soon: a communicator began finalizing. */
  wake(): void;
}

export class Teardown {
  /** Destroyed communicators being finalized, with their deadlines. */
  private readonly finalizing = new Map<CommRef, number>();
  private readonly finalizedWaiters = new Set<() => void>();

  constructor(private readonly host: TeardownHost) {}

  /** Some destroyed communicator is still finalizing. */
  get busy(): boolean {
    return this.finalizing.size > 0;
  }

  abort(c: CommRef, why: Error): void {
    if (c.aborted) return;
    c.aborted = why;
    this.host.comms.delete(c);
    try {
      this.host.native.commAbort(c.handle);
    } catch {
      // Already gone.
    }
  }

  /**
   * The success path's teardown of `c` (NcclComm.destroy): ncclCommFinalize, which flushes what
   * NCCL still holds for it (sends queued in its proxy included), polled until done, then
   * ncclCommDestroy. ncclCommAbort instead would drop those sends, and a peer still receiving
   * them would fail. An error, or no end within the timeout, aborts it.
   */
  retire(c: CommRef): void {
    this.host.comms.delete(c);
    if (c.aborted) return;
    let rc: number;
    try {
      rc = this.host.native.commFinalize(c.handle);
    } catch (e) {
      this.finalizeFailed(c, asError(toEngineError(e, `rank ${c.rank}: ncclCommFinalize`)));
      return;
    }
    if (rc === NCCL_RESULT.inProgress) {
      this.finalizing.set(c, Date.now() + this.host.timeoutMs);
      this.host.wake();
    } else {
      this.destroy(c);
    }
  }

  /** Resolves once no destroyed communicator is still finalizing. */
  finalized(): Promise<void> {
    if (this.finalizing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.finalizedWaiters.add(resolve));
  }

  /** One pass over the finalizing communicators; true if any finished. `deadlines` false: exit's own bound applies. */
  poll(now: number, deadlines = true): boolean {
    const native = this.host.native;
    let progressed = false;
    for (const [c, deadline] of [...this.finalizing]) {
      const code = safe(() => native.commGetAsyncError(c.handle), NCCL_RESULT.internalError);
      if (code === NCCL_RESULT.success) {
        this.finalizing.delete(c);
        this.destroy(c);
      } else if (code !== NCCL_RESULT.inProgress) {
        this.finalizing.delete(c);
        const err = new EngineError("nccl", code, ncclErrorText(native, c, code), `rank ${c.rank}: ncclCommFinalize`);
        this.finalizeFailed(c, err);
      } else if (deadlines && now > deadline) {
        this.finalizing.delete(c);
        this.finalizeFailed(
          c,
          new TimeoutError(`rank ${c.rank}: ncclCommFinalize did not complete within ${this.host.timeoutMs / 1000} s`),
        );
      } else {
        continue;
      }
      progressed = true;
    }
    if (this.finalizing.size === 0) {
      for (const w of this.finalizedWaiters) w();
      this.finalizedWaiters.clear();
    }
    return progressed;
  }

  /**
   * Process exit: communicators still finalizing get a bounded synchronous wait (there is no
   * event loop left to poll from) unless the process is `failing` (then, as everything else still
   * live, initialising ones included, they are aborted, so CUDA teardown cannot hang on a stuck
   * kernel and a failed rank does not linger).
   */
  exit(failing: boolean): void {
    const until = failing ? 0 : Date.now() + Math.min(this.host.timeoutMs, EXIT_FINALIZE_MS);
    const nap = new Int32Array(new SharedArrayBuffer(4));
    while (this.finalizing.size > 0 && Date.now() < until) {
      this.poll(Date.now(), false);
      if (this.finalizing.size > 0) Atomics.wait(nap, 0, 0, 1);
    }
    for (const c of [...this.finalizing.keys()]) {
      this.finalizing.delete(c);
      this.abort(c, new AbortError("process exit while ncclCommFinalize was still running"));
    }
    for (const w of this.finalizedWaiters) w();
    this.finalizedWaiters.clear();
    for (const c of [...this.host.comms]) this.abort(c, new AbortError("process exit"));
  }

  private destroy(c: CommRef): void {
    try {
      this.host.native.commDestroy(c.handle);
    } catch (e) {
      this.host.onAbort(asError(toEngineError(e, `rank ${c.rank}: ncclCommDestroy`)));
    }
  }

  /** Finalizing failed: abort instead, and say so (nobody waits on a destroyed communicator). */
  private finalizeFailed(c: CommRef, err: Error): void {
    this.abort(c, err);
    this.host.onAbort(new AbortError(`${err.message}; ncclCommAbort called instead`));
  }
}
