/**
 * topology/binomial: the binomial tree over virtual ranks (vrank 0 is the root), as MPICH's
 * MPIR_Bcast_intra_binomial and Open MPI's ompi_coll_base_topo_build_bmtree build it.
 *
 * vrank v's parent is v with its lowest set bit cleared; its children are v + 2^j for every
 * 2^j below that bit (every 2^j below size for the root) with v + 2^j < size. Children are
 * listed largest subtree first, the order a broadcast or scatter sends in; a reduce or gather
 * receives them in reverse. The subtree of v is the contiguous vrank range [v, v + subtree),
 * which is what lets gather and scatter move a whole subtree as one message.
 */
import { checkRank } from "../../src/schedule/dsl.js";

export interface BinomialNode {
  /** Parent vrank; -1 at the root. */
  readonly parent: number;
  /** Child vranks, largest subtree first (the order a broadcast sends in). */
  readonly children: readonly number[];
  /** Vranks in this node's subtree, itself included: the range [vrank, vrank + subtree). */
  readonly subtree: number;
}

/** The lowest set bit of v, or for the root the smallest power of two >= size. */
function span(vrank: number, size: number): number {
  if (vrank === 0) {
    let mask = 1;
    while (mask < size) mask <<= 1;
    return mask;
  }
  return vrank & -vrank;
}

/** Number of vranks in vrank's subtree: [vrank, vrank + subtreeSize). */
export function subtreeSize(vrank: number, size: number): number {
  return Math.min(span(vrank, size), size - vrank);
}

export function binomialTree(vrank: number, size: number): BinomialNode {
  checkRank("binomialTree", vrank, size);
  const top = span(vrank, size);
  const children: number[] = [];
  for (let mask = top >> 1; mask >= 1; mask >>= 1) {
    if (vrank + mask < size) children.push(vrank + mask);
  }
  return { parent: vrank === 0 ? -1 : vrank - top, children, subtree: subtreeSize(vrank, size) };
}

/** ceil(log2 size): the binomial tree's depth, and the number of rounds of a binomial broadcast. */
export function ceilLog2(size: number): number {
  let k = 0;
  while (1 << k < size) k++;
  return k;
}
