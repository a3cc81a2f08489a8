/**
 * The per-copy walk: the rounds of a quotient walk (ranks 0..p-1 under a symmetry) timed with
 * every copy of every operation on its own, without walking every rank.
 */
import { SEND } from "./flat-plans.js";
import type { RoundsTiming, SolvedRound, SolvedRounds } from "./round-solve.js";
import type { Round, RoundsWalk } from "./rounds.js";
import { atOffset } from "./symmetry.js";

/**
 * The most memory timePerCopy's time vectors may hold at once before it gives up (every rank
 * is then walked with moved plans, where that fits). The ring all-reduce at 16,384 ranks needs 2 GiB and 128 KiB: its all-gather
 * receives (one vector each, 128 KiB) wait from the reduce-scatter step that last read their
 * chunk until the ring comes round; with the rest of the call that stays under 2.6 GiB.
 */
const COPIES_WALK_BYTES = 2.5 * 2 ** 30;

/** Thrown inside timePerCopy where a slab cannot be had, caught by it: it gives way as past its bound. */
const GIVE_WAY = Symbol("timePerCopy gives way");

/**
 * The timed walk under a symmetry with every copy timed on its own, without walking every rank:
 * the representatives' plans are run once with each operation's time a vector over its C = n/p
 * copies (copy j of rank r is rank r + j·p). A transfer's copy j meets its peer's copy σ(j)
 * (rotation: (b + j) mod C; exclusive-or: b xor j, b the copy of copy 0's peer) and takes its own
 * copy's duration from the round's solve. This is walkDataflow()'s walk of every rank in max-plus
 * form: an operation starts at the latest of its dependencies' ends, a queue posts in program
 * order, a transfer starts when both ends are posted and ends after its latency, its
 * connection's previous transfer and its bytes. That needs no order of events, and so gives the
 * every-rank walk's times, where reductions cost nothing (gamma 0, checked by the caller) and
 * no connection carries two posting queues (else undefined, as where the vectors alive would pass
 * COPIES_WALK_BYTES). Each step is a loop over C numbers, so a ring at 16,384 ranks (1.3·10^9
 * operations over every rank) takes seconds where walking every rank does not fit.
 */
