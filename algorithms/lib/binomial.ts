/**
 * Binomial-tree routines (MPICH's and Open MPI's binomial broadcast, reduce, gather and scatter)
 * over topology/binomial.ts, in vrank space (the root is vrank 0): the whole-message broadcast
 * and reduce, and the gather and scatter of uneven per-rank blocks that move a whole subtree as
 * one message. gather/binomial, scatter/binomial, broadcast/binomial, reduce/binomial and the
 * compositions built on them (allgather/gather_broadcast, reducescatter/reduce_scatter,
 * reduce/rabenseifner, broadcast/scatter_allgather) all call these. The broadcast, reduce,
 * gather and scatter of whole subtrees take any tree whose subtrees are runs of vranks (RunTree):
 * the bine algorithms pass the Bine tree (lib/bine.ts).
 */
import { invariant } from "../../src/core/assert.js";
import {
  type Chunk,
  copy,
  type LocalOp,
  type Region,
  rankOf,
  recv,
  reduce,
  type Schedule,
  sameRegion,
  send,
  step,
  sub,
  vrankOf,
} from "../../src/schedule/dsl.js";
import { binomialTree, subtreeSize } from "../topology/binomial.js";

/** One vrank's place in a tree whose every subtree is a run of vranks, [first, first + subtree). */
export interface RunTreeNode {
  readonly parent: number;
  /** Child vranks in the order a broadcast sends to them (largest subtree first). */
  readonly children: readonly number[];
  readonly first: number;
  readonly subtree: number;
}

/** Such a tree over `size` vranks (vrank 0 the root), as a function of the vrank. */
export type RunTree = (vrank: number, size: number) => RunTreeNode;

/** The binomial tree, whose subtree of v is [v, v + subtree): the default of every routine here. */
export const binomialRuns: RunTree = (vrank, size) => ({ ...binomialTree(vrank, size), first: vrank });

/**
 * The binomial broadcast of buf from root: a rank receives the whole message from its parent,
 * then sends it to each child, largest subtree first. The root sends from `from` (default buf).
 */
export function* binomialBroadcast(
  rank: number,
  size: number,
  root: number,
  buf: Region,
  from: Region = buf,
  tree: RunTree = binomialRuns,
): Schedule {
  const node = tree(vrankOf(rank, root, size), size);
  if (node.parent >= 0) yield step("recv", [recv(rankOf(node.parent, root, size), buf)]);
  const src = node.parent < 0 ? from : buf;
  for (const c of node.children) yield step(`send to vrank ${c}`, [send(rankOf(c, root, size), src)]);
}

/**
 * The binomial reduce: each rank receives its children's partial results, smallest subtree
 * first, into tmp and reduces each into its accumulator, then sends the accumulator to its
 * parent. The first reduction reads `input` straight (acc = input ⊕ tmp), so no rank copies its
 * input; leaves send their input as it is. The root's result lands in `output`.
 */
export function* binomialReduce(
  rank: number,
  size: number,
  root: number,
  a: { readonly input: Region; readonly output: Region; readonly scratch: (count: number) => Region },
  tree: RunTree = binomialRuns,
): Schedule {
  const node = tree(vrankOf(rank, root, size), size);
  const isRoot = node.parent < 0;
  const count = a.input.count;
  const children = [...node.children].reverse();
  if (children.length === 0) {
    if (isRoot && !sameRegion(a.output, a.input)) yield step("copy input", [], [copy(a.output, a.input)]);
    else if (!isRoot) yield step("send", [send(rankOf(node.parent, root, size), a.input)]);
    return;
  }
  const acc = isRoot ? a.output : a.scratch(count);
  const tmp = a.scratch(count);
  for (const [i, c] of children.entries()) {
    yield step(
      `recvReduce from vrank ${c}`,
      [recv(rankOf(c, root, size), tmp)],
      [reduce(acc, tmp, i === 0 ? a.input : undefined)],
    );
  }
  if (!isRoot) yield step("send", [send(rankOf(node.parent, root, size), acc)]);
}

/** Where the blocks of the vrank range [first, first + span) sit in a rank-ordered buffer. */
interface Piece {
  /** Offset in the rank-ordered buffer. */
  readonly offset: number;
  /** Offset within the range's vrank-ordered staging area. */
  readonly staged: number;
  readonly count: number;
}

