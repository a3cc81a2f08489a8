/**
 * The compiler's dependencies from memory (src/schedule/deps.ts), held against a naive oracle:
 * one last writer and one reader list per element. Random operations (reads and writes of random
 * stretches of a small memory) each get exactly the operations the oracle says they wait for, in
 * the oracle's order (the walks pair messages in the order dependencies make operations ready).
 * Touches nothing outside this process.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ring } from "../algorithms/allreduce/ring.js";
import { Deps, Intervals } from "../src/schedule/deps.js";
import { compile } from "../src/schedule/plan.js";
import { makeCall, rankCall } from "../src/specs/index.js";

interface Access {
  readonly from: number;
  readonly count: number;
  readonly writes: boolean;
}

const SIZE = 24;
const access = fc
  .record({ from: fc.integer({ min: 0, max: SIZE - 1 }), count: fc.integer({ min: 0, max: 8 }), writes: fc.boolean() })
  .map(({ from, count, writes }) => ({ from, count: Math.min(count, SIZE - from), writes }));

/** Per element: its last writer and its readers since, in order; deps collected interval by interval as Intervals does. */
function oracle(ops: readonly Access[]): number[][] {
  const writer = new Array<number>(SIZE).fill(-1);
  const readers: number[][] = Array.from({ length: SIZE }, () => []);
  return ops.map((op, k) => {
    const seen: number[] = [];
    const add = (x: number) => {
      if (!seen.includes(x)) seen.push(x);
    };
    for (let e = op.from; e < op.from + op.count; e++) {
      if ((writer[e] as number) >= 0) add(writer[e] as number);
      if (op.writes) for (const r of readers[e] as number[]) add(r);
    }
    for (let e = op.from; e < op.from + op.count; e++) {
      if (op.writes) {
        writer[e] = k;
        readers[e] = [];
      } else (readers[e] as number[]).push(k);
    }
    return seen;
  });
}

describe("dependencies from memory", () => {
  it("every operation waits for exactly the last writer of what it touches and, writing, its readers since", () => {
    fc.assert(
      fc.property(fc.array(access, { maxLength: 40 }), (ops) => {
        const mem = new Intervals(ops.flatMap((o) => [o.from, o.from + o.count]));
        const deps = new Deps();
        const got = ops.map((o, k) => {
          deps.reset();
          mem.depsOf(o.from, o.from + o.count, o.writes, deps);
          mem.record(o.from, o.from + o.count, k, o.writes);
          return deps.list;
        });
        // In the oracle's order too: element by element, the writer then the readers oldest first.
        expect(got).toEqual(oracle(ops));
      }),
      { numRuns: 300 },
    );
  });

  it("a boundary no operation announced is an invariant failure, not a silent wrong answer", () => {
    const mem = new Intervals([0, 8]);
    expect(() => mem.record(2, 6, 0, true)).toThrow(/boundary 2 was not announced/);
  });

  it("offsets past 2^31 elements (the model compiles real buffer sizes) give the same dependencies as small ones", () => {
    const deps = (count: number) =>
      compile(ring, rankCall(makeCall({ collective: "allreduce", size: 4, count }, ring), 1)).ops.map((o) => o.deps);
    expect(deps(2 ** 32 + 8)).toEqual(deps(8));
  });
});
