/**
 * Timeouts and aborts for any backend: `guard(comm, { store, rank })` returns a Comm whose every
 * blocking call races a deadline and the job's abort on the store. A call that runs past its
 * deadline fails with TimeoutError (naming rank, operation, peer and the op's label, i.e. the
 * algorithm step) and publishes the abort, so every other rank's pending and later calls fail
 * within moments with AbortError naming who aborted and why. Without a store (MPI started by a
 * plain mpirun) the abort stays local and `onAbort` (MPI_Abort) ends the job. Backends stay unchanged.
 */

import type { Comm, OpOptions, P2POp, Work } from "../comm.js";
import type { Buf } from "../core/buffer.js";
import { AbortError, InvalidArgumentError, TimeoutError } from "../core/errors.js";
import { checkTimeoutMs, deadline, formatDuration } from "../core/timer.js";
import { ABORT_KEY, type AbortRecord, type KVStore, parseAbort } from "../kvstore.js";
import { CommLayer, findLayer } from "../layer.js";
import { type PlanRunner, planRunnerOf } from "../schedule/executor.js";
import type { StoreClient } from "./store/index.js";

export { findLayer };

export const DEFAULT_TIMEOUT_MS = 300_000;

/** CCLAB_TIMEOUT (seconds) if set, else 300 s, as torch's default process-group timeout. */
export function defaultTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CCLAB_TIMEOUT;
  if (raw === undefined || raw === "") return DEFAULT_TIMEOUT_MS;
  return secondsFromEnv(raw, "CCLAB_TIMEOUT");
}

/** The least time ranks get to join a job: they start at different times (Node and the program load for seconds on a busy machine). */
export const JOIN_FLOOR_MS = 30_000;

/**
 * How long joining may take (connecting to the store, AUTH, waiting for every rank):
 * CCLAB_JOIN_TIMEOUT seconds if set, else the operation timeout but at least 30 s (torchrun
 * likewise gives its rendezvous its own timeout).
 */
export function joinTimeoutMs(timeoutMs: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CCLAB_JOIN_TIMEOUT;
  if (raw === undefined || raw === "") return Math.max(timeoutMs, JOIN_FLOOR_MS);
  return secondsFromEnv(raw, "CCLAB_JOIN_TIMEOUT");
}

function secondsFromEnv(raw: string, name: string): number {
  const s = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(s) || s <= 0) {
    throw new InvalidArgumentError(
      { op: "init", arg: name },
      `must be a positive, finite number of seconds, got ${JSON.stringify(raw)}`,
    );
  }
  return s * 1000;
}

/** Who aborted and why (the store's record). */
export type AbortInfo = AbortRecord;

/**
 * Watches one job's abort key (and, on a TCP store, the connection itself) and tells every
 * listener once. Shared by a guarded comm and the comms split from it.
 */
export class AbortWatch {
  private info: AbortInfo | null = null;
  private readonly listeners = new Set<(info: AbortInfo) => void>();
  private stopped = false;

  /** `store` null: aborts stay in this process (fire()). */
  constructor(readonly store: KVStore | null) {
    if (!store) return;
    store.get(ABORT_KEY, Number.POSITIVE_INFINITY).then(
      (v) => this.fire(parseAbort(v)),
      (e: unknown) => {
        if (!this.stopped) this.fire({ rank: -1, reason: e instanceof Error ? e.message : String(e) });
      },
    );
    const lost = (store as Partial<StoreClient>).onLost;
    if (typeof lost === "function") lost.call(store, (e: Error) => this.fire({ rank: -1, reason: e.message }));
  }

  get aborted(): AbortInfo | null {
    return this.info;
  }

  fire(info: AbortInfo): void {
    if (this.info || this.stopped) return;
    this.info = info;
    for (const l of [...this.listeners]) l(info);
  }

