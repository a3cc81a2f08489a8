/**
 * NCCL's binary and double binary trees (topology/), and the generic pipelined tree routine on a
 * tree that is not binary, proved by the static checker.
 */
import { describe, expect, it } from "vitest";
import { binaryTree, binaryTreeHeight, type Tree, treeDepth, treeHeight } from "../algorithms/topology/binary_tree.js";
import { binomialTree } from "../algorithms/topology/binomial.js";
import { doubleBinaryTree, doubleBinaryTreeRoots } from "../algorithms/topology/double_binary_tree.js";
import { ring } from "../algorithms/topology/ring.js";
import {
  mergeByTick,
  treeAllreduce,
  treeAllreduceTimed,
  treeBusyTicks,
  treeScratch,
  unionSize,
} from "../algorithms/topology/tree_pipeline.js";
import { region } from "../src/schedule/build.js";
import { checkAlgorithm } from "../src/schedule/check.js";
import type { Algorithm } from "../src/schedule/types.js";

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

describe("tree_pipeline", () => {
  it("counts a union of intervals", () => {
    expect(unionSize([])).toBe(0);
    expect(
      unionSize([
        [3, 5],
        [0, 1],
        [4, 8],
        [10, 10],
      ]),
    ).toBe(2 + 6 + 1);
  });

  it("is busy exactly on the ticks it states, and every rank's ticks increase", () => {
    for (const n of [2, 3, 5, 8, 13]) {
      for (const [count, segment] of [
        [1, 1],
        [7, 2],
        [20, 3],
        [5, 100],
      ] as const) {
        const tree = (r: number) => binaryTree(r, n);
        const height = binaryTreeHeight(n);
        for (let rank = 0; rank < n; rank++) {
          const steps = treeAllreduceTimed({
            rank,
            size: n,
            tree,
            height,
            input: region("input", 0, count),
            output: region("output", 0, count),
            inPlace: false,
            scratch: region("scratch", 0, treeScratch(count, segment)),
            segment,
          });
          const ticks = steps.map((s) => s.tick);
          expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
          expect(new Set(ticks).size).toBe(ticks.length);
          const node = tree(rank);
          const busy = treeBusyTicks(
            treeDepth(tree, rank),
            node.parent >= 0,
            node.children.length > 0,
            height,
            Math.ceil(count / segment),
          );
          expect(ticks.length).toBe(unionSize(busy));
        }
      }
    }
  });

  it("merges timed schedules tick by tick, in list order", () => {
    const a = [{ tick: 0, label: "a0", transfers: [], local: [] }];
    const b = [
      { tick: 0, label: "b0", transfers: [], local: [] },
      { tick: 2, label: "b2", transfers: [], local: [] },
    ];
    expect([...mergeByTick([a, b])].map((s) => s.label)).toEqual(["a0; b0", "b2"]);
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
    cost: { stepsFormula: "-", bytesFormula: "-", steps: () => 0, sentElements: () => Number.NaN },
    scratch: (ctx) => treeScratch(ctx.count, ctx.segment, 3),
    *schedule(ctx) {
      const tree = ternary(ctx.size);
      yield* treeAllreduce({
        rank: ctx.rank,
        size: ctx.size,
        tree,
        height: treeHeight(tree, ctx.size),
        input: region("input", 0, ctx.count),
        output: region("output", 0, ctx.count),
        inPlace: ctx.inPlace,
        scratch: region("scratch", 0, treeScratch(ctx.count, ctx.segment, 3)),
        segment: ctx.segment,
      });
    },
  };
  it("all-reduces over a ternary tree, in and out of place (static checker)", () => {
    for (const size of [2, 4, 5, 13, 14, 40]) {
      for (const count of [1, 3, 10]) {
        for (const inPlace of [false, true]) {
          const report = checkAlgorithm(ternaryAllreduce, { size, count, segment: 2, inPlace }, { skipCost: true });
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
