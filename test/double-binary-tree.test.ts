/**
 * allreduce/double_binary_tree against what NCCL does (its header lists the comparison): tree 0
 * carries the first half of the data and tree 1 the second, each on its own channel, and in
 * dataflow a segment goes down while later ones still go up (runTreeSplit), where a
 * stream-ordered engine runs every segment up first (runTreeUpDown).
 */
import { describe, expect, it } from "vitest";
import { doubleBinaryTreeAllreduce } from "../algorithms/allreduce/double_binary_tree.js";
import { compileAll } from "../src/schedule/check.js";
import { interpret } from "../src/schedule/interpret.js";
import { makeCall } from "../src/specs/index.js";

const call = makeCall({ collective: "allreduce", size: 8, count: 16, segment: 2 });

describe("NCCL's channel split of the two trees", () => {
  it("tree 0 moves output[0, 8) on channel 1, tree 1 output[8, 16) on channel 2", () => {
    const seen = new Map<number, [number, number]>();
    for (const plan of compileAll(doubleBinaryTreeAllreduce, call)) {
      for (const op of plan.ops) {
        if (op.kind !== "send" && op.kind !== "recv") continue;
        if (op.region.buf !== "output") continue;
        const [lo, hi] = seen.get(op.channel) ?? [Infinity, -Infinity];
        seen.set(op.channel, [Math.min(lo, op.region.offset), Math.max(hi, op.region.offset + op.region.count)]);
      }
    }
    expect(Object.fromEntries(seen)).toEqual({ 1: [0, 8], 2: [8, 16] });
  });
});

describe("the pipeline", () => {
  /** When the first segment reaches a leaf of tree 0 and the last segment reaches the root of tree 0 going up. */
  const times = (order: "dataflow" | "steps") => {
    const plans = compileAll(doubleBinaryTreeAllreduce, call);
    let firstDown = Infinity;
    let lastUp = 0;
    interpret(
      plans,
      {
        done: ({ rank, op }, t) => {
          const label = plans[rank]?.steps[op.step]?.label ?? "";
          if (op.kind === "recv" && label.startsWith("tree 0: directRecv seg 0 down"))
            firstDown = Math.min(firstDown, t);
          if (op.kind === "recv" && rank === 0 && label.includes("recvReduce seg 3 up")) lastUp = Math.max(lastUp, t);
        },
      },
      order,
    );
    expect(Number.isFinite(firstDown) && lastUp > 0, `${order}: both events seen`).toBe(true);
    return { firstDown, lastUp };
  };
  it("dataflow: segment 0 comes down before segment 3 has gone up (runTreeSplit)", () => {
    const t = times("dataflow");
    expect(t.firstDown).toBeLessThan(t.lastUp);
  });
  it("steps: every segment goes up first (runTreeUpDown)", () => {
    const t = times("steps");
    expect(t.firstDown).toBeGreaterThan(t.lastUp);
  });
});
