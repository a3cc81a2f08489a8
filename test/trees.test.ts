/**
 * NCCL's binary and double binary trees (topology/), and the generic pipelined tree routine on a
 * tree that is not binary, proved by the static checker.
 */
import { describe, expect, it } from "vitest";
import { ring } from "../algorithms/lib/ring.js";
import { treeAllreduce, treeSteps } from "../algorithms/lib/tree.js";
import { binaryTree, binaryTreeHeight, type Tree, treeHeight } from "../algorithms/topology/binary_tree.js";
import { binomialTree } from "../algorithms/topology/binomial.js";
import { doubleBinaryTree, doubleBinaryTreeRoots } from "../algorithms/topology/double_binary_tree.js";
import { checkAlgorithm } from "../src/schedule/check.js";
import { type Algorithm, f } from "../src/schedule/dsl.js";
import { interpret } from "../src/schedule/interpret.js";
import { compile } from "../src/schedule/plan.js";
import { makeCall, rankCall } from "../src/specs/index.js";

/** What is wrong with `tree` as a tree over `size` ranks rooted at `root` (links agree, at most two children). */
function treeProblems(tree: Tree, size: number, root: number): string[] {
  const bad: string[] = [];
  for (let r = 0; r < size; r++) {
    const { parent, children } = tree(r);
    if (children.length > 2) bad.push(`n=${size}: rank ${r} has ${children.length} children`);
    if (r === root ? parent !== -1 : !tree(parent).children.includes(r))
      bad.push(`n=${size}: rank ${r}'s parent ${parent}`);
    for (const c of children) if (tree(c).parent !== r) bad.push(`n=${size}: rank ${r}'s child ${c}`);
  }
  return bad;
}

const leaves = (tree: Tree, size: number) =>
  Array.from({ length: size }, (_, r) => r).filter((r) => tree(r).children.length === 0);

describe("binaryTree (ncclGetBtree)", () => {
  it("matches NCCL's picture for 14 ranks", () => {
    const t = (r: number) => binaryTree(r, 14);
    expect(t(0)).toEqual({ parent: -1, children: [8] });
    expect(t(8)).toEqual({ parent: 0, children: [4, 12] });
    expect(t(12)).toEqual({ parent: 8, children: [10, 13] });
    expect(t(13)).toEqual({ parent: 12, children: [] });
    expect(t(4)).toEqual({ parent: 8, children: [2, 6] });
    expect(t(7)).toEqual({ parent: 6, children: [] });
  });
  it("is a tree rooted at 0 of height ⌈log2 n⌉ whose leaves are the odd ranks, n = 1..200", () => {
    const bad: string[] = [];
    for (let n = 1; n <= 200; n++) {
      const t = (r: number) => binaryTree(r, n);
      bad.push(...treeProblems(t, n, 0));
      if (treeHeight(t, n) !== binaryTreeHeight(n)) bad.push(`n=${n}: height ${treeHeight(t, n)}`);
      const odd = Array.from({ length: n >> 1 }, (_, i) => 2 * i + 1);
      if (n > 1 && leaves(t, n).join() !== odd.join()) bad.push(`n=${n}: leaves ${leaves(t, n)}`);
    }
    expect(bad).toEqual([]);
  });
  it("rejects ranks outside the communicator", () => {
    expect(() => binaryTree(4, 4)).toThrow(/rank 4 out of range for size 4/);
  });
});

describe("doubleBinaryTree (ncclGetDtree)", () => {
  it("mirrors for even n and shifts for odd n, as NCCL's pictures", () => {
    // n = 12: tree 1 is tree 0 with r -> 11 - r; root 11, whose child is 3.
    expect(doubleBinaryTree(11, 12, 1)).toEqual({ parent: -1, children: [3] });
    expect(doubleBinaryTree(7, 12, 1)).toEqual({ parent: 3, children: [9, 5] });
    // n = 13: tree 1 is tree 0 with r -> r + 1; root 1, whose child is 9, whose children are 5 and 0.
    expect(doubleBinaryTree(1, 13, 1)).toEqual({ parent: -1, children: [9] });
    expect(doubleBinaryTree(9, 13, 1)).toEqual({ parent: 1, children: [5, 0] });
  });
  it("gives two trees of the same height where no rank is a leaf in both, n = 1..200", () => {
    const bad: string[] = [];
    for (let n = 1; n <= 200; n++) {
      const [r0, r1] = doubleBinaryTreeRoots(n);
      const t0 = (r: number) => doubleBinaryTree(r, n, 0);
      const t1 = (r: number) => doubleBinaryTree(r, n, 1);
      bad.push(...treeProblems(t0, n, r0), ...treeProblems(t1, n, r1));
      if (treeHeight(t1, n) !== binaryTreeHeight(n)) bad.push(`n=${n}: tree 1 height ${treeHeight(t1, n)}`);
      const l0 = new Set(leaves(t0, n));
      const both = leaves(t1, n).filter((r) => l0.has(r));
      if (n > 1 && both.length > 0) bad.push(`n=${n}: ${both} are leaves in both trees`);
    }
    expect(bad).toEqual([]);
  });
});

