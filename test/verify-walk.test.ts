/**
 * The proof's flat walk (src/schedule/flat.ts) is the interpreter's walk without its clock: for
 * the same plans, in both orders, it completes where interpret completes, and where a schedule
 * deadlocks it leaves the same ranks stuck at the same operation, posted or not; and it moves
 * data in the same order (the transfers pair in the same sequence).
 */
import { describe, expect, it } from "vitest";
import { compileAll } from "../src/schedule/check.js";
import type { Algorithm, Step } from "../src/schedule/dsl.js";
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
