/**
 * All-to-all exchanges over per-peer blocks, shared by alltoall and alltoallv: the pairwise
 * rounds (MPICH's and Open MPI's pairwise) and the one big group (torch's all_to_all over NCCL),
 * and the block layouts of both collectives.
 */
import { invariant } from "../../src/core/assert.js";
import {
  copy,
  type Memory,
  type Region,
  recv,
  type Schedule,
  sameRegion,
  send,
  step,
  sub,
  type Transfer,
} from "../../src/schedule/dsl.js";
import type { RankCall } from "../../src/specs/types.js";

/** The local copy of a rank's own block, skipped when it is empty or already in place. */
export function* selfCopy(rank: number, sendBlocks: readonly Region[], recvBlocks: readonly Region[]): Schedule {
  const src = sendBlocks[rank] as Region;
  const dst = recvBlocks[rank] as Region;
  invariant(src.count === dst.count, () => `selfCopy: rank ${rank} sends itself ${src.count}, receives ${dst.count}`);
  if (src.count > 0 && !sameRegion(src, dst)) yield step("copy own block", [], [copy(dst, src)]);
}

/**
 * n-1 rounds: round k sends sendBlocks[r+k] to r+k and receives recvBlocks[r-k] from r-k, so each
 * round is a permutation of the links. Empty blocks are still posted: every rank has n-1 rounds.
 */
export function* pairwiseExchange(
  rank: number,
  size: number,
  sendBlocks: readonly Region[],
  recvBlocks: readonly Region[],
): Schedule {
  invariant(sendBlocks.length === size && recvBlocks.length === size, "pairwiseExchange: one block per peer");
  yield* selfCopy(rank, sendBlocks, recvBlocks);
  for (let k = 1; k < size; k++) {
    const to = (rank + k) % size;
    const from = (rank - k + size) % size;
    yield step(`send to ${to}, recv from ${from}`, [
      send(to, sendBlocks[to] as Region),
      recv(from, recvBlocks[from] as Region),
    ]);
  }
}

/** One group with a send to and a receive from every other rank; empty blocks are posted too, as torch does. */
export function* groupedExchange(
  rank: number,
  size: number,
  sendBlocks: readonly Region[],
  recvBlocks: readonly Region[],
): Schedule {
  invariant(sendBlocks.length === size && recvBlocks.length === size, "groupedExchange: one block per peer");
  yield* selfCopy(rank, sendBlocks, recvBlocks);
  const transfers: Transfer[] = [];
  for (let k = 1; k < size; k++) {
    const peer = (rank + k) % size;
    transfers.push(send(peer, sendBlocks[peer] as Region), recv(peer, recvBlocks[peer] as Region));
  }
  yield step("send to all, recv from all", transfers);
}

/** count-element blocks of r: block p at p·count. */
export const blocksOf = (r: Region, size: number, count: number): Region[] =>
  Array.from({ length: size }, (_, p) => sub(r, p * count, count));

/**
 * alltoall's blocks: block p of the input goes to rank p, block q of the output comes from rank
 * q. In place the input is the output, so the sends read a scratch copy (made by the step this
 * yields); the own block is already where it belongs.
 */
export function* alltoallBlocks(
  c: RankCall,
  mem: Memory,
): Generator<ReturnType<typeof step>, { sendBlocks: Region[]; recvBlocks: Region[] }> {
  const recvBlocks = blocksOf(mem.output, c.size, c.count);
  if (!c.inPlace) return { sendBlocks: blocksOf(mem.input, c.size, c.count), recvBlocks };
  const saved = mem.scratch(c.size * c.count);
  yield step("copy input to scratch", [], [copy(saved, mem.input)]);
  const sendBlocks = blocksOf(saved, c.size, c.count);
  sendBlocks[c.rank] = recvBlocks[c.rank] as Region;
  return { sendBlocks, recvBlocks };
}

/** Blocks at the prefix sums of per-peer counts: block p is counts[p] elements of r. */
export function splitBlocks(r: Region, counts: readonly number[]): Region[] {
  let offset = 0;
  return counts.map((n) => {
    const b = sub(r, offset, n);
    offset += n;
    return b;
  });
}

/** alltoallv's blocks of one rank, from its send and receive counts. */
export function alltoallvBlocks(c: RankCall, mem: Memory): { sendBlocks: Region[]; recvBlocks: Region[] } {
  const { sendCounts, recvCounts, size } = c;
  invariant(sendCounts?.length === size && recvCounts?.length === size, "alltoallv: one count per peer");
  return { sendBlocks: splitBlocks(mem.input, sendCounts), recvBlocks: splitBlocks(mem.output, recvCounts) };
}
