/**
 * Calls with fewer elements than ranks (src/schedule/plan.ts, algorithms/lib/ring.ts): a transfer
 * or local operation on no elements is validated and dropped from the plan, and a ring step whose
 * two chunks are both empty is left out of the schedule. So a 32 B ring on 4,096 ranks compiles
 * to a few dozen operations per rank, not 2(n-1) steps of empty messages, and the network model
 * times it instead of refusing it. Calls whose chunks all hold elements keep every operation.
 */
import { describe, expect, it } from "vitest";
import { shapeOfTopology } from "../src/cli/topology-shape.js";
import { callOf, machineFor, timeOnMachine } from "../src/model/machine.js";
import { estimateOperations } from "../src/model/network/policy.js";
import { checkAlgorithm, compileAll } from "../src/schedule/check.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { withShape } from "../src/schedule/shape.js";
import { makeCall } from "../src/specs/index.js";

const call = (collective: string, name: string, size: number, count: number) => {
  const alg = findAlgorithm(collective, name, { op: "empty-chunks.test" });
  return {
    alg,
    call: makeCall({ collective: collective as never, size, count, dtype: "float32", inPlace: false, root: 0 }, alg),
  };
};

const CASES: readonly [string, string][] = [
  ["allreduce", "ring"],
  ["allreduce", "segmented_ring"],
  ["allreduce", "rabenseifner"],
  ["allreduce", "hierarchical"],
  ["broadcast", "scatter_allgather"],
  ["reduce", "rabenseifner"],
  ["reducescatter", "ring"],
  ["allgather", "bruck"],
];

describe("empty chunks compile to nothing", () => {
  for (const [collective, name] of CASES) {
    it(`${collective}/${name}, n = 12, count 5: no operation on zero elements, and still proved`, () => {
      const { alg, call: c } = call(collective, name, 12, 5);
      for (const p of compileAll(alg, c)) {
        const empty = p.ops.filter((o) => o.region.count === 0);
        expect(empty, `rank ${p.call.rank}: ${empty.length} operations on no elements`).toEqual([]);
      }
      expect(checkAlgorithm(alg, c).errors).toEqual([]);
    });
  }

  it("the ring all-reduce at n = 64, count 1: steps only where an element moves", () => {
    const { alg, call: c } = call("allreduce", "ring", 64, 1);
    const plans = compileAll(alg, c);
    // One element travels the ring twice (n-1 hops each way); each rank forwards it once per
    // phase at most, and touches the neighbouring chunk's step: a handful of steps, not 2(n-1).
    const steps = Math.max(...plans.map((p) => p.steps.filter((s) => s.transfers.length > 0).length));
    expect(steps).toBeLessThanOrEqual(4);
    const sends = plans.reduce((a, p) => a + p.ops.filter((o) => o.kind === "send").length, 0);
    expect(sends).toBe(2 * 63);
    expect(checkAlgorithm(alg, c).errors).toEqual([]);
  });

  it("a call whose chunks all hold elements keeps every operation: ring, n = 8, count 16", () => {
    const { alg, call: c } = call("allreduce", "ring", 8, 16);
    for (const p of compileAll(alg, c)) {
      expect(p.ops.filter((o) => o.kind === "send")).toHaveLength(2 * 7);
      expect(p.ops.filter((o) => o.kind === "recv")).toHaveLength(2 * 7);
      expect(p.ops.filter((o) => o.kind === "reduce")).toHaveLength(7);
    }
  });
});

describe("tiny messages on many ranks are modelled", () => {
  it("the 32 B ring on torus:64x64 (4,096 ranks) runs, its time the ring's 2(n-1) latencies", () => {
    const n = 4096;
    const m = machineFor({ topology: "torus:64x64", links: {}, engine: "auto" }, n);
    const alg = withShape(findAlgorithm("allreduce", "ring", { op: "test" }), shapeOfTopology(m.topology, m.placement));
    const { call: c } = callOf(alg, n, 32, { dtype: "float32" });
    // Operations to walk: was 83,865,600 (past the model's 8,000,000) with every empty message.
    expect(estimateOperations(alg, c)).toBeLessThan(200_000);
    const { time } = timeOnMachine(alg, c, m);
    // Each element's reduction passes every rank once, then its result does: 2(n-1) hops of one
    // message, at least the one-hop latency each (0.5 µs on the default torus links).
    expect(time).toBeGreaterThan(2 * (n - 1) * 0.5);
    expect(time).toBeLessThan(2 * (n - 1) * 0.6);
  }, 300_000);
});
