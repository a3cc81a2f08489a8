/**
 * The simulator's engine: one World per spawn holds every rank's posted sends and receives,
 * matches them per (communicator, sender, receiver) in FIFO order, and completes matched pairs
 * in rounds chosen by a seeded scheduler, so a run replays exactly from its seed. It also
 * notices when no rank can progress and explains why (deadlock.ts), and aborts every rank
 * when one fails, so a simulated program never hangs.
 */
import { splitMismatch } from "../checks.js";
import { callDiff } from "../comm.js";
import type { View } from "../core/buffer.js";
import { dtypeInfo } from "../core/dtype.js";
import { AbortError, DeadlockError, MismatchError, RankError } from "../core/errors.js";
import { Fifo } from "../core/match.js";
import { Rng } from "../core/random.js";
import type { Trace } from "../trace.js";
import { explainDeadlock, type Wait } from "./deadlock.js";
import { type CommInfo, copyElements, type Ready, type Semantics, type SimOp, type SimOptions } from "./ops.js";

export { type CommInfo, copyElements, SEMANTICS, type Semantics, SimOp, type SimOptions } from "./ops.js";

/** A rank's pending split call, waiting for the rest of its communicator. */
interface SplitWaiter {
  readonly rank: number;
  readonly commRank: number;
  readonly resolve: (r: SplitResult) => void;
  readonly reject: (e: unknown) => void;
}

interface SplitState {
  readonly comm: CommInfo;
  readonly ranks: readonly number[];
  readonly firstRank: number;
  readonly waiters: SplitWaiter[];
  readonly arrived: Set<number>;
}

/** What a rank gets back from split: the subgroup and its rank in it (-1 for a non-member). */
export interface SplitResult {
  readonly group: CommInfo;
  readonly rank: number;
}

class RankState {
  finished = false;
  /** Unsettled blocking calls (send, recv, group, Work.wait, split). */
  blocking = 0;
  /** Pending ops some blocking call of this rank waits on. */
  readonly waited = new Set<SimOp>();
  /** The split call this rank waits in, if any. */
  split: SplitState | undefined;
  constructor(readonly rank: number) {}
}

const formatList = (xs: readonly number[]): string => `[${xs.join(", ")}]`;

export class World {
  readonly semantics: Semantics;
  readonly eagerLimitBytes: number;
  readonly chaos: boolean;
  readonly trace: Trace | undefined;
  /** Logical time: the number of scheduler rounds that completed events. */
  round = 0;
  readonly worldComm: CommInfo;
  /** The first rank failure; once set, every pending and future operation rejects with `abortError`. */
  failure: RankError | undefined;
  private abortError: AbortError | undefined;

  private readonly rng: Rng;
  private readonly ranks: RankState[];
  /** Unmatched sends and receives, keyed by (communicator, sender, receiver). */
  private readonly sends = new Map<number, Fifo<SimOp>>();
  private readonly recvs = new Map<number, Fifo<SimOp>>();
  private ready: Ready[] = [];
  private readonly pending = new Set<SimOp>();
  private readonly splits = new Map<string, SplitState>();
  private nextCommId = 1;
  private finishedRanks = 0;
  /** Unfinished ranks with at least one unsettled blocking call. */
  private blockedRanks = 0;
  private wake: (() => void) | undefined;

  constructor(
    readonly size: number,
    options: SimOptions,
  ) {
    this.semantics = options.semantics ?? "nccl";
    this.eagerLimitBytes = options.eagerLimitBytes ?? 65536;
    this.chaos = options.chaos ?? false;
    this.trace = options.trace;
    this.rng = new Rng(options.seed ?? 1);
    this.ranks = Array.from({ length: size }, (_, r) => new RankState(r));
    this.worldComm = { id: 0, members: Array.from({ length: size }, (_, r) => r), name: "world" };
  }

  // ---- posting and matching ----

  private key(comm: CommInfo, from: number, to: number): number {
    return (comm.id * this.size + from) * this.size + to;
  }

