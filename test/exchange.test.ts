/**
 * algorithms/lib/exchange.ts, the routines all-to-all and alltoallv algorithms share, called the
 * way a newcomer's algorithm would call them: one block per peer or an internal invariant naming
 * the routine (the public API never gets here with the wrong counts; a new algorithm might), and
 * the steps each routine makes for good blocks. Touches nothing outside the schedule DSL.
 */
import { describe, expect, it } from "vitest";
import { alltoallvBlocks, blocksOf, groupedExchange, pairwiseExchange, selfCopy } from "../algorithms/lib/exchange.js";
import { type Memory, region, type Schedule } from "../src/schedule/dsl.js";
import type { RankCall } from "../src/specs/types.js";

const steps = (s: Schedule) => [...s];
const input = region("input", 0, 12);
const output = region("output", 0, 12);

describe("lib/exchange: one block per peer, or the routine says which it is", () => {
  const three = blocksOf(input, 3, 4);
  const two = blocksOf(output, 2, 4);
  it.each([
    ["pairwiseExchange", pairwiseExchange],
    ["groupedExchange", groupedExchange],
  ] as const)("%s rejects a send or a receive list that is not one block per peer", (name, routine) => {
    const want = `cclab internal invariant failed: ${name}: one block per peer`;
    expect(() => steps(routine(0, 3, three, two))).toThrow(want);
    expect(() => steps(routine(0, 3, two, blocksOf(output, 3, 4)))).toThrow(want);
    expect(() => steps(routine(0, 3, three, blocksOf(output, 3, 4)))).not.toThrow();
  });

  it("selfCopy rejects an own block whose send and receive sizes differ", () => {
    const recv = [region("output", 0, 4), region("output", 4, 3)];
    expect(() => steps(selfCopy(1, blocksOf(input, 2, 4), recv))).toThrow(
      "cclab internal invariant failed: selfCopy: rank 1 sends itself 4, receives 3",
    );
  });

  it("alltoallvBlocks needs one send and one receive count per peer", () => {
    const mem = { input, output } as unknown as Memory;
    const call = (sendCounts?: number[], recvCounts?: number[]) =>
      ({ collective: "alltoallv", rank: 0, size: 2, count: 0, sendCounts, recvCounts }) as unknown as RankCall;
    const want = "cclab internal invariant failed: alltoallv: one count per peer";
    expect(() => alltoallvBlocks(call(undefined, [1, 2]), mem)).toThrow(want);
    expect(() => alltoallvBlocks(call([1, 2], undefined), mem)).toThrow(want);
    expect(() => alltoallvBlocks(call([1], [1, 2]), mem)).toThrow(want);
    expect(() => alltoallvBlocks(call([1, 2], [1, 2, 3]), mem)).toThrow(want);
    const { sendBlocks, recvBlocks } = alltoallvBlocks(call([1, 2], [3, 0]), mem);
    expect(sendBlocks).toEqual([region("input", 0, 1), region("input", 1, 2)]);
    expect(recvBlocks).toEqual([region("output", 0, 3), region("output", 3, 0)]);
  });
});
