/**
 * Checked mode (CCLAB_CHECK=1, torch's TORCH_DISTRIBUTED_DEBUG=DETAIL): before each collective
 * every rank publishes a fingerprint of its call on the store and compares everyone's, so a
 * mismatched count, root, dtype, op or collective fails on every rank with one message naming the
 * ranks and fields that differ, before any data moves (instead of a hang or silent corruption).
 */

import type { CollectiveEvent, Comm } from "../comm.js";
import { AbortError, InvalidArgumentError, MismatchError, TimeoutError } from "../core/errors.js";
import { formatDuration } from "../core/timer.js";
import { type KVStore, ownKey } from "../kvstore.js";
import { CommLayer } from "../layer.js";
import { type PlanRunner, planRunnerOf } from "../schedule/executor.js";
import type { AbortWatch } from "./guard.js";

/** What every rank compares: the call the front API announces (src/comm.ts). */
export type Fingerprint = CollectiveEvent;

const FIELDS = ["seq", "collective", "algorithm", "count", "dtype", "op", "root"] as const;

export interface CheckOptions {
  timeoutMs?: number;
  /** World ranks of the communicator's members (each writes its fingerprint under its own key). Default 0..size-1. */
  worldRanks?: readonly number[];
  /** Keeps subcommunicators apart on the store, e.g. their world ranks joined: '0,2,4'. Default 'world'. */
  scope?: string;
  /** Fail at once (AbortError) when the job is aborted while waiting for the others' fingerprints. */
  watch?: AbortWatch;
}

/** True when CCLAB_CHECK asks for checked mode. */
export function checkedFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CCLAB_CHECK;
  return v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
}

const calls = new WeakMap<KVStore, Map<string, number>>();

function rankList(ranks: number[]): string {
  return ranks.length === 1 ? `rank ${ranks[0]}` : `ranks ${ranks.join(", ")}`;
}

/** The fields where the fingerprints differ, each as 'count (ranks 0, 1: 8; rank 2: 9)'; empty if none. */
export function compareFingerprints(fps: readonly Fingerprint[]): string[] {
  const out: string[] = [];
  for (const field of FIELDS) {
    const groups = new Map<string, number[]>();
    fps.forEach((fp, r) => {
      const v = JSON.stringify(fp[field]);
      const g = groups.get(v);
      if (g) g.push(r);
      else groups.set(v, [r]);
    });
    if (groups.size > 1) {
      const parts = [...groups].map(([v, ranks]) => `${rankList(ranks)}: ${v}`);
      out.push(`${field} (${parts.join("; ")})`);
    }
  }
  return out;
}

/**
 * Publishes this rank's fingerprint and resolves once every rank's matches; otherwise throws
 * MismatchError (the same text on every rank, since every rank compares the same data).
 */
export async function checkFingerprint(
  store: KVStore,
  rank: number,
  size: number,
  fp: Fingerprint,
  options: CheckOptions = {},
): Promise<void> {
  if (!Number.isInteger(size) || size < 1) {
    throw new InvalidArgumentError({ rank, op: "checkFingerprint", arg: "size" }, `must be >= 1, got ${size}`);
  }
  if (!Number.isInteger(rank) || rank < 0 || rank >= size) {
    throw new InvalidArgumentError(
      { rank, op: "checkFingerprint", arg: "rank" },
      `must be in [0, ${size}), got ${rank}`,
    );
  }
  if (size === 1) return;
  const scope = options.scope ?? "world";
  const world = options.worldRanks ?? Array.from({ length: size }, (_, r) => r);
  let perScope = calls.get(store);
  if (!perScope) calls.set(store, (perScope = new Map()));
  // Keys follow this rank's own call count, not fp.seq, so a differing seq is reported, not waited on.
  // Per rank too: sim ranks share one store object.
  const counterKey = `${scope}#${rank}`;
  const n = perScope.get(counterKey) ?? 0;
  perScope.set(counterKey, n + 1);
  // Each rank writes only its own key (a TCP store binds every connection to one rank).
  const key = (r: number, call: number) => ownKey(world[r]!, `check/${scope}/${call}`);
  const keys = Array.from({ length: size }, (_, r) => key(r, n));
  await store.set(keys[rank]!, JSON.stringify(fp));

  const timeoutMs = options.timeoutMs ?? 300_000;
  const what = `rank ${rank}: ${fp.collective} #${fp.seq}: checked mode`;
  try {
    await raceAbort(store.wait(keys, timeoutMs), options.watch, what);
  } catch (e) {
    if (!(e instanceof TimeoutError)) throw e;
    const missing: number[] = [];
    for (let r = 0; r < size; r++) if (!(await store.check([keys[r]!]))) missing.push(r);
    throw new TimeoutError(
      `${what}: ${rankList(missing)} did not reach this collective within ${formatDuration(timeoutMs)} ` +
        `(they called a different number of collectives, or are stuck)`,
    );
  }
  const fps = (await Promise.all(keys.map((k) => store.get(k, timeoutMs)))).map(
    (b) => JSON.parse(b.toString("utf8")) as Fingerprint,
  );
  // Every rank has published call n, so every rank has read call n - 1: nobody needs this rank's key of it.
  if (n > 0) await store.delete(key(rank, n - 1));
  const diffs = compareFingerprints(fps);
  if (diffs.length) {
    throw new MismatchError(`${what}: ranks disagree on the call, no data moved: ${diffs.join("; ")}`);
  }
}

function raceAbort<T>(p: Promise<T>, watch: AbortWatch | undefined, what: string): Promise<T> {
  if (!watch) return p;
  return new Promise<T>((resolve, reject) => {
    const off = watch.on((info) => reject(new AbortError(`${what}: aborted: ${info.reason}`)));
    p.then(
      (v) => {
        off();
        resolve(v);
      },
      (e: unknown) => {
        off();
        reject(e);
      },
    );
  });
}

export interface CheckedOptions {
  readonly store: KVStore;
  readonly timeoutMs: number;
  readonly watch?: AbortWatch;
}

/**
 * The layer that makes a communicator (and the communicators split from it) compare every
 * collective's fingerprint across its ranks before any data moves.
 */
export class CheckedComm extends CommLayer {
  constructor(
    inner: Comm,
    private readonly options: CheckedOptions,
  ) {
    super(inner);
  }
  /** Checked mode compares calls before they start: the plans themselves may take the fast path. */
  get planRunner(): PlanRunner | undefined {
    return planRunnerOf(this.inner);
  }
  override async beforeCollective(e: CollectiveEvent): Promise<void> {
    await super.beforeCollective(e);
    if (this.rank < 0) return;
    await checkFingerprint(this.options.store, this.rank, this.size, e, {
      timeoutMs: this.options.timeoutMs,
      worldRanks: this.worldRanks,
      scope: this.worldRanks.join(","),
      watch: this.options.watch,
    });
  }
  async split(ranks: readonly number[]): Promise<Comm> {
    return new CheckedComm(await this.inner.split(ranks), this.options);
  }
}

/** comm in checked mode when `on`, else comm itself. */
export function withChecks(comm: Comm, on: boolean, options: CheckedOptions): Comm {
  return on ? new CheckedComm(comm, options) : comm;
}
