/**
 * A walk's rounds solved, and the walk timed with the durations they give. Each distinct round's
 * messages start together on the network and share its links max-min fairly (flow-sets.ts solves
 * the distinct rounds, in threads where there are cores), which gives every message (every copy
 * of it under a symmetry) a duration: its route's latency and its bytes at the rate that sharing
 * leaves it. The plans then run again in dataflow order with those durations, reductions costing
 * gamma (timeEveryRank), or, walked under a symmetry, every copy at once (per-copy-walk.ts).
 */
import { invariant } from "../../core/assert.js";
import { Growable } from "../../core/growable.js";
import { knownEnds, reductionsOf, walkDataflow } from "./dataflow.js";
import { type FlowSet, solveSets } from "./flow-sets.js";
import type { Round, RoundsWalk } from "./rounds.js";
import { type NetworkParams, RouteCache } from "./simulate.js";
import { atOffset } from "./symmetry.js";

/** One distinct round solved: per message and copy (place · copies + copy, place the message's canonical order), its duration and route latency; and the bytes it put on each link it used. */
export interface SolvedRound {
  readonly duration: Float64Array;
  /** The part of the duration before its bytes move (the latest of its paths'). */
  readonly latency: Float64Array;
  /**
   * The links the round used and the bytes it put on each (bytes[k] on links[k]): only those,
   * since a call of thousands of distinct rounds on a network of thousands of links would hold
   * their product (the 32 B ring on torus:64x64: 8,190 rounds of 8 messages, 24,576 links).
   */
  readonly links: Int32Array;
  readonly bytes: Float64Array;
  /** How many rounds of the walk have this pattern. */
  uses: number;
}

/** A walk's rounds solved: each distinct pattern once, and each round's. */
export interface SolvedRounds {
  readonly patterns: Map<string, SolvedRound>;
  readonly byRound: readonly (SolvedRound | undefined)[];
  /** Messages (every rank's), flow solves, and rounds with messages. */
  readonly messages: number;
  readonly solves: number;
  /** Link crossings the solves scanned (flows.ts's work). */
  readonly work: number;
  readonly rounds: number;
}

/** A timed walk: when the call ends, and the rank that ends it. */
export interface RoundsTiming {
  readonly time: number;
  readonly critical: number;
}