  on(listener: (info: AbortInfo) => void): () => void {
    if (this.info) {
      listener(this.info);
      return () => {};
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops reporting (a clean shutdown closes the store connection on purpose). */
  stop(): void {
    this.stopped = true;
    this.listeners.clear();
  }
}

export interface GuardOptions {
  /** The job's store; null: no store (aborts are local, onAbort ends the job). */
  store: KVStore | null;
  /** This process's world rank, as the messages name it. */
  rank: number;
  /** Per blocking call; default CCLAB_TIMEOUT or 300 s. */
  timeoutMs?: number;
  /** Share one watcher between guards of the same job (the launcher's sim ranks, split comms). */
  watch?: AbortWatch;
  /** Backend-specific abort (ncclCommAbort, MPI_Abort), called once when this comm is aborted. */
  onAbort?: (info: AbortInfo) => void;
  /** Counts this rank's calls in progress (shared with split comms): the sim launcher asks who is stuck elsewhere. */
  activity?: { inFlight: number };
  /**
   * Whether a call in progress keeps the process alive (default true: a process rank blocked in a
   * call waits for the network, and must stay up to hear an abort). The sim launcher says false:
   * there a rank blocked in a call waits on other ranks of the same process, and when nothing is
   * left to run, it names the rank stuck outside cclab (beforeExit) instead of waiting out the timeout.
   */
  holdProcess?: boolean;
}

interface Site {
  op: string;
  peer?: string;
  label?: string;
}

function describe(rank: number, s: Site): string {
  return `rank ${rank}: ${s.op}${s.peer ? ` ${s.peer}` : ""}${s.label ? ` at '${s.label}'` : ""}`;
}

function whoAborted(info: AbortInfo): string {
  return info.rank >= 0 && !info.reason.startsWith(`rank ${info.rank}`)
    ? `rank ${info.rank}: ${info.reason}`
    : info.reason;
}

/** The communicator a guard hands out. */
export class GuardedComm extends CommLayer {
  readonly timeoutMs: number;
  readonly watch: AbortWatch;
  private readonly unwatch: () => void;
  private calledOnAbort = false;

  constructor(
    inner: Comm,
    private readonly options: GuardOptions,
  ) {
    super(inner);
    this.timeoutMs = checkTimeoutMs(options.timeoutMs ?? defaultTimeoutMs(), {
      rank: options.rank,
      op: "guard",
      arg: "timeoutMs",
    });
    this.watch = options.watch ?? new AbortWatch(options.store);
    this.unwatch = this.watch.on((info) => {
      if (this.calledOnAbort) return;
      this.calledOnAbort = true;
      options.onAbort?.(info);
    });
  }

  /** The job's store (null without one), as this rank's connection to it. */
  get store(): KVStore | null {
    return this.options.store;
  }

  private peerName(peer: number, dir: "to" | "from"): string {
    const w = this.inner.worldRanks[peer];
    return `${dir} peer ${peer}${w !== undefined && w !== peer ? ` (world rank ${w})` : ""}`;
  }

  /**
   * Races `work` against the deadline and the abort; the loser's outcome is ignored, but for a
   * value the work gave too late, which `discard` releases (a communicator split past its deadline).
   */
  private run<T>(site: Site, work: () => Promise<T>, discard?: (v: T) => void): Promise<T> {
    const me = this.options.rank;
    const already = this.watch.aborted;
    if (already) return Promise.reject(new AbortError(`${describe(me, site)}: aborted: ${whoAborted(already)}`));
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const activity = this.options.activity;
      if (activity) activity.inFlight++;
      const finish = (f: () => void) => {
        if (settled) return;
        settled = true;
        if (activity) activity.inFlight--;
        cancelTimer();
        off();
        f();
      };
      const started = performance.now();
      const timedOut = () => {
        const msg = `${describe(me, site)} timed out after ${formatDuration(this.timeoutMs)}; the communicator is aborted`;
        finish(() => reject(new TimeoutError(msg)));
        // The others learn from the store; the first abort published wins and names its rank.
        this.publish({ rank: me, reason: msg });
      };
      const cancelTimer = deadline(this.timeoutMs, timedOut, { ref: this.options.holdProcess ?? true });
      const off = this.watch.on((info) => {
        if (settled) return;
        finish(() => reject(new AbortError(`${describe(me, site)}: aborted: ${whoAborted(info)}`)));
      });
      let p: Promise<T>;
      try {
        p = work();
      } catch (e) {
        finish(() => reject(e));
        return;
      }
      p.then(
        // A call that ran past its deadline fails though its timer has not fired yet (timers are
        // coarser than a short timeout): whether it fails never depends on which one came first.
        (v) => {
          if (!settled && performance.now() - started <= this.timeoutMs) return finish(() => resolve(v));
          discard?.(v);
          if (!settled) timedOut();
        },
        (e: unknown) => finish(() => reject(e)),
      );
    });
  }

