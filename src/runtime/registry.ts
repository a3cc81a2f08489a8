/**
 * What the runtime knows about a comm it handed out (its store, abort watcher, timeout, whether
 * checked mode is on), looked up by the front API: `await checkCall(comm, fp)` before each
 * collective does nothing unless the comm came from cclab run / init with checked mode on.
 */
import type { Comm } from "../comm.js";
import type { KVStore } from "../kvstore.js";
import { checkFingerprint, type Fingerprint } from "./checked.js";
import type { AbortWatch } from "./guard.js";

export interface RankRuntime {
  /** World rank. */
  readonly rank: number;
  readonly size: number;
  /** null under a plain mpirun, where MPI itself is the rendezvous and there is no store. */
  readonly store: KVStore | null;
  readonly watch: AbortWatch;
  readonly timeoutMs: number;
  readonly checked: boolean;
}

const runtimes = new WeakMap<Comm, RankRuntime>();

export function attachRuntime(comm: Comm, rt: RankRuntime): void {
  runtimes.set(comm, rt);
}

/** The runtime behind `comm`, following wrapper layers (`inner`) down; undefined for a bare comm. */
export function runtimeOf(comm: Comm): RankRuntime | undefined {
  let c: Comm | undefined = comm;
  for (let i = 0; c && i < 16; i++) {
    const rt = runtimes.get(c);
    if (rt) return rt;
    c = (c as { inner?: Comm }).inner;
  }
  return undefined;
}

/**
 * Checked mode's hook for the front API: compares this call's fingerprint across the comm's
 * ranks when checked mode is on (no-op otherwise, and for a non-member's rank -1).
 */
export async function checkCall(comm: Comm, fp: Fingerprint): Promise<void> {
  const rt = runtimeOf(comm);
  if (!rt?.checked || !rt.store || comm.rank < 0) return;
  await checkFingerprint(rt.store, comm.rank, comm.size, fp, {
    timeoutMs: rt.timeoutMs,
    worldRanks: comm.worldRanks,
    scope: comm.worldRanks.join(","),
    watch: rt.watch,
  });
}