  /** Posts a send or receive; it progresses on its own from here on, whether or not anyone waits on it. */
  post(op: SimOp): SimOp {
    if (this.abortError) {
      op.state = "failed";
      op.error = this.abortError;
      return op;
    }
    this.pending.add(op);
    if (op.kind === "send") {
      const bytes = op.view.count * dtypeInfo(op.view.buffer.dtype).bytes;
      if (this.semantics === "buffered" || (this.semantics === "mpi-eager" && bytes <= this.eagerLimitBytes)) {
        // The caller may reuse its buffer as soon as the send completes: keep the bytes now.
        op.snapshot = op.view.buffer.data.slice(op.view.offset, op.view.offset + op.view.count);
        this.ready.push({ send: op, recv: undefined });
      }
      const k = this.key(op.comm, op.rank, op.peer);
      const recv = this.take(this.recvs, k);
      if (recv) this.ready.push({ send: op, recv });
      else this.enqueue(this.sends, k, op);
    } else {
      const k = this.key(op.comm, op.peer, op.rank);
      const send = this.take(this.sends, k);
      if (send) this.ready.push({ send, recv: op });
      else this.enqueue(this.recvs, k, op);
    }
    this.poke();
    return op;
  }

  private take(queues: Map<number, Fifo<SimOp>>, k: number): SimOp | undefined {
    const q = queues.get(k);
    if (!q) return undefined;
    const op = q.shift();
    if (q.length === 0) queues.delete(k);
    return op;
  }

  private enqueue(queues: Map<number, Fifo<SimOp>>, k: number, op: SimOp): void {
    let q = queues.get(k);
    if (!q) queues.set(k, (q = new Fifo()));
    q.push(op);
  }

  private unqueue(op: SimOp): void {
    const [queues, k] =
      op.kind === "send"
        ? [this.sends, this.key(op.comm, op.rank, op.peer)]
        : [this.recvs, this.key(op.comm, op.peer, op.rank)];
    const q = queues.get(k);
    if (!q) return;
    q.remove(op);
    if (q.length === 0) queues.delete(k);
  }

  // ---- settling ----

  private settle(op: SimOp, error?: unknown): void {
    if (op.state !== "pending") return;
    op.state = error === undefined ? "done" : "failed";
    op.error = error;
    this.pending.delete(op);
    if (error === undefined) this.record(op);
    const ls = op.listeners;
    op.listeners = undefined;
    if (ls) for (const l of ls) l();
  }

  private record(op: SimOp): void {
    if (!this.trace) return;
    const dtype = op.view.buffer.dtype;
    this.trace.record({
      rank: op.rank,
      kind: op.kind,
      peer: op.peer,
      count: op.view.count,
      dtype,
      bytes: op.view.count * dtypeInfo(dtype).bytes,
      ...(op.label !== undefined ? { label: op.label } : {}),
      start: op.posted,
      end: this.round,
    });
  }

  /** Records a local operation (copy, reduce, scale) at the current logical time. */
  recordLocal(rank: number, kind: "copy" | "reduce" | "scale", v: View, label?: string): void {
    if (!this.trace) return;
    const dtype = v.buffer.dtype;
    this.trace.record({
      rank,
      kind,
      count: v.count,
      dtype,
      bytes: v.count * dtypeInfo(dtype).bytes,
      ...(label !== undefined ? { label } : {}),
      start: this.round,
      end: this.round,
    });
  }

  private complete(ev: Ready): void {
    const { send, recv } = ev;
    if (!recv) {
      this.settle(send);
      return;
    }
    // An aborted op is already failed; its partner was failed with it.
    if (recv.state !== "pending") return;
    const sv = send.view;
    const rv = recv.view;
    const calls = send.call && recv.call ? callDiff(send.call, recv.call) : [];
    if (sv.count !== rv.count || sv.buffer.dtype !== rv.buffer.dtype || calls.length > 0) {
      const err = new MismatchError(this.mismatchMessage(send, recv, calls));
      this.settle(send, err);
      this.settle(recv, err);
      return;
    }
    if (send.snapshot) copyElements(rv.buffer.data, rv.offset, send.snapshot, 0, rv.count);
    else copyElements(rv.buffer.data, rv.offset, sv.buffer.data, sv.offset, rv.count);
    this.settle(send);
    this.settle(recv);
  }

  private mismatchMessage(send: SimOp, recv: SimOp, calls: readonly string[]): string {
    const side = (op: SimOp) => {
      const dt = op.view.buffer.dtype;
      const bytes = op.view.count * dtypeInfo(dt).bytes;
      const dir = op.kind === "send" ? "to" : "from";
      const label = op.label !== undefined ? `, '${op.label}'` : "";
      return `rank ${op.commRank} ${op.kind}(${dir} ${op.commPeer}${label}) of ${op.view.count} x ${dt} (${bytes} B)`;
    };
    const where = send.comm.id === 0 ? "" : ` in ${send.comm.name} (world ranks)`;
    if (calls.length > 0) {
      return (
        `${side(send)} matched ${side(recv)}${where}, but they belong to different collective calls: ${calls.join(", ")} ` +
        `(rank ${send.commRank} vs rank ${recv.commRank}); every rank must make the same call with the same arguments`
      );
    }
    return `${side(send)} matched ${side(recv)}${where}: a send and its receive must agree on count and dtype`;
  }