export function timePerCopy(w: RoundsWalk, n: number, solved: SolvedRounds): RoundsTiming | undefined {
  const f = w.flat;
  const { kind: symKind, p } = w.sym;
  const C = n / p;
  const { ops, succStart, succ, queueOf, queueStart, members, partner } = f;
  // A connection (the sender's (rank, offset) pair) must carry one posting queue: its transfers
  // then follow that queue's order whatever the times.
  const pairQueue = new Int32Array(f.pairs).fill(-1);
  for (let g = 0; g < ops; g++) {
    if (f.kind[g] !== SEND) continue;
    const pr = f.pair[g] as number;
    const q = queueOf[g] as number;
    if (pairQueue[pr] === -1) pairQueue[pr] = q;
    else if (pairQueue[pr] !== q) return undefined;
  }
  // Vectors are recycled through a free list: a ring at 16,384 ranks makes hundreds of thousands
  // of them, 128 KiB each, and letting the collector take them cost as much as the walk. A vector
  // from the list holds old numbers: every user writes it whole before it reads it. New ones are
  // cut from slabs that double (each buffer allocated moves V8's external-memory count, and every
  // 64 MiB or so of it cost a full collection: 37 of them, 5 s, at 2 GiB); a slab's pages not yet
  // cut are never touched, so they take no memory.
  let live = 0;
  const spare: Float64Array[] = [];
  let slab = new ArrayBuffer(0);
  let carved = 0;
  let made = 0;
  const vector = (): Float64Array => {
    live += C * 8;
    const v = spare.pop();
    if (v) return v;
    if (carved === slab.byteLength) {
      // Past what the process may allocate, give way (the caller walks every rank).
      try {
        slab = new ArrayBuffer(Math.max(16, made) * C * 8);
      } catch {
        throw GIVE_WAY;
      }
      carved = 0;
    }
    made++;
    carved += C * 8;
    return new Float64Array(slab, carved - C * 8, C);
  };
  const drop = (v: Float64Array) => {
    live -= C * 8;
    spare.push(v);
  };
  const pending = f.indeg.slice();
  const ready: (Float64Array | undefined)[] = new Array(ops);
  const qpos = new Int32Array(queueStart.length - 1);
  // A queue's posting times (the running latest of its members' ready times) are snapshots shared
  // by the members posted while it does not move (a ring's receives are all posted at 0), kept
  // while a posted member or the queue still holds them.
  const zeros = new Float64Array(C);
  const snaps: (Float64Array | undefined)[] = [zeros];
  const refs: number[] = [1];
  const release = (id: number) => {
    if (--(refs[id] as number) > 0 || id === 0) return;
    drop(snaps[id] as Float64Array);
    snaps[id] = undefined;
  };
  const qlast = new Int32Array(queueStart.length - 1);
  const posted = new Int32Array(ops);
  const pairFree: (Float64Array | undefined)[] = new Array(f.pairs);
  const finish = Array.from({ length: p }, () => new Float64Array(C));
  let done = 0;
  const work: number[] = [];
  const end = (g: number, at: Float64Array) => {
    done++;
    // A rank finishes with its last operations (those nothing waits for): an end is never
    // earlier than its dependencies'.
    if (succStart[g] === succStart[g + 1]) {
      const fin = finish[f.rank[g] as number] as Float64Array;
      for (let j = 0; j < C; j++) if ((at[j] as number) > (fin[j] as number)) fin[j] = at[j] as number;
    }
    for (let e = succStart[g] as number; e < (succStart[g + 1] as number); e++) {
      const x = succ[e] as number;
      const r = ready[x];
      if (!r) {
        const v = vector();
        v.set(at);
        ready[x] = v;
      } else for (let j = 0; j < C; j++) if ((at[j] as number) > (r[j] as number)) r[j] = at[j] as number;
      if (--(pending[x] as number) === 0) work.push(x);
    }
  };
  // The transfer of send `snd` and receive `rcv` (the k-th of their queues), both posted.
  const transfer = (snd: number, rcv: number) => {
    const ps = snaps[posted[snd] as number] as Float64Array;
    const pr = snaps[posted[rcv] as number] as Float64Array;
    const r = f.rank[snd] as number;
    const peer0 = atOffset(symKind, r, f.offset[snd] as number, n);
    const b = Math.floor(peer0 / p);
    const rotate = symKind === "rotate";
    const out = vector();
    const back = vector();
    const t = w.roundOf[snd] as number;
    if (t < 0) {
      for (let j = 0, k = b; j < C; j++, k++) {
        const x = rotate ? (k >= C ? k - C : k) : b ^ j;
        const e = Math.max(ps[j] as number, pr[x] as number);
        out[j] = e;
        back[x] = e;
      }
    } else {
      const msg = w.messageOf[snd] as number;
      const place = (w.places[t] as Int32Array)[msg] as number;
      const phase = solved.byRound[t] as SolvedRound;
      const share = (f.bytes[snd] as number) / ((w.rounds[t] as Round).bytes[msg] as number);
      const pair = f.pair[snd] as number;
      let free = pairFree[pair];
      if (!free) {
        free = vector().fill(0);
        pairFree[pair] = free;
      }
      const durations = phase.duration;
      const latencies = phase.latency;
      const base = place * C;
      for (let j = 0, k = b; j < C; j++, k++) {
        const x = rotate ? (k >= C ? k - C : k) : b ^ j;
        const start = Math.max(ps[j] as number, pr[x] as number);
        const d = durations[base + j] as number;
        const l = Math.min(d, latencies[base + j] as number);
        const e = Math.max(start + l, free[j] as number) + (d - l) * share;
        free[j] = e;
        out[j] = e;
        back[x] = e;
      }
    }
    release(posted[snd] as number);
    release(posted[rcv] as number);
    end(snd, out);
    end(rcv, back);
    drop(out);
    drop(back);
  };
  const take = (g: number) => {
    const q = queueOf[g] as number;
    if (q < 0) {
      end(g, ready[g] ?? zeros);
      if (ready[g]) drop(ready[g] as Float64Array);
      ready[g] = undefined;
      return;
    }
    // Post the queue's members in order while each is ready.
    const first = queueStart[q] as number;
    const last = queueStart[q + 1] as number;
    while (first + (qpos[q] as number) < last) {
      const k = qpos[q] as number;
      const i = members[first + k] as number;
      if ((pending[i] as number) > 0) break;
      qpos[q] = k + 1;
      const r = ready[i];
      if (r) {
        const cur = qlast[q] as number;
        const ql = snaps[cur] as Float64Array;
        let later = false;
        for (let j = 0; j < C && !later; j++) later = (r[j] as number) > (ql[j] as number);
        if (later) {
          // A new snapshot: the old one stays with the members posted at it.
          for (let j = 0; j < C; j++) if ((ql[j] as number) > (r[j] as number)) r[j] = ql[j] as number;
          snaps.push(r);
          refs.push(1);
          qlast[q] = snaps.length - 1;
          release(cur);
        } else drop(r);
        ready[i] = undefined;
      }
      posted[i] = qlast[q] as number;
      refs[posted[i] as number]!++;
      const q2 = partner[q] as number;
      if (q2 >= 0 && (qpos[q2] as number) > k) {
        const h = members[(queueStart[q2] as number) + k] as number;
        if (f.kind[i] === SEND) transfer(i, h);
        else transfer(h, i);
      }
    }
  };
  for (let g = 0; g < ops; g++) if (pending[g] === 0) work.push(g);
  try {
    while (work.length > 0) {
      take(work.pop() as number);
      if (live > COPIES_WALK_BYTES) return undefined;
    }
  } catch (e) {
    if (e === GIVE_WAY) return undefined;
    throw e;
  }
  if (done < ops) return undefined;
  let time = 0;
  let critical = 0;
  for (let r = 0; r < p; r++) {
    const fin = finish[r] as Float64Array;
    for (let j = 0; j < C; j++) {
      if ((fin[j] as number) > time) {
        time = fin[j] as number;
        critical = r + j * p;
      }
    }
  }
  return { time, critical };
}
