/**
 * How the nccl backend words NCCL's errors for a communicator (ncclErrorText), and two guards
 * for calls whose failure has nothing left to say. Reads NCCL's error strings; changes nothing.
 */
import { type NativeNccl, NCCL_RESULT } from "../../native/types.js";
import { sharedGpuHint } from "./env.js";
import type { CommRef } from "./work.js";

/**
 * NCCL's text for an error code plus ncclGetLastError where that is fresh (the addon returns ''
 * when the process-wide text did not change since the last call that succeeded), and what a
 * remote error nearly always means here.
 */
export function ncclErrorText(native: NativeNccl, c: CommRef, code: number): string {
  const last = safe(() => native.lastError(c.handle), "");
  let msg = `${safe(() => native.errorString(code), `NCCL error ${code}`)}${last ? ` (${last})` : ""}`;
  if (code === NCCL_RESULT.remoteError) {
    msg +=
      "; a peer rank's process exited or closed its connection while this rank still had operations with it" +
      " (did a rank return, fail or destroy its communicator early?)";
  }
  return msg + sharedGpuHint(last);
}

export const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

export function safe<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}