/** Solves each distinct round of a walk once (every copy of its messages under a symmetry). */
export function solveRounds(w: RoundsWalk, n: number, params: NetworkParams): SolvedRounds {
  const { topology, placement } = params;
  const { sym } = w;
  const p = sym.p;
  const routes = new RouteCache(topology);
  const memo = new Map<string, SolvedRound>();
  const phaseOf: (SolvedRound | undefined)[] = [];
  let messages = 0;
  let rounds = 0;
  const copies = n / p;
  // Each distinct round once: its messages (every copy under a symmetry) as a set of flows, all
  // starting together, solved to their ends (in parallel threads where there are cores).
  const sets: FlowSet[] = [];
  const solving: { key: string; lats: Float64Array }[] = [];
  const queued = new Set<string>();
  w.rounds.forEach((rd, t) => {
    if (!rd) return;
    rounds++;
    messages += rd.src.length * copies;
    const key = w.keys[t] as string;
    if (queued.has(key)) return;
    queued.add(key);
    const place = w.places[t] as Int32Array;
    const m = rd.src.length;
    const lats = new Float64Array(m * copies);
    const bytes = new Growable(new Float64Array(1024));
    const from = new Growable(new Float64Array(1024));
    const tag = new Growable(new Int32Array(1024));
    const pathStart = new Growable(new Int32Array(1024));
    const links = new Growable(new Int32Array(4096));
    for (let i = 0; i < m; i++) {
      const size = rd.bytes[i] as number;
      for (let j = 0; j < copies; j++) {
        const src = (rd.src[i] as number) + j * p;
        const dst = p === n ? (rd.offset[i] as number) : atOffset(sym.kind, src, rd.offset[i] as number, n);
        const a = placement[src] as number;
        const b = placement[dst] as number;
        if (a === b) continue;
        const { paths, latency } = routes.get(a, b);
        const tg = (place[i] as number) * copies + j;
        paths.forEach((path, k) => {
          lats[tg] = Math.max(lats[tg] as number, latency[k] as number);
          bytes.push(size / paths.length);
          from.push(latency[k] as number);
          tag.push(tg);
          pathStart.push(links.length);
          for (const l of path) links.push(l);
        });
      }
    }
    pathStart.push(links.length);
    sets.push({
      bytes: bytes.done(),
      from: from.done(),
      tag: tag.done(),
      pathStart: pathStart.done(),
      links: links.done(),
      tags: m * copies,
    });
    solving.push({ key, lats });
  });
  const solved = solveSets(topology.links.bandwidth, sets, {
    ...(params.threads !== undefined ? { threads: params.threads } : {}),
    ...(params.budget
      ? { budget: params.budget }
      : params.solveWork !== undefined
        ? { workLimit: params.solveWork }
        : {}),
    ...(params.onProgress
      ? { onDone: (done: number, total: number) => params.onProgress?.(done, total, "rounds") }
      : {}),
  });
  let solves = 0;
  let work = 0;
  solved.forEach(({ ends, links, linkBytes, solves: k, work: u }, j) => {
    const { key, lats } = solving[j] as (typeof solving)[number];
    solves += k;
    work += u;
    memo.set(key, { duration: ends, latency: lats, links, bytes: linkBytes, uses: 0 });
  });
  w.rounds.forEach((rd, t) => {
    if (!rd) return;
    const phase = memo.get(w.keys[t] as string) as SolvedRound;
    phase.uses++;
    phaseOf[t] = phase;
  });
  return { patterns: memo, byRound: phaseOf, messages, solves, work, rounds };
}

/**
 * The timed walk of every rank (a walk whose FlatPlans hold every rank's plan): each message
 * keeps its own duration, so a straggler delays only what waits for it. Also gives each
 * operation's start (the pipeline extrapolation reads it).
 */
export function timeEveryRank(
  w: RoundsWalk,
  n: number,
  solved: SolvedRounds,
  gamma: number,
): RoundsTiming & { start: Float64Array } {
  // One connection per (sender, receiver), in order, as in the exact engine. A round's transfers
  // to one peer were solved as one flow: each takes its own bytes' part of that flow's time (its
  // mean rate), once its latency is over and the transfers before it on the connection (this
  // round's or an earlier one's) are through. Charging each the whole flow's time made a
  // pipeline like PAT's, with many chunks to one peer in a round, wait for the last chunk.
  invariant(w.sym.p === n, () => `timeEveryRank: ${w.sym.p} of ${n} ranks walked (the per-copy walk times a quotient)`);
  const pairFree = new Float64Array(w.flat.pairs);
  const out = walkDataflow(
    w.flat,
    knownEnds((snd, _rcv, start) => {
      const t = w.roundOf[snd] as number;
      if (t < 0) return start;
      const msg = w.messageOf[snd] as number;
      const rd = w.rounds[t] as Round;
      const place = (w.places[t] as Int32Array)[msg] as number;
      const phase = solved.byRound[t] as SolvedRound;
      const d = phase.duration[place] as number;
      const l = Math.min(d, phase.latency[place] as number);
      const share = (w.flat.bytes[snd] as number) / (rd.bytes[msg] as number);
      // The connection: the sender's (rank, offset) pair.
      const pair = w.flat.pair[snd] as number;
      const end = Math.max(start + l, pairFree[pair] as number) + (d - l) * share;
      pairFree[pair] = end;
      return end;
    }),
    reductionsOf(w.flat, gamma),
  );
  let critical = 0;
  out.finish.forEach((t, r) => {
    if (t > (out.finish[critical] as number)) critical = r;
  });
  return { time: out.time, critical, start: out.start };
}