/** prefix[r] = elements of the blocks of ranks 0..r-1; prefix[size] is the total. */
function prefixSums(counts: readonly number[]): number[] {
  const prefix = [0];
  for (const c of counts) prefix.push((prefix[prefix.length - 1] as number) + c);
  return prefix;
}

/** The blocks of vranks [first, first + span), in rank order: one piece, or two when the ranks wrap past size-1 to 0. */
function rangePieces(first: number, span: number, root: number, prefix: readonly number[]): Piece[] {
  const size = prefix.length - 1;
  const start = rankOf(first, root, size);
  const at = (r: number) => prefix[r] as number;
  if (start + span <= size) return [{ offset: at(start), staged: 0, count: at(start + span) - at(start) }];
  const head = at(size) - at(start);
  return [
    { offset: at(start), staged: 0, count: head },
    { offset: 0, staged: head, count: at(start + span - size) },
  ];
}

const total = (pieces: readonly Piece[]): number => pieces.reduce((a, p) => a + p.count, 0);

export interface Blocks {
  readonly rank: number;
  readonly size: number;
  readonly root: number;
  /** Elements in each rank's block, indexed by rank (uneven is fine). */
  readonly counts: readonly number[];
  /** This rank's block. */
  readonly own: Region;
  /** At the root: all blocks in rank order (block r at counts[0] + ... + counts[r-1]). */
  readonly all: Region;
  readonly scratch: (count: number) => Region;
  /** The tree (default the binomial tree). */
  readonly tree?: RunTree;
}

/** Elements before vrank v's block in vrank order from `from`: a subtree's staging offsets. */
function stagedBase(b: Blocks, from: number, v: number): number {
  let off = 0;
  for (let u = from; u < v; u++) off += b.counts[rankOf(u, b.root, b.size)] as number;
  return off;
}

/**
 * The binomial gather of uneven blocks: a leaf sends its block to its parent; an inner rank
 * stages its own block and its children's subtrees in scratch, contiguous in vrank order, and
 * forwards them in one message. The root receives each child's subtree straight into place,
 * except the one subtree whose ranks wrap past size-1 to 0, which it stages and copies in two pieces.
 */
export function* binomialGatherBlocks(b: Blocks): Schedule {
  const { rank, size, root, counts } = b;
  invariant(counts.length === size, () => `binomialGatherBlocks: ${counts.length} counts for size ${size}`);
  const prefix = prefixSums(counts);
  const vrank = vrankOf(rank, root, size);
  const tree = b.tree ?? binomialRuns;
  const node = tree(vrank, size);
  // Children are received smallest subtree first: the reverse of the order a broadcast sends.
  const children = [...node.children].reverse();

  if (vrank === 0) {
    const mine = sub(b.all, prefix[rank] as number, counts[rank] as number);
    const own: LocalOp[] = sameRegion(mine, b.own) ? [] : [copy(mine, b.own)];
    if (children.length === 0) {
      if (own.length > 0) yield step("copy own block", [], own);
      return;
    }
    for (const [i, c] of children.entries()) {
      const peer = rankOf(c, root, size);
      const cn = tree(c, size);
      const pieces = rangePieces(cn.first, cn.subtree, root, prefix);
      const first = i === 0 ? own : [];
      if (pieces.length === 1) {
        const p = pieces[0] as Piece;
        yield step(`recv subtree of vrank ${c}`, [recv(peer, sub(b.all, p.offset, p.count))], first);
      } else {
        const stage = b.scratch(total(pieces));
        const unstage = pieces.map((p) => copy(sub(b.all, p.offset, p.count), sub(stage, p.staged, p.count)));
        yield step(`recv subtree of vrank ${c}`, [recv(peer, stage)], [...first, ...unstage]);
      }
    }
    return;
  }

  const parent = rankOf(node.parent, root, size);
  if (children.length === 0) {
    yield step("send own block", [send(parent, b.own)]);
    return;
  }
  // Scratch holds the subtree's blocks in vrank order (in a binomial tree own block first, then
  // each child's subtree).
  const stage = b.scratch(stagedBase(b, node.first, node.first + node.subtree));
  const ownAt = stagedBase(b, node.first, vrank);
  for (const [i, c] of children.entries()) {
    const cn = tree(c, size);
    const at = stagedBase(b, node.first, cn.first);
    const count = stagedBase(b, cn.first, cn.first + cn.subtree);
    const first = i === 0 ? [copy(sub(stage, ownAt, b.own.count), b.own)] : [];
    yield step(`recv subtree of vrank ${c}`, [recv(rankOf(c, root, size), sub(stage, at, count))], first);
  }
  yield step(`send subtree of vrank ${vrank}`, [send(parent, stage)]);
}