describe("lib/tree: the pipelined tree all-reduce", () => {
  const binary: Algorithm = {
    collective: "allreduce",
    name: "binary_tree_test",
    summary: "test only",
    limits: "test only",
    source: "test only",
    cost: { steps: f("-", () => 0), sent: f("-", () => Number.NaN) },
    schedule: (c, mem) =>
      treeAllreduce({
        node: binaryTree(c.rank, c.size),
        input: mem.input,
        output: mem.output,
        segment: c.segment,
        scratch: mem.scratch,
      }),
  };

  it("takes the steps treeSteps states on every rank", () => {
    for (const n of [2, 3, 5, 8, 13]) {
      for (const [count, segment] of [
        [1, 1],
        [7, 2],
        [20, 3],
        [5, 100],
      ] as const) {
        for (let rank = 0; rank < n; rank++) {
          const plan = compile(binary, rankCall(makeCall({ collective: "allreduce", size: n, count, segment }), rank));
          const steps = new Set(plan.ops.filter((o) => o.peer >= 0).map((o) => o.step)).size;
          expect(steps, `n=${n} count=${count} segment=${segment} rank ${rank}`).toBe(
            treeSteps(binaryTree(rank, n), Math.ceil(count / segment)),
          );
        }
      }
    }
  });

  it("overlaps the way down of one segment with the way up of the next, without hand-numbered ticks", () => {
    // 8 segments on 16 ranks (height 4): in steps order up and down run one after the other
    // (about 2·(S + 2H) rounds); as dataflow the pipeline fills once (about S + 2H).
    const call = makeCall({ collective: "allreduce", size: 16, count: 8, segment: 1 });
    const plans = Array.from({ length: 16 }, (_, r) => compile(binary, rankCall(call, r)));
    const steps = interpret(plans, {}, "steps").time;
    const dataflow = interpret(plans, {}, "dataflow").time;
    expect(dataflow).toBeLessThan(steps);
    expect(dataflow).toBeLessThanOrEqual(8 + 2 * binaryTreeHeight(16));
  });

  // The routine takes any tree: here a ternary tree (parent ⌊(r-1)/3⌋), which no algorithm uses.
  const ternary =
    (size: number): Tree =>
    (r) => ({
      parent: r === 0 ? -1 : Math.floor((r - 1) / 3),
      children: [3 * r + 1, 3 * r + 2, 3 * r + 3].filter((c) => c < size),
    });
  const ternaryAllreduce: Algorithm = {
    collective: "allreduce",
    name: "ternary_tree_test",
    summary: "test only",
    limits: "test only",
    source: "test only",
    cost: { steps: f("-", () => 0), sent: f("-", () => Number.NaN) },
    schedule: (c, mem) =>
      treeAllreduce({
        node: ternary(c.size)(c.rank),
        input: mem.input,
        output: mem.output,
        segment: c.segment,
        scratch: mem.scratch,
      }),
  };
  it("all-reduces over a ternary tree, in and out of place (static checker)", () => {
    for (const size of [2, 4, 5, 13, 14, 40]) {
      for (const count of [1, 3, 10]) {
        for (const inPlace of [false, true]) {
          const call = makeCall({ collective: "allreduce", size, count, segment: 2, inPlace });
          const report = checkAlgorithm(ternaryAllreduce, call, { skipCost: true });
          expect(report.errors).toEqual([]);
          expect(report.steps).toBeGreaterThan(0);
        }
      }
    }
  });
});

describe("every topology builder rejects a rank outside the communicator, naming itself", () => {
  // [builder name in the message, call with (rank, size)]
  const builders: [string, (rank: number, size: number) => unknown][] = [
    ["binaryTree", (r, n) => binaryTree(r, n)],
    ["doubleBinaryTree", (r, n) => doubleBinaryTree(r, n, 0)],
    ["doubleBinaryTree", (r, n) => doubleBinaryTree(r, n, 1)],
    ["binomialTree", (r, n) => binomialTree(r, n)],
    ["ring", (r, n) => ring(r, n)],
    ["ring (root)", (r, n) => ring(0, n, r)],
  ];
  it.each(builders)("%s", (name, build) => {
    for (const [rank, size] of [
      [4, 4],
      [-1, 4],
      [0, 0],
      [1.5, 4],
      [0, 2.5],
      [5, 4],
    ] as const) {
      // A bad size fails ring's rank check before its root check.
      if (name === "ring (root)" && !(Number.isInteger(size) && size >= 1)) continue;
      expect(() => build(rank, size), `${name}(${rank}, ${size})`).toThrow(
        `${name}: rank ${rank} out of range for size ${size}`,
      );
    }
    // The edges of the valid range build without complaint.
    for (const [rank, size] of [
      [0, 1],
      [3, 4],
      [0, 4],
    ] as const) {
      expect(() => build(rank, size)).not.toThrow();
    }
  });
});

describe("binomialTree", () => {
  it("root spans the next power of two: children of vrank 0 for n = 5 are 4, 2, 1", () => {
    expect(binomialTree(0, 5)).toEqual({ parent: -1, children: [4, 2, 1], subtree: 5 });
    expect(binomialTree(0, 4)).toEqual({ parent: -1, children: [2, 1], subtree: 4 });
    expect(binomialTree(4, 5)).toEqual({ parent: 0, children: [], subtree: 1 });
    expect(binomialTree(6, 8)).toEqual({ parent: 4, children: [7], subtree: 2 });
  });
});

describe("ring", () => {
  it("vrank counts from the root; next and prev wrap", () => {
    expect(ring(1, 4, 2)).toEqual({ vrank: 3, next: 2, prev: 0 });
    expect(ring(0, 4)).toEqual({ vrank: 0, next: 1, prev: 3 });
    expect(ring(3, 4, 3)).toEqual({ vrank: 0, next: 0, prev: 2 });
  });
});
