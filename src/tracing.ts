/**
 * A Comm wrapper that records a TraceEvent for everything its inner comm does, so a backend that
 * does not record traces itself (mpi, nccl) draws the same pictures as sim. Events name world
 * ranks, carry the caller's label, and are timed in microseconds on a clock every process on one
 * machine shares exactly (sharedClockMicros: the kernel's monotonic clock): start when the operation was
 * posted, end when it was seen complete. Traces from several processes merge by concatenation.
 *
 * Timing notes: a group's members all end when the group completes (the group is one call);
 * isend/irecv end when wait() settles or test() first says done, which is when this process saw
 * the completion. On a stream-ordered backend (nccl) these are host enqueue times, not device
 * times. Only successful operations are recorded, as sim does. sim records its own (logical)
 * trace; wrapping a sim comm is for tests comparing the two.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dataView } from "./checks.js";
import type { Comm, OpOptions, P2POp, Work } from "./comm.js";
import type { Buf, View } from "./core/buffer.js";
import { type DType, dtypeInfo } from "./core/dtype.js";
import type { ReduceOp } from "./core/op.js";
import { CommLayer } from "./layer.js";
import { Trace, type TraceEvent, type TraceKind } from "./trace.js";

/**
 * Microseconds on a clock every process of one machine reads alike: the kernel's monotonic clock
 * (process.hrtime, CLOCK_MONOTONIC on Linux), anchored at the machine's boot time from /proc/stat
 * so values read as time since the Unix epoch. performance.timeOrigin is not such a clock: each
 * process estimates its own origin, and two ranks' estimates differ by up to hundreds of µs, which
 * drew messages received before they were sent. Across machines each host's clock is its own
 * (aligned only to within a second of their boot times): read a multi-host trace per host.
 */
export function sharedClockMicros(): number {
  anchor ??= bootMicros();
  return anchor + Number(process.hrtime.bigint()) / 1000;
}
let anchor: number | undefined;

/** The machine's boot time in µs since the epoch where the kernel says it (Linux), else this process's estimate. */
function bootMicros(): number {
  try {
    const btime = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1];
    if (btime) return Number(btime) * 1e6;
  } catch {
    // Not Linux: fall through.
  }
  return Math.round((performance.timeOrigin + performance.now()) * 1000 - Number(process.hrtime.bigint()) / 1000);
}

export interface TracingOptions {
  /** The clock, in microseconds (default sharedClockMicros); tests may pass their own. */
  readonly now?: () => number;
}

export class TracingComm extends CommLayer {
  private readonly now: () => number;

  constructor(
    inner: Comm,
    readonly trace: Trace,
    options: TracingOptions = {},
  ) {
    super(inner);
    this.now = options.now ?? sharedClockMicros;
  }

  private world(rank: number): number {
    return this.inner.worldRanks[rank] ?? rank;
  }

  private event(
    kind: TraceKind,
    v: View,
    peer: number | undefined,
    label: string | undefined,
    start: number,
    end: number,
  ): void {
    const dtype: DType = v.buffer.dtype;
    this.trace.record({
      rank: this.world(this.inner.rank),
      kind,
      ...(peer !== undefined ? { peer: this.world(peer) } : {}),
      count: v.count,
      dtype,
      bytes: v.count * dtypeInfo(dtype).bytes,
      ...(label !== undefined ? { label } : {}),
      start,
      end,
    });
  }

  override send(v: Buf, peer: number, options?: OpOptions): Promise<void> {
    const start = this.now();
    return this.inner.send(v, peer, options).then(() => {
      this.event("send", dataView(v) as View, peer, options?.label, start, this.now());
    });
  }

  override recv(v: Buf, peer: number, options?: OpOptions): Promise<void> {
    const start = this.now();
    return this.inner.recv(v, peer, options).then(() => {
      this.event("recv", dataView(v) as View, peer, options?.label, start, this.now());
    });
  }

  /** Records the work's event once, the first time this process sees it complete. */
  private traced(kind: "send" | "recv", v: View, peer: number, options: OpOptions | undefined): Work {
    // Stamped before the post: a message can arrive (and its receive be stamped) while isend runs.
    const start = this.now();
    const w = kind === "send" ? this.inner.isend(v, peer, options) : this.inner.irecv(v, peer, options);
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      this.event(kind, v, peer, options?.label, start, this.now());
    };
    return {
      wait: () => w.wait().then(record),
      test: () => {
        const done = w.test();
        // test() counts a failed operation as settled too; only a completed one has an event.
        if (done) w.wait().then(record, () => {});
        return done;
      },
    };
  }

  override isend(v: Buf, peer: number, options?: OpOptions): Work {
    return this.traced("send", dataView(v) as View, peer, options);
  }

  override irecv(v: Buf, peer: number, options?: OpOptions): Work {
    return this.traced("recv", dataView(v) as View, peer, options);
  }

  override async group(ops: readonly P2POp[], options?: OpOptions): Promise<void> {
    const start = this.now();
    await this.inner.group(ops, options);
    const end = this.now();
    for (const o of ops) this.event(o.kind, dataView(o.view) as View, o.peer, o.label ?? options?.label, start, end);
  }

  /** The sub-communicator, traced into the same Trace. */
  async split(ranks: readonly number[]): Promise<Comm> {
    return new TracingComm(await this.inner.split(ranks), this.trace, { now: this.now });
  }

  private local(kind: "copy" | "reduce" | "scale", dst: View, f: () => void): void {
    const start = this.now();
    f();
    this.event(kind, dst, undefined, undefined, start, this.now());
  }

  override copy(dst: View, src: View): void {
    this.local("copy", dst, () => this.inner.copy(dst, src));
  }
  override reduceInto(dst: View, src: View, op: ReduceOp, a?: View): void {
    this.local("reduce", dst, () => this.inner.reduceInto(dst, src, op, a));
  }
  override scale(dst: View, src: View, mul: number, div: number): void {
    this.local("scale", dst, () => this.inner.scale(dst, src, mul, div));
  }
}