  override send(view: Buf, peer: number, options?: OpOptions): Promise<void> {
    const site = { op: "send", peer: this.peerName(peer, "to"), label: options?.label };
    return this.run(site, () => this.inner.send(view, peer, options));
  }
  override recv(view: Buf, peer: number, options?: OpOptions): Promise<void> {
    const site = { op: "recv", peer: this.peerName(peer, "from"), label: options?.label };
    return this.run(site, () => this.inner.recv(view, peer, options));
  }
  private guardWork(site: Site, post: () => Work): Work {
    const already = this.watch.aborted;
    if (already) throw new AbortError(`${describe(this.options.rank, site)}: aborted: ${whoAborted(already)}`);
    const w = post();
    let waited: Promise<void> | null = null;
    return {
      // The deadline runs from the first wait, as torch's Work.wait(timeout).
      wait: () => (waited ??= this.run(site, () => w.wait())),
      test: () => w.test(),
    };
  }
  private guardedRunner: { inner: PlanRunner; outer: PlanRunner } | undefined;

  /**
   * The backend's plan runner (the MPI fast path), a whole collective raced against this guard's
   * deadline and abort, as torch times a collective; the loser's transfers are cancelled.
   */
  get planRunner(): PlanRunner | undefined {
    const inner = planRunnerOf(this.inner);
    if (!inner) return undefined;
    if (this.guardedRunner?.inner !== inner) {
      const outer: PlanRunner = {
        runPlan: (plan, views, options) => {
          const stop = new AbortController();
          return this.run({ op: plan.alg.collective, label: options.label }, () =>
            inner.runPlan(plan, views, { ...options, signal: stop.signal }),
          ).catch((e: unknown) => {
            stop.abort(e);
            throw e;
          });
        },
      };
      this.guardedRunner = { inner, outer };
    }
    return this.guardedRunner.outer;
  }
  override isend(view: Buf, peer: number, options?: OpOptions): Work {
    const site = { op: "isend", peer: this.peerName(peer, "to"), label: options?.label };
    return this.guardWork(site, () => this.inner.isend(view, peer, options));
  }
  override irecv(view: Buf, peer: number, options?: OpOptions): Work {
    const site = { op: "irecv", peer: this.peerName(peer, "from"), label: options?.label };
    return this.guardWork(site, () => this.inner.irecv(view, peer, options));
  }
  override group(ops: readonly P2POp[], options?: OpOptions): Promise<void> {
    const peers = ops.map((o) => `${o.kind} ${o.kind === "send" ? "to" : "from"} ${o.peer}`).join(", ");
    return this.run({ op: "group", peer: `(${peers})`, label: options?.label ?? ops[0]?.label }, () =>
      this.inner.group(ops, options),
    );
  }
  async split(ranks: readonly number[]): Promise<Comm> {
    const sub = await this.run(
      { op: "split", peer: `[${ranks.join(", ")}]` },
      () => this.inner.split(ranks),
      (late) => late.destroy(),
    );
    return new GuardedComm(sub, { ...this.options, watch: this.watch, timeoutMs: this.timeoutMs });
  }
  override synchronize(): Promise<void> {
    return this.run({ op: "synchronize" }, () => this.inner.synchronize());
  }
  /** Fires the abort here and publishes it to the others (no store: here only, and onAbort ends the job). */
  private publish(info: AbortInfo): void {
    this.watch.fire(info);
    this.options.store?.abort(info.rank, info.reason).catch(() => {});
  }

  /** Aborts this job from outside a call (a failed rank publishes its error this way). */
  async abort(reason: string): Promise<AbortInfo> {
    const info = { rank: this.options.rank, reason };
    this.watch.fire(info);
    return this.options.store ? this.options.store.abort(info.rank, info.reason) : info;
  }
  override destroy(): void {
    this.unwatch();
    this.inner.destroy();
  }
}

export function guard(comm: Comm, options: GuardOptions): GuardedComm {
  return new GuardedComm(comm, options);
}