  // ---- blocking ----

  private block(rs: RankState): void {
    if (rs.blocking++ === 0 && !rs.finished) this.blockedRanks++;
    this.poke();
  }

  private unblock(rs: RankState): void {
    if (--rs.blocking === 0 && !rs.finished) this.blockedRanks--;
  }

  /**
   * A blocking wait of `rank` on `ops`: settles once all of them have settled, rejecting with
   * the first error in `ops` order. The rank counts as blocked until then.
   */
  waitAll(rank: number, ops: readonly SimOp[]): Promise<void> {
    let left = 0;
    for (const op of ops) if (op.state === "pending") left++;
    const firstError = () => ops.find((op) => op.state === "failed")?.error;
    if (left === 0) {
      const e = firstError();
      return e === undefined ? Promise.resolve() : Promise.reject(e);
    }
    const rs = this.ranks[rank]!;
    return new Promise<void>((resolve, reject) => {
      this.block(rs);
      for (const op of ops) {
        if (op.state !== "pending") continue;
        rs.waited.add(op);
        (op.listeners ??= []).push(() => {
          rs.waited.delete(op);
          if (--left > 0) return;
          this.unblock(rs);
          const e = firstError();
          if (e === undefined) resolve();
          else reject(e);
        });
      }
    });
  }

  // ---- split ----

  /**
   * The k-th split call of `commRank` on `comm`: collective over `comm` (torch's new_group).
   * Settles when every member of `comm` has made its k-th call with the same list.
   */
  split(comm: CommInfo, commRank: number, seq: number, ranks: readonly number[]): Promise<SplitResult> {
    if (this.abortError) return Promise.reject(this.abortError);
    const k = `${comm.id}:${seq}`;
    let st = this.splits.get(k);
    if (!st) {
      st = { comm, ranks: [...ranks], firstRank: commRank, waiters: [], arrived: new Set() };
      this.splits.set(k, st);
    }
    const rank = comm.members[commRank]!;
    if (ranks.length !== st.ranks.length || ranks.some((r, i) => r !== st.ranks[i])) {
      this.splits.delete(k);
      const err = splitMismatch(commRank, ranks, st.firstRank, st.ranks);
      for (const w of st.waiters) {
        this.ranks[w.rank]!.split = undefined;
        this.unblock(this.ranks[w.rank]!);
        w.reject(err);
      }
      return Promise.reject(err);
    }
    const state = st;
    return new Promise<SplitResult>((resolve, reject) => {
      const rs = this.ranks[rank]!;
      state.waiters.push({ rank, commRank, resolve, reject });
      state.arrived.add(commRank);
      rs.split = state;
      this.block(rs);
      if (state.arrived.size < comm.members.length) return;
      this.splits.delete(k);
      const members = state.ranks.map((r) => comm.members[r]!);
      const group: CommInfo = { id: this.nextCommId++, members, name: `group ${formatList(members)}` };
      for (const w of state.waiters) {
        const ws = this.ranks[w.rank]!;
        ws.split = undefined;
        this.unblock(ws);
        w.resolve({ group, rank: state.ranks.indexOf(w.commRank) });
      }
    });
  }

  // ---- ranks finishing and failing ----

  finish(rank: number, error?: unknown): void {
    const rs = this.ranks[rank]!;
    rs.finished = true;
    this.finishedRanks++;
    if (rs.blocking > 0) this.blockedRanks--;
    if (error !== undefined && !this.failure) this.abort(rank, error);
    this.poke();
  }

  private abort(rank: number, cause: unknown): void {
    this.failure = new RankError(rank, cause);
    const err = new AbortError(`aborted: ${this.failure.message}`);
    this.abortError = err;
    this.ready = [];
    for (const op of [...this.pending]) {
      this.unqueue(op);
      this.settle(op, err);
    }
    for (const st of [...this.splits.values()]) {
      for (const w of st.waiters) {
        this.ranks[w.rank]!.split = undefined;
        this.unblock(this.ranks[w.rank]!);
        w.reject(err);
      }
    }
    this.splits.clear();
  }

  /** The AbortError every call rejects with after a rank failed, if one did. */
  get aborted(): AbortError | undefined {
    return this.abortError;
  }

  // ---- the scheduler ----

