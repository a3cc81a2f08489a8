/**
 * The proof's flat walk (src/schedule/flat.ts) is the interpreter's walk without its clock: for
 * the same plans, in both orders, it completes where interpret completes, and where a schedule
 * deadlocks it leaves the same ranks stuck at the same operation, posted or not; and it moves
 * data in the same order (the transfers pair in the same sequence). And what lets the proof of
 * a data plan walk the steps order alone (flat.ts's header): plans that complete in the steps
 * order complete in dataflow order, with the same pairs. Pure: compiles and walks in memory.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileAll } from "../src/schedule/check.js";
import type { Algorithm, Region, Step } from "../src/schedule/dsl.js";
import { flatPlan, walk } from "../src/schedule/flat.js";
import { interpret, type Order } from "../src/schedule/interpret.js";
import { allAlgorithms } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";
import type { RankCall } from "../src/specs/types.js";
import { casesAt } from "../src/verify/matrix.js";

/** Both walks over one call: what completes, where each stops, and the order transfers pair in. */
function both(alg: Algorithm, call: ReturnType<typeof makeCall>, order: Order) {
  const plans = compileAll(alg, call);
  const pairsI: string[] = [];
  const outI = interpret(
    plans,
    {
      transfer: (s, r, start) => {
        pairsI.push(`${s.rank}:${s.index}>${r.rank}:${r.index}`);
        return start + 1;
      },
    },
    order,
  );
  const pairsF: string[] = [];
  const outF = walk(
    plans.map((p) => flatPlan(p)),
    order,
    { transfer: (sr, si, rr, ri) => pairsF.push(`${sr}:${si}>${rr}:${ri}`) },
  );
  const stuckI = outI.stuck.map(({ rank, index, posted }) => ({ rank, index, posted }));
  return { interpret: { complete: outI.complete, stuck: stuckI, pairs: pairsI }, flat: { ...outF, pairs: pairsF } };
}

/** `alg` with each rank's steps passed through `edit`. */
const broken = (alg: Algorithm, edit: (c: RankCall, steps: Step[]) => Step[]): Algorithm => ({
  ...alg,
  name: `${alg.name}-broken`,
  *schedule(c, mem) {
    yield* edit(c, [...alg.schedule(c, mem)]);
  },
});

