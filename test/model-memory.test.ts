/**
 * The network model's memory bounded by an estimate of memory, not by a count of operations
 * (src/model/network/policy.ts, phases-memory.ts): a call's size estimated from rank 0, the root
 * and a few other ranks (a linear root's n - 1 transfers are the root's, not every rank's), the
 * phases engine's walk bounded by the heap it may use and its rounds' message copies counted
 * before any is solved; a call that fits runs, and one that does not is refused before it
 * starts, saying what fits. The full sweep over every algorithm is test/perf/model-sweep.ts.
 */
import { describe, expect, it } from "vitest";
import {
  estimateOperations,
  estimateWork,
  exactHeapBudget,
  networkTime,
  parseTopology,
  placeRanks,
} from "../src/model/network/index.js";
import { copiesOf, phasesMemory } from "../src/model/network/phases-memory.js";
import { solveRounds } from "../src/model/network/round-solve.js";
import { walkCall } from "../src/model/network/rounds.js";
import { probeSymmetry } from "../src/model/network/symmetry.js";
import { compile } from "../src/schedule/plan.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall, rankCall } from "../src/specs/index.js";

const alg = (collective: string, name: string) => findAlgorithm(collective as never, name, { op: "test" });
const callOf = (collective: string, name: string, size: number, count: number, root = 0) =>
  makeCall({ collective: collective as never, size, count, root }, alg(collective, name));

describe("the model's memory estimate", () => {
  it("counts a linear root's n - 1 transfers once, not once for every rank", () => {
    // gather/linear at 4,096 ranks, one element a rank: the root receives 4,095 messages, every
    // other rank sends one. Rank 0's plan times n (the estimate before) was 16.8 million.
    for (const root of [0, 1234]) {
      const c = callOf("gather", "linear", 4096, 1, root);
      const a = alg("gather", "linear");
      let every = 0;
      let sends = 0;
      for (let r = 0; r < 4096; r++) {
        const ops = compile(a, rankCall(c, r)).ops;
        every += ops.length;
        sends += ops.filter((o) => o.kind === "send").length;
      }
      const w = estimateWork(c, (r) => compile(a, rankCall(c, r)));
      expect(w.operations, `root ${root}`).toBeGreaterThanOrEqual(every);
      expect(w.operations, `root ${root}`).toBeLessThan(2 * every);
      expect(w.sends, `root ${root}`).toBe(sends);
      expect(estimateOperations(a, c)).toBe(w.operations);
    }
  });

  it("a walk's message copies are those its rounds solve", () => {
    // The 32 B ring on 1,024 ranks: one element goes round twice, 2,046 distinct rounds of 8
    // messages; rank 0's distinct destinations times n (one) would say 1,024.
    const a = alg("allreduce", "ring");
    const c = callOf("allreduce", "ring", 1024, 8);
    const topology = parseTopology("torus:32x32", 1024);
    const w = walkCall(a, c, 4, probeSymmetry(a, c), "every-rank");
    const solved = solveRounds(w, 1024, { topology, placement: placeRanks(topology, 1024) });
    let solvedCopies = 0;
    for (const ph of solved.patterns.values()) solvedCopies += ph.duration.length;
    const { copies, solving } = copiesOf(w, 1024, 2);
    expect(copies).toBe(solvedCopies);
    expect(solvedCopies).toBe(2 * 1023 * 8);
    // The two largest rounds, one per thread.
    expect(solving).toBe(16);
    expect(phasesMemory(w.operations, copies, solving).bytes).toBeLessThan(exactHeapBudget());
  });
});

describe("tiny messages on many ranks: modelled where they fit, refused with what fits where not", () => {
  const torus = parseTopology("torus:64x64", 4096);
  const onTorus = { topology: torus, placement: placeRanks(torus, 4096) };

  // Refused before by the phases engine's 8 M operation cap, estimated as the root's plan times n.
  for (const [collective, name] of [
    ["gather", "linear"],
    ["broadcast", "linear"],
    ["scatter", "linear"],
    ["reduce", "linear"],
  ] as const) {
    it(`${collective}/${name} at 4,096 ranks, one element a rank, on torus:64x64 runs (its walk is small)`, () => {
      const t0 = performance.now();
      const r = networkTime(alg(collective, name), callOf(collective, name, 4096, 1), onTorus);
      expect(r.engine).toBe("phases");
      expect(r.operations).toBeLessThan(20_000);
      expect(r.time).toBeGreaterThan(0);
      expect(performance.now() - t0).toBeLessThan(30_000);
    });
  }

  it("the exact engine takes gather/linear at 2,048 ranks on the fat-tree (its estimate was 4.2 million operations)", () => {
    const fattree = parseTopology("fattree", 2048);
    const r = networkTime(alg("gather", "linear"), callOf("gather", "linear", 2048, 1), {
      topology: fattree,
      placement: placeRanks(fattree, 2048),
      engine: "exact",
    });
    expect(r.engine).toBe("exact");
    expect(r.operations).toBeLessThan(8_192);
  });

  it("a one-segment call whose walk would not fit the heap is refused by its memory, naming fewer ranks and fewer steps", () => {
    // Ring all-reduce of 4,095 elements on 4,096 ranks: chunks of one element but the last (no
    // rotation symmetry); its 2(n-1) steps on every rank are 84 million operations to walk.
    const a = alg("allreduce", "ring");
    const t0 = performance.now();
    expect(() => networkTime(a, callOf("allreduce", "ring", 4096, 4095), onTorus)).toThrow(
      /^model: argument '-n': phases: allreduce\/ring at n = 4,096, 4,095 elements in segments of [\d,]+: about 8\d,\d{3},\d{3} operations to walk and [\d,]+ message copies to solve, about [\d,]+ MiB at its peak, more than the [\d,]+ MiB of heap it may use; use fewer ranks \(about -n [\d,]+\), an algorithm of fewer steps \(e\.g\. recursive_doubling/,
    );
    expect(performance.now() - t0).toBeLessThan(60_000);
  });
});