  private poke(): void {
    const w = this.wake;
    if (w) {
      this.wake = undefined;
      w();
    }
  }

  /** Runs until every rank has finished. */
  async run(): Promise<void> {
    while (this.finishedRanks < this.size) {
      // Quiescence: every rank has run until it waits on the sim (or on something outside it).
      await new Promise<void>((r) => setImmediate(r));
      if (this.ready.length > 0) {
        this.step();
      } else if (this.blockedRanks > 0 && this.blockedRanks + this.finishedRanks === this.size) {
        this.deadlock();
      } else if (this.finishedRanks < this.size) {
        // Some rank awaits something outside the sim (a timer): sleep until a rank posts, blocks or finishes.
        await new Promise<void>((r) => {
          this.wake = r;
        });
      }
    }
    // Transfers posted and never waited on still complete (their data lands) before the run ends.
    while (this.ready.length > 0 && !this.abortError) this.step();
    if (!this.failure) this.reportUnmatched();
  }

  /**
   * Every rank finished, yet a send was never received (or a receive never matched): its data is
   * lost, which no rank would notice. The job fails, naming the first such operation.
   */
  private reportUnmatched(): void {
    const left: SimOp[] = [];
    for (const q of [...this.sends.values(), ...this.recvs.values()]) {
      for (let op = q.shift(); op; op = q.shift()) left.push(op);
    }
    if (left.length === 0) return;
    left.sort((a, b) => a.posted - b.posted || a.rank - b.rank);
    const op = left[0]!;
    const dir = op.kind === "send" ? "to" : "from";
    const label = op.label !== undefined ? `, '${op.label}'` : "";
    const where = op.comm.id === 0 ? "" : ` in ${op.comm.name}`;
    const what =
      op.kind === "send"
        ? `was never received: rank ${op.commPeer} finished without posting a matching recv`
        : `never matched a send: rank ${op.commPeer} finished without sending to it`;
    const more =
      left.length > 1 ? ` (and ${left.length - 1} more unmatched operation${left.length > 2 ? "s" : ""})` : "";
    this.failure = new RankError(
      op.rank,
      new MismatchError(
        `rank ${op.commRank} ${op.kind}(${dir} ${op.commPeer}${label}) of ${op.view.count} x ${op.view.buffer.dtype}${where} ${what}${more}; its data is lost`,
      ),
    );
  }

  /** One round: complete the ready events in a seed-shuffled order (chaos: only a random non-empty prefix). */
  private step(): void {
    let batch = this.rng.shuffle(this.ready);
    this.ready = [];
    if (this.chaos && batch.length > 1) {
      const k = 1 + this.rng.int(batch.length);
      this.ready = batch.slice(k);
      batch = batch.slice(0, k);
    }
    this.round++;
    for (const ev of batch) this.complete(ev);
  }

  private deadlock(): void {
    const waits: Wait[] = [];
    const blockedOps: SimOp[] = [];
    const splitWaiters: RankState[] = [];
    for (const rs of this.ranks) {
      if (rs.finished || rs.blocking === 0) continue;
      for (const op of rs.waited) {
        blockedOps.push(op);
        waits.push({
          rank: op.rank,
          kind: op.kind,
          peers: [op.peer],
          count: op.view.count,
          dtype: op.view.buffer.dtype,
          label: op.label,
          comm: op.comm,
        });
      }
      const st = rs.split;
      if (st) {
        splitWaiters.push(rs);
        const missing = st.comm.members.filter((_, i) => !st.arrived.has(i));
        waits.push({ rank: rs.rank, kind: "split", peers: missing, ranks: st.ranks, comm: st.comm });
      }
    }
    const { message, blocked, cycle } = explainDeadlock(waits, {
      semantics: this.semantics,
      eagerLimitBytes: this.eagerLimitBytes,
      round: this.round,
      isFinished: (r) => this.ranks[r]!.finished,
    });
    this.trace?.recordDeadlock({ at: this.round, blocked, cycle, message });
    for (const op of blockedOps) {
      this.unqueue(op);
      this.settle(op, new DeadlockError(message, blocked, cycle));
    }
    for (const rs of splitWaiters) {
      const st = rs.split!;
      const i = st.waiters.findIndex((w) => w.rank === rs.rank);
      const w = st.waiters[i]!;
      st.waiters.splice(i, 1);
      st.arrived.delete(w.commRank);
      rs.split = undefined;
      this.unblock(rs);
      w.reject(new DeadlockError(message, blocked, cycle));
    }
  }
}
