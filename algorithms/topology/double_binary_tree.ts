/**
 * topology/double_binary_tree: NCCL's two complementary binary trees (ncclGetDtree,
 * src/graph/trees.cc), so that each rank is a leaf in at most one of them.
 *
 * Tree 0 is the binary tree of binary_tree.ts (root 0; the odd ranks are its leaves). Tree 1
 * is that tree mirrored (rank r plays the part of n-1-r; root n-1) when n is even, so the even
 * ranks are its leaves; or shifted by one (rank r plays the part of r-1; root 1) when n is odd.
 * Each tree carries half the data, so every rank sends and receives about as much as in one
 * tree while the leaves' idle links carry the other half.
 */
import { checkRank } from "../../src/schedule/dsl.js";
import { binaryTree, type TreeNode } from "./binary_tree.js";

/** Rank `rank`'s place in tree `which` (0 or 1) of the double binary tree over `size` ranks. */
export function doubleBinaryTree(rank: number, size: number, which: 0 | 1): TreeNode {
  checkRank("doubleBinaryTree", rank, size);
  if (which === 0) return binaryTree(rank, size);
  // Mirror for even n, shift by one for odd n: the map is its own kind of relabelling, so the
  // same function maps the btree's answer back to real ranks.
  const toTree = (r: number): number => (size % 2 === 0 ? size - 1 - r : (r - 1 + size) % size);
  const fromTree = (t: number): number => (t < 0 ? -1 : size % 2 === 0 ? size - 1 - t : (t + 1) % size);
  const node = binaryTree(toTree(rank), size);
  return { parent: fromTree(node.parent), children: node.children.map(fromTree) };
}

/** The two roots: 0 and n-1 (n even) or 1 (n odd, n > 1), as ncclGetDtreeRoots. */
export function doubleBinaryTreeRoots(size: number): readonly [number, number] {
  return [0, size % 2 === 1 && size > 1 ? 1 : size - 1];
}
