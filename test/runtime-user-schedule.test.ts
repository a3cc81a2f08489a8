/**
 * A user's schedule(), bounded (src/runtime/user-schedule.ts): each distinct call is rehearsed in
 * a worker with a deadline, a count of steps and operations, and a heap limit before it runs in
 * the tool's thread; a call past a bound is a ScheduleError naming the file, the algorithm, the
 * call and the bound. (The fault catalogue's schedule-* rows run the same through cclab verify.)
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { boundedAlgorithm, type ScheduleBounds } from "../src/runtime/user-schedule.js";
import { type Algorithm, type Memory, region } from "../src/schedule/dsl.js";
import { makeCall, rankCall } from "../src/specs/index.js";
import { underLoad } from "./support/load.js";

const DIR = resolve("test/faults/programs/algorithms");
const bounds: ScheduleBounds = { seconds: 2, ops: 1000, steps: 1000, heapMb: 256 };

async function load(file: string, name: string): Promise<Algorithm> {
  const mod = (await import(`${DIR}/${file}`)) as Record<string, Algorithm>;
  return mod[name]!;
}

function memory(count: number): Memory {
  let next = 0;
  return {
    input: region("input", 0, count),
    output: region("output", 0, count),
    scratch: (n) => {
      const r = region("scratch", next, n);
      next += n;
      return r;
    },
  };
}

const call = (collective: string, size: number, count: number, rank = 0) =>
  rankCall(makeCall({ collective, size, count, dtype: "float32" }), rank);

describe("a user's schedule(), bounded", () => {
  it("a call that passes gives the schedule's own steps; a call seen before is not rehearsed again", async () => {
    const alg = await load("throws.ts", "throwsAt3");
    const b = boundedAlgorithm(alg, `${DIR}/throws.ts`, "throwsAt3", bounds);
    const c = call("allgather", 4, 2, 1);
    const steps = [...b.schedule(c, memory(8))];
    expect(steps).toEqual([...alg.schedule(c, memory(8))]);
    const t0 = performance.now();
    expect([...b.schedule(c, memory(8))]).toEqual(steps);
    // No worker round trip: the second call is the schedule alone.
    expect(performance.now() - t0).toBeLessThan(underLoad(50));
  });

  it("a schedule() that never returns: a ScheduleError at the deadline, naming file, algorithm, call and bound", async () => {
    const b = boundedAlgorithm(await load("hang.ts", "hang"), `${DIR}/hang.ts`, "hang", bounds);
    const t0 = Date.now();
    expect(() => b.schedule(call("allreduce", 2, 4), memory(4))).toThrow(
      `${DIR}/hang.ts: algorithm allreduce/hang: schedule() at n = 2, rank 0, count 4 did not return within 2 s of CPU time (the bound on one call; CCLAB_SCHEDULE_TIMEOUT=<seconds> raises it)`,
    );
    // The deadline starts once the worker has loaded the file (tsx and its imports).
    expect(Date.now() - t0).toBeLessThan(underLoad(2000 + 15_000));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
  });

  it("operations are counted as the steps come: past the bound, the step it was reached at", async () => {
    const b = boundedAlgorithm(await load("throws.ts", "throwsAt3"), `${DIR}/throws.ts`, "throwsAt3", {
      ...bounds,
      ops: 3,
    });
    expect(() => b.schedule(call("allgather", 8, 1), memory(8))).toThrow(
      /allgather\/throws_at_3: schedule\(\) at n = 8, rank 0, count 1 made more than 3 operations \(by step 2\), past the bound of 3 operations/,
    );
  });

  it("a throw and a stack overflow inside schedule() are named, with the call", async () => {
    const file = `${DIR}/throws.ts`;
    const t = boundedAlgorithm(await load("throws.ts", "throwsAt3"), file, "throwsAt3", bounds);
    expect(() => t.schedule(call("allgather", 3, 1, 2), memory(3))).toThrow(
      "schedule() at n = 3, rank 2, count 1 threw TypeError: no plan for three ranks",
    );
    const r = boundedAlgorithm(await load("throws.ts", "recursion"), file, "recursion", bounds);
    expect(() => r.schedule(call("allgather", 2, 1), memory(2))).toThrow(
      /allgather\/recursion: schedule\(\) at n = 2, rank 0, count 1 overflowed the stack \(RangeError: Maximum call stack size exceeded\): a recursion that never ends\?/,
    );
  });
});
