/**
 * The network model's engine policy (src/model/network/policy.ts): one table of thresholds, which
 * docs/network.md prints; the exact engine bounded by an estimate of its memory, refusing before
 * it starts what would not fit and saying what would; the engine names a result reports are the
 * names --engine takes.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  chooseEngine,
  ENGINES,
  estimateOperations,
  exactHeapBudget,
  exactMemory,
  networkTime,
  networkTimePhases,
  parseTopology,
  placeRanks,
  THRESHOLDS,
  thresholdsMarkdown,
} from "../src/model/network/index.js";
import { flattenEveryRank } from "../src/model/network/simulate.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";
import { underLoad } from "./support/load.js";

const alg = (collective: string, name: string) => findAlgorithm(collective as never, name, { op: "test" });

describe("the engine policy", () => {
  it("docs/network.md prints the thresholds table from the code", () => {
    const doc = readFileSync(new URL("../docs/network.md", import.meta.url), "utf8");
    expect(doc, "paste thresholdsMarkdown() into docs/network.md's table").toContain(thresholdsMarkdown());
    for (const name of Object.keys(THRESHOLDS)) expect(thresholdsMarkdown()).toContain(`\`${name}\``);
  });

  it("exact on a call whose walk would not fit the heap is refused before it starts, naming what fits", () => {
    // Issue 40's case was this at n = 1,024: 2.1 M operations, which ran out of heap after 33 s
    // when the exact engine held every compiled plan; flat, they fit a 4 GiB heap. At 4,096
    // ranks: 33.6 M operations.
    const a = alg("alltoall", "pairwise");
    const call = makeCall({ collective: "alltoall", size: 4096, count: (64 * 2 ** 20) / 4 / 4096 }, a);
    const topology = parseTopology("fattree", 4096);
    const ops = estimateOperations(a, call);
    expect(exactMemory(ops)).toBeGreaterThan(exactHeapBudget());
    const t0 = performance.now();
    expect(() => networkTime(a, call, { topology, placement: placeRanks(topology, 4096), engine: "exact" })).toThrow(
      /^model: argument '--engine': exact: alltoall\/pairwise at n = 4096 walks about 33,55\d,\d{3} operations, about [\d,]+ MiB at its peak, more than the [\d,]+ MiB of heap it may use; use --engine phases \(or auto\), or fewer ranks \(about [\d,]+ fit at this size\)/,
    );
    expect(performance.now() - t0).toBeLessThan(underLoad(20_000));
    // auto does not take the exact engine there
    expect(chooseEngine(a, call, topology, "auto")).toBe("phases");
  });

  it("flattenEveryRank stops at the memory budget, on rank 0's estimate or on what it has compiled", () => {
    const a = alg("allreduce", "ring");
    const call = makeCall({ collective: "allreduce", size: 16, count: 1024 }, a);
    const ops = flattenEveryRank(a, call, 4).ops;
    const refusal =
      /walks about [\d,]+ operations, about \d+ MiB at its peak, more than the \d+ MiB of heap it may use/;
    expect(() => flattenEveryRank(a, call, 4, exactMemory(ops) - 1)).toThrow(refusal);
    expect(flattenEveryRank(a, call, 4, exactMemory(ops)).ranks).toBe(16);
  });

  it("the engine a result reports is one --engine takes", () => {
    const topology = parseTopology("torus:8x8", 64);
    const placement = placeRanks(topology, 64);
    const a = alg("allreduce", "ring");
    const call = makeCall({ collective: "allreduce", size: 64, count: 2 ** 12 }, a);
    for (const engine of ENGINES) {
      const r = networkTime(a, call, { topology, placement, engine });
      expect(ENGINES).toContain(r.engine);
      if (engine !== "auto") expect(r.engine).toBe(engine);
    }
    // the ring is walked under its rotation symmetry where it does not walk every rank: a field says so, not the engine's name
    const r = networkTimePhases(a, call, { topology, placement }, { form: "per-copy" });
    expect(r.engine).toBe("phases");
    expect(r.symmetry).toEqual({ kind: "rotate", p: 1 });
  });

  it("a call under a symmetry whose reductions cost gamma, past the moved walk's reach, is refused with what fits, not charged its slowest copies", () => {
    // Ring all-reduce at 1,024 ranks: about 6,000 operations a rank, 6 million in all, past the
    // 300,000 walked rank by rank and the 3,000,000 walked with moved plans; reductions at gamma
    // are what the per-copy walk does not time.
    const a = alg("allreduce", "ring");
    const call = makeCall({ collective: "allreduce", size: 1024, count: 2 ** 16 }, a);
    const topology = parseTopology("torus:32x32", 1024);
    const params = { topology, placement: placeRanks(topology, 1024), engine: "phases" as const };
    expect(() => networkTime(a, call, { ...params, gamma: 1e-5 })).toThrow(
      /phases: allreduce\/ring at n = 1024 is walked under its symmetry \(rotation, period 1\), and reductions cost gamma, which the per-copy walk does not time; walking every rank with moved plans takes about [\d,]+ operations, past the 3,000,000 it walks\. Fewer ranks, --gamma 0, or --engine exact/,
    );
    // With reductions free the same call is timed per copy.
    expect(networkTime(a, call, params).note).toMatch(/timed for its 1024 copies at once/);
  });
});