describe("the flat walk is the interpreter's", () => {
  it("every registered algorithm at n = 7, every call of the matrix, both orders", () => {
    let calls = 0;
    for (const alg of allAlgorithms().filter((a) => !a.domain)) {
      for (const n of [7]) {
        for (const call of casesAt(alg, n)) {
          for (const order of ["steps", "dataflow"] as Order[]) {
            const r = both(alg, call, order);
            expect(r.flat, `${alg.collective}/${alg.name} ${JSON.stringify(call)} ${order}`).toEqual(r.interpret);
            calls++;
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(150);
  });

  it("a step of 1,500 transfers a rank, all pairing at one tick, past the walk's first event buffer", () => {
    const many: Algorithm = {
      ...(allAlgorithms().find((a) => a.collective === "allgather" && a.name === "ring") as Algorithm),
      name: "many",
      *schedule(c) {
        const peer = 1 - c.rank;
        const one = (buf: "input" | "output", at: number) => ({ buf, offset: at, count: 1 });
        yield {
          label: "all at once",
          transfers: Array.from({ length: 1500 }, (_, k) =>
            k % 2 === 0
              ? { kind: "send" as const, peer, region: one("input", k / 2) }
              : { kind: "recv" as const, peer, region: one("output", 750 * peer + (k - 1) / 2) },
          ),
          local: [],
        };
      },
    };
    const call = makeCall({ collective: "allgather", size: 2, count: 750, segment: 1 });
    for (const order of ["steps", "dataflow"] as Order[]) {
      const r = both(many, call, order);
      expect(r.interpret.complete).toBe(true);
      expect(r.interpret.pairs).toHaveLength(1500);
      expect(r.flat).toEqual(r.interpret);
    }
  });

  it("where a schedule deadlocks, the same ranks stop at the same operation", () => {
    const ring = allAlgorithms().find((a) => a.collective === "allreduce" && a.name === "ring") as Algorithm;
    const cases = [
      broken(ring, (c, steps) => (c.rank === 2 ? steps.slice(0, -1) : steps)),
      broken(ring, (c, steps) => (c.rank === 0 ? steps.slice(1) : steps)),
      broken(ring, (c, steps) => (c.rank === 3 ? [...steps].reverse() : steps)),
    ];
    let stuck = 0;
    for (const alg of cases) {
      for (const order of ["steps", "dataflow"] as Order[]) {
        const r = both(alg, makeCall({ collective: "allreduce", size: 6, count: 9, segment: 1 }), order);
        if (!r.interpret.complete) stuck++;
        expect(r.flat).toEqual(r.interpret);
      }
    }
    // The mutants deadlock in most of the six (a rank that runs its steps backwards may still finish in dataflow).
    expect(stuck).toBeGreaterThanOrEqual(4);
  });
});

/** One rank's program: steps of transfers and local copies, on a scratch of SCRATCH elements. */
type Program = {
  transfers: { kind: "send" | "recv"; peer: number; channel: number; at: number; count: number }[];
  copies: { dst: number; src: number; count: number }[];
}[];
const SCRATCH = 6;

/**
 * Random plans for n ranks: messages (sender, receiver, channel, where, how many), each send
 * placed in its sender's program and each receive in its receiver's, in the messages' order per
 * rank, cut into steps at random, with local copies between.
 */
const programs = fc.integer({ min: 2, max: 4 }).chain((n) => {
  const message = fc.record({
    from: fc.nat(n - 1),
    by: fc.integer({ min: 1, max: n - 1 }),
    channel: fc.nat(1),
    at: fc.nat(SCRATCH - 2),
    to: fc.nat(SCRATCH - 2),
    count: fc.integer({ min: 1, max: 2 }),
  });
  const copy = fc.record({ dst: fc.nat(SCRATCH - 2), src: fc.nat(SCRATCH - 2), count: fc.integer({ min: 1, max: 2 }) });
  return fc
    .tuple(
      fc.array(message, { minLength: 1, maxLength: 10 }),
      fc.array(fc.tuple(fc.nat(1), fc.nat(2), fc.array(copy, { maxLength: 1 })), { minLength: 40, maxLength: 40 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 20, maxLength: 20 }),
    )
    .map(([messages, cuts, keys]) => {
      type T = Program[number]["transfers"][number];
      const ops: T[][] = Array.from({ length: n }, () => []);
      for (const m of messages) {
        const to = (m.from + m.by) % n;
        (ops[m.from] as T[]).push({ kind: "send", peer: to, channel: m.channel, at: m.at, count: m.count });
        (ops[to] as T[]).push({ kind: "recv", peer: m.from, channel: m.channel, at: m.to, count: m.count });
      }
      // Each rank's transfers shuffled, then each queue's (peer, channel, kind) put back in the
      // messages' order in the places it holds: the i-th send still meets the i-th receive.
      for (const [r, list] of ops.entries()) {
        const queue = (t: T) => `${t.kind}${t.peer}.${t.channel}`;
        const shuffled = list
          .map((t, i) => ({ t, key: keys[(i + 7 * r) % keys.length] as number }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.t);
        const next = new Map<string, T[]>();
        for (const t of list) next.set(queue(t), [...(next.get(queue(t)) ?? []), t]);
        ops[r] = shuffled.map((t) => (next.get(queue(t)) as T[]).shift() as T);
      }
      // Cut each rank's transfers into steps (cut[0]: one more transfer in this step or not), with copies after.
      let c = 0;
      return ops.map((list) => {
        const program: Program = [];
        let cur: Program[number] = { transfers: [], copies: [] };
        for (const t of list) {
          const [more, , copies] = cuts[c++ % cuts.length] as [
            number,
            number,
            { dst: number; src: number; count: number }[],
          ];
          cur.transfers.push(t);
          if (!more) {
            cur.copies.push(...copies);
            program.push(cur);
            cur = { transfers: [], copies: [] };
          }
        }
        if (cur.transfers.length > 0) program.push(cur);
        return program;
      });
    });
});

/** The programs as an algorithm (an all-gather's shape, so that plans carry data). */
function asAlgorithm(progs: Program[]): Algorithm {
  const base = allAlgorithms().find((a) => a.collective === "allgather" && a.name === "ring") as Algorithm;
  return {
    ...base,
    name: "random",
    *schedule(c, mem) {
      const s = mem.scratch(SCRATCH);
      const at = (from: number, count: number): Region => ({ buf: "scratch", offset: s.offset + from, count });
      for (const [k, st] of (progs[c.rank] as Program).entries()) {
        yield {
          label: `step ${k}`,
          transfers: st.transfers.map((t) => ({
            kind: t.kind,
            peer: t.peer,
            channel: t.channel,
            region: at(t.at, t.count),
          })),
          local: st.copies.map((l) => ({ kind: "copy" as const, dst: at(l.dst, l.count), src: at(l.src, l.count) })),
        };
      }
    },
  };
}

describe("the steps walk's completion proves the dataflow order's", () => {
  /** Both orders of the flat walk: whether each completes, and the pairs each made. */
  function orders(progs: Program[]) {
    const call = makeCall({ collective: "allgather", size: progs.length, count: 1, segment: 1 });
    const flats = compileAll(asAlgorithm(progs), call).map((p) => flatPlan(p));
    const run = (order: Order) => {
      const pairs: string[] = [];
      const out = walk(flats, order, { transfer: (sr, si, rr, ri) => pairs.push(`${sr}:${si}>${rr}:${ri}`) });
      return { complete: out.complete, pairs: pairs.sort() };
    };
    return { steps: run("steps"), dataflow: run("dataflow") };
  }

  it("random plans of 2 to 4 ranks: where the steps order completes, dataflow completes with the same pairs", () => {
    let completed = 0;
    let stuck = 0;
    fc.assert(
      fc.property(programs, (progs) => {
        const r = orders(progs);
        if (!r.steps.complete) {
          stuck++;
          return;
        }
        completed++;
        expect(r.dataflow).toEqual(r.steps);
      }),
      { numRuns: 400 },
    );
    // Both kinds of plan were met: the claim was tested, not assumed.
    expect(completed).toBeGreaterThan(40);
    expect(stuck).toBeGreaterThan(40);
  });
});
