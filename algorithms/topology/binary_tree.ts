/**
 * topology/binary_tree: NCCL's balanced binary tree over ranks (ncclGetBtree, src/graph/trees.cc).
 *
 * Ranks sit in in-order layout with rank 0 as the root: a rank's lowest set bit `bit` gives its
 * level; its parent is (rank ^ bit) | (bit << 1), or rank ^ bit when that is out of range; its
 * children are rank - bit/2 and the largest rank + bit/2^j (j >= 1) still in range. The root has
 * one child, the largest power of two below n. Odd ranks are the leaves, so about half the ranks
 * are leaves and the height is ⌈log2 n⌉.
 *
 *   0---------------8
 *            ______/ \______
 *           4               12
 *         /   \            /  \
 *       2       6       10     \
 *      / \     / \     /  \     \
 *     1   3   5   7   9   11    13
 */
import { checkRank } from "../../src/schedule/dsl.js";

/** One rank's place in a tree: parent -1 at the root; children in NCCL's order (down0, down1). */
export interface TreeNode {
  readonly parent: number;
  readonly children: readonly number[];
}

/** A whole tree over ranks 0..size-1, as a function of the rank (trees are pure, like NCCL's). */
export type Tree = (rank: number) => TreeNode;

/** ncclGetBtree: rank's parent and children in the binary tree over `size` ranks rooted at 0. */
export function binaryTree(rank: number, size: number): TreeNode {
  checkRank("binaryTree", rank, size);
  let bit = 1;
  while (bit < size && (bit & rank) === 0) bit <<= 1;
  if (rank === 0) return { parent: -1, children: size > 1 ? [bit >> 1] : [] };

  let parent = (rank ^ bit) | (bit << 1);
  if (parent >= size) parent = rank ^ bit;

  const children: number[] = [];
  let lowbit = bit >> 1;
  if (lowbit > 0) children.push(rank - lowbit);
  // The right child is the nearest in-order rank above that exists: rank + bit/2, bit/4, ...
  while (lowbit > 0 && rank + lowbit >= size) lowbit >>= 1;
  if (lowbit > 0) children.push(rank + lowbit);
  return { parent, children };
}

/** Depth of `rank` (root 0) by walking parents; at most ⌈log2 size⌉ + 1 hops in these trees. */
export function treeDepth(tree: Tree, rank: number): number {
  let depth = 0;
  for (let r = rank, p = tree(r).parent; p >= 0; r = p, p = tree(r).parent) depth++;
  return depth;
}

/** Height of the binary tree over `size` ranks: ⌈log2 size⌉ (the mirrored and shifted trees too). */
export function binaryTreeHeight(size: number): number {
  let h = 0;
  while (1 << h < size) h++;
  return h;
}

/** Height of any tree over `size` ranks: the largest depth, by walking (O(n log n)). */
export function treeHeight(tree: Tree, size: number): number {
  let height = 0;
  for (let r = 0; r < size; r++) height = Math.max(height, treeDepth(tree, r));
  return height;
}