/** Wraps comm so everything it does is recorded into trace (world ranks, microseconds). */
export function withTracing(comm: Comm, trace: Trace, options: TracingOptions = {}): TracingComm {
  return new TracingComm(comm, trace, options);
}

/**
 * Merges per-process traces into one, times shifted so the earliest start is 0 and rounded to
 * nanoseconds (microsecond values with three decimals), ordered by start then rank.
 */
export function mergeTraces(parts: readonly (readonly TraceEvent[])[]): TraceEvent[] {
  const all = parts.flat();
  if (all.length === 0) return [];
  let t0 = Number.POSITIVE_INFINITY;
  for (const e of all) t0 = Math.min(t0, e.start);
  const shift = (t: number) => Math.round((t - t0) * 1000) / 1000;
  return all
    .map((e, i) => ({ e: { ...e, start: shift(e.start), end: shift(e.end) }, i }))
    .sort((a, b) => a.e.start - b.e.start || a.e.rank - b.e.rank || a.i - b.i)
    .map(({ e }) => e);
}

/** The environment variable `cclab run --trace` sets for process ranks: the directory each rank writes its events to. */
export const TRACE_DIR_ENV = "CCLAB_TRACE_DIR";

/** A rank's recorder for `cclab run --trace`: the comm to hand the program, and the write at its end. */
export interface RankRecorder {
  readonly comm: Comm;
  /** Writes this rank's events (so far) to <dir>/rank-<k>.json; safe to call more than once. */
  write(): void;
}

/**
 * Under `cclab run --trace` (CCLAB_TRACE_DIR set), wraps a process rank's comm so every p2p call,
 * collective step and local operation it makes is recorded; otherwise undefined. The launcher
 * merges the ranks' files (readRankTraces).
 */
export function rankRecorderFromEnv(comm: Comm, env: NodeJS.ProcessEnv = process.env): RankRecorder | undefined {
  const dir = env[TRACE_DIR_ENV];
  if (!dir) return undefined;
  const trace = new Trace();
  const traced = withTracing(comm, trace);
  const rank = comm.worldRanks[comm.rank] ?? comm.rank;
  return {
    comm: traced,
    write: () => {
      try {
        writeFileSync(join(dir, `rank-${rank}.json`), JSON.stringify(trace.events));
      } catch (e) {
        // The launcher says this rank left no trace; the rank's own failure, if any, stays the story.
        process.stderr.write(`rank ${rank}: could not write its trace to ${dir}: ${(e as Error).message}\n`);
      }
    },
  };
}

const KINDS = new Set(["send", "recv", "copy", "reduce", "scale"]);

/**
 * Reads and merges the files rankRecorderFromEnv's ranks wrote. Every event is checked before
 * it is used (its rank is the file's, its peer a rank of the job, its numbers finite); a rank
 * that left no file is named in `missing` (it died before writing), not silently dropped.
 */
export function readRankTraces(dir: string, size: number): { events: TraceEvent[]; missing: number[] } {
  const parts: TraceEvent[][] = [];
  const missing: number[] = [];
  for (let r = 0; r < size; r++) {
    const file = join(dir, `rank-${r}.json`);
    if (!existsSync(file)) {
      missing.push(r);
      continue;
    }
    const events = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (!Array.isArray(events)) throw new Error(`${file}: not a list of trace events`);
    for (const e of events as TraceEvent[]) {
      const ok =
        e.rank === r &&
        KINDS.has(e.kind) &&
        (e.peer === undefined || (Number.isInteger(e.peer) && e.peer >= 0 && e.peer < size)) &&
        [e.count, e.bytes, e.start, e.end].every((v) => typeof v === "number" && Number.isFinite(v));
      if (!ok) throw new Error(`${file}: a malformed event for rank ${r}: ${JSON.stringify(e).slice(0, 200)}`);
    }
    parts.push(events as TraceEvent[]);
  }
  return { events: mergeTraces(parts), missing };
}
