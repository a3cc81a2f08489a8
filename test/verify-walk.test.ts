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