/**
 * The binomial scatter of uneven blocks: the root sends each child its whole subtree's blocks in
 * one message, largest subtree first (the one subtree whose ranks wrap is packed first); an inner
 * rank receives its subtree's blocks in scratch, keeps its own and passes each child its part.
 */
export function* binomialScatterBlocks(b: Blocks): Schedule {
  const { rank, size, root, counts } = b;
  invariant(counts.length === size, () => `binomialScatterBlocks: ${counts.length} counts for size ${size}`);
  const prefix = prefixSums(counts);
  const vrank = vrankOf(rank, root, size);
  const tree = b.tree ?? binomialRuns;
  const node = tree(vrank, size);

  if (vrank === 0) {
    const mine = sub(b.all, prefix[rank] as number, counts[rank] as number);
    const own: LocalOp[] = sameRegion(mine, b.own) ? [] : [copy(b.own, mine)];
    if (node.children.length === 0) {
      if (own.length > 0) yield step("copy own block", [], own);
      return;
    }
    const pack: LocalOp[] = [];
    const sources = node.children.map((c) => {
      const cn = tree(c, size);
      const pieces = rangePieces(cn.first, cn.subtree, root, prefix);
      if (pieces.length === 1) return sub(b.all, (pieces[0] as Piece).offset, (pieces[0] as Piece).count);
      const stage = b.scratch(total(pieces));
      for (const p of pieces) pack.push(copy(sub(stage, p.staged, p.count), sub(b.all, p.offset, p.count)));
      return stage;
    });
    if (pack.length > 0) yield step("pack wrapped subtree", [], pack);
    for (const [i, c] of node.children.entries()) {
      yield step(`send subtree of vrank ${c}`, [send(rankOf(c, root, size), sources[i] as Region)], i === 0 ? own : []);
    }
    return;
  }

  const parent = rankOf(node.parent, root, size);
  if (node.children.length === 0) {
    yield step("recv own block", [recv(parent, b.own)]);
    return;
  }
  const stage = b.scratch(stagedBase(b, node.first, node.first + node.subtree));
  const ownAt = stagedBase(b, node.first, vrank);
  yield step(`recv subtree of vrank ${vrank}`, [recv(parent, stage)], [copy(b.own, sub(stage, ownAt, b.own.count))]);
  for (const c of node.children) {
    const cn = tree(c, size);
    const at = stagedBase(b, node.first, cn.first);
    const count = stagedBase(b, cn.first, cn.first + cn.subtree);
    yield step(`send subtree of vrank ${c}`, [send(rankOf(c, root, size), sub(stage, at, count))]);
  }
}

/**
 * The binomial scatter of chunks inside one buffer (van de Geijn's first half): on exit vrank v's
 * buf holds its subtree's chunks, which are contiguous because chunks follow vrank order.
 */
export function* binomialScatterChunks(
  rank: number,
  size: number,
  root: number,
  buf: Region,
  chunks: readonly Chunk[],
): Schedule {
  const vrank = vrankOf(rank, root, size);
  const node = binomialTree(vrank, size);
  const range = (first: number, span: number): Region => {
    const a = chunks[first] as Chunk;
    const z = chunks[first + span - 1] as Chunk;
    return sub(buf, a.offset, z.offset + z.count - a.offset);
  };
  if (node.parent >= 0) {
    yield step(`recv chunks of vrank ${vrank}'s subtree`, [
      recv(rankOf(node.parent, root, size), range(vrank, node.subtree)),
    ]);
  }
  for (const c of node.children) {
    yield step(`send chunks of vrank ${c}'s subtree`, [send(rankOf(c, root, size), range(c, subtreeSize(c, size)))]);
  }
}

/** Ranks in the largest subtree below the root: what a non-root gather or scatter rank forwards at most. */
export function largestSubtree(size: number): number {
  if (size < 2) return 0;
  let top = 1;
  while (top * 2 < size) top *= 2;
  return Math.max(size - top, top >> 1);
}
