/**
 * Independent flow sets solved in worker threads (src/model/network/flow-sets.ts, the phases
 * engine's distinct rounds): the answers are those of solving each set alone in this thread, bit
 * for bit, whichever thread took it; a worker really takes sets; an error in a worker's set comes
 * back as an error naming it, not a hang; the solves' work is metered across sets and threads,
 * and a call past its budget is refused, saying what to do.
 */
import { describe, expect, it } from "vitest";
import { type FlowSet, solveSet, solveSets } from "../src/model/network/flow-sets.js";
import { SolveBudget, SolveWorkExceeded } from "../src/model/network/flows.js";
import { networkTime } from "../src/model/network/index.js";
import { RouteCache } from "../src/model/network/simulate.js";
import { parseTopology, placeRanks } from "../src/model/network/topology.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";
import { underLoad } from "./support/load.js";

const n = 128;
const topology = parseTopology("fattree", n, {});
const placement = placeRanks(topology, n);
const routes = new RouteCache(topology);

/** Every rank sends to the ranks at the given offsets, the k-th message `bytes[k]`: one round of a shift pattern. */
function shiftSet(offsets: readonly number[], bytes: readonly number[]): FlowSet {
  const b: number[] = [];
  const from: number[] = [];
  const tag: number[] = [];
  const start: number[] = [];
  const links: number[] = [];
  offsets.forEach((off, k) => {
    for (let r = 0; r < n; r++) {
      const { paths, latency } = routes.get(placement[r] as number, placement[(r + off) % n] as number);
      paths.forEach((p, i) => {
        b.push((bytes[k] as number) / paths.length);
        from.push(latency[i] as number);
        tag.push(k * n + r);
        start.push(links.length);
        links.push(...p);
      });
    }
  });
  start.push(links.length);
  return {
    bytes: Float64Array.from(b),
    from: Float64Array.from(from),
    tag: Int32Array.from(tag),
    pathStart: Int32Array.from(start),
    links: Int32Array.from(links),
    tags: offsets.length * n,
  };
}

const sets = [
  shiftSet([1, 17, 64], [4096, 65536, 1 << 20]),
  shiftSet([16, 32], [1 << 16, 1 << 16]),
  shiftSet([3, 5, 7, 9], [1000, 20000, 300000, 4000000]),
  shiftSet([100], [12345]),
];

describe("flow sets solved in threads", () => {
  it("give each set's answer alone, bit for bit, and workers take them", () => {
    const alone = sets.map((s) => solveSet(topology.links.bandwidth, s));
    const threaded = solveSets(topology.links.bandwidth, sets, { threads: 3, minFlows: 0, callerTakes: false });
    expect(threaded).toHaveLength(sets.length);
    threaded.forEach((r, j) => {
      const a = alone[j]!;
      expect(Array.from(r.ends)).toEqual(Array.from(a.ends));
      expect(Array.from(r.linkBytes)).toEqual(Array.from(a.linkBytes));
      expect(r.solves).toBe(a.solves);
      expect(r.thread).toBeGreaterThanOrEqual(1);
      expect(r.thread).toBeLessThanOrEqual(2);
    });
    // Every message of every set ended (each rank its own host: every message crosses the fabric),
    // so a lost tag or an unsolved set would show as a zero here.
    for (const r of threaded) expect(Array.from(r.ends).every((e) => e > 0)).toBe(true);
  });

  it("with the calling thread taking sets too, and progress told to the last set", () => {
    const told: number[] = [];
    const r = solveSets(topology.links.bandwidth, sets, {
      threads: 2,
      minFlows: 0,
      onDone: (done, total) => {
        expect(total).toBe(sets.length);
        told.push(done);
      },
    });
    const alone = sets.map((s) => solveSet(topology.links.bandwidth, s));
    r.forEach((x, j) => {
      expect(Array.from(x.ends)).toEqual(Array.from(alone[j]!.ends));
    });
    expect(told.at(-1)).toBe(sets.length);
    expect([...told].sort((a, b) => a - b)).toEqual(told);
  });

  it("hands a worker's error back as an error", () => {
    const bad: FlowSet = { ...sets[3]!, links: sets[3]!.links.map(() => topology.links.count + 5) };
    expect(() =>
      solveSets(topology.links.bandwidth, [sets[1]!, bad], { threads: 2, minFlows: 0, callerTakes: false }),
    ).toThrow(/worker thread solving a round failed: .*link \d+ of \d+/);
  });

  it("where no worker can load its module, the calling thread solves every set (no hang)", () => {
    const r = solveSets(topology.links.bandwidth, sets, {
      threads: 3,
      minFlows: 0,
      callerTakes: false,
      moduleUrl: new URL("./no-such-module.js", import.meta.url).href,
    });
    expect(r.every((x) => x.thread === 0)).toBe(true);
    const alone = sets.map((s) => solveSet(topology.links.bandwidth, s));
    r.forEach((x, j) => {
      expect(Array.from(x.ends)).toEqual(Array.from(alone[j]!.ends));
    });
  });

  it("a worker that dies outside its sets is an error at once, not a wait", () => {
    // A module that loads but has no workerTakesSets: the worker throws after loading.
    const started = performance.now();
    expect(() =>
      solveSets(topology.links.bandwidth, sets, {
        threads: 2,
        minFlows: 0,
        callerTakes: false,
        moduleUrl: new URL("../src/model/network/units.ts", import.meta.url).href,
      }),
    ).toThrow(/worker thread solving a round failed: worker 1 died: .*workerTakesSets/);
    expect(performance.now() - started).toBeLessThan(underLoad(60_000));
  });

  it("a thread count that is not a whole number of at least 1 is refused, naming --threads", () => {
    const ring = findAlgorithm("allreduce", "ring", { op: "test" });
    const call = makeCall({ collective: "allreduce", size: n, count: 1024 }, ring);
    for (const threads of [0, -1, 2.5, Number.NaN]) {
      expect(() => networkTime(ring, call, { topology, placement, engine: "phases", threads })).toThrow(
        /--threads.*whole number of at least 1/,
      );
    }
  });

  it("below the threshold, or with one thread, solves here", () => {
    const r = solveSets(topology.links.bandwidth, sets, { threads: 1 });
    expect(r.every((x) => x.thread === 0)).toBe(true);
    const small = solveSets(topology.links.bandwidth, sets);
    expect(small.every((x) => x.thread === 0)).toBe(true);
  });
});

describe("the solves' work, metered", () => {
  const bw = topology.links.bandwidth;
  const each = sets.map((x) => solveSet(bw, x).work);
  const total = each.reduce((a, b) => a + b, 0);

  it("is counted per set the same in every thread, and sums to the call's", () => {
    expect(each.every((w) => w > 0)).toBe(true);
    const threaded = solveSets(bw, sets, { threads: 3, minFlows: 0, callerTakes: false });
    expect(threaded.map((r) => r.work)).toEqual(each);
    // A budget of exactly the work passes, here and in threads.
    expect(solveSets(bw, sets, { workLimit: total }).map((r) => r.work)).toEqual(each);
    expect(solveSets(bw, sets, { workLimit: total, threads: 2, minFlows: 0 }).map((r) => r.work)).toEqual(each);
  });

  it("stops the sets past the call's budget (over all of them, not each), in this thread and in workers, saying how many were solved", () => {
    // Every set fits the budget alone; together they do not.
    const limit = total - 1;
    expect(Math.max(...each)).toBeLessThan(limit);
    for (const o of [{}, { threads: 3, minFlows: 0, callerTakes: false }, { threads: 2, minFlows: 0 }]) {
      let err: unknown;
      try {
        solveSets(bw, sets, { ...o, workLimit: limit });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SolveWorkExceeded);
      const e = err as SolveWorkExceeded;
      expect(e.limit).toBe(limit);
      expect(e.done?.what).toBe("distinct rounds solved");
      expect(e.done?.of).toBe(sets.length);
      expect(e.done?.count).toBeLessThan(sets.length);
    }
  });

  it("one budget spans several solves of a call, in this thread and in workers", () => {
    for (const o of [{}, { threads: 2, minFlows: 0 }]) {
      const budget = new SolveBudget(total + each[0]!);
      solveSets(bw, sets, { ...o, budget });
      expect(budget.spent).toBe(total);
      // What is left covers the first set again, not the rest.
      solveSets(bw, [sets[0]!], { ...o, budget });
      expect(budget.spent).toBe(total + each[0]!);
      expect(() => solveSets(bw, [sets[1]!], { ...o, budget })).toThrow(SolveWorkExceeded);
    }
  });

  it("says how far the set got where it stopped", () => {
    let err: unknown;
    try {
      solveSets(bw, [sets[0]!], { workLimit: Math.floor(each[0]! / 2) });
    } catch (e) {
      err = e;
    }
    const d = (err as SolveWorkExceeded).done!;
    expect(d.of).toBe(sets[0]!.bytes.length);
    expect(d.count).toBeGreaterThanOrEqual(0);
    expect(d.count).toBeLessThan(d.of);
  });

  it("a call past --solve-budget is refused on either engine, naming the flag, the call and what fits", () => {
    const a2a = findAlgorithm("alltoall", "pairwise", { op: "test" });
    const call = makeCall({ collective: "alltoall", size: n, count: n }, a2a);
    for (const engine of ["exact", "phases"] as const) {
      const ok = networkTime(a2a, call, { topology, placement, engine });
      expect(ok.work).toBeGreaterThan(1000);
      expect(networkTime(a2a, call, { topology, placement, engine, solveWork: ok.work }).time).toBe(ok.time);
      for (const threads of [1, 2]) {
        expect(() =>
          networkTime(a2a, call, { topology, placement, engine, threads, solveWork: Math.floor(ok.work / 3) }),
        ).toThrow(
          new RegExp(
            `^model: argument '--solve-budget': ${engine}: alltoall/pairwise at n = 128, 128 elements: its rate solves would scan more than the [\\d,]+ link crossings one call may \\(they stopped with [\\d,]+ of [\\d,]+ (flows of its one round finished, a flow per message path|messages arrived)\\); use fewer ranks \\(every rank sends to every other at once: half the ranks is about an eighth of the work\\), ${engine === "exact" ? "--engine phases \\(each distinct round solved once\\), " : ""}the alpha-beta formula \\(no --topology: no links shared\\), or a larger --solve-budget`,
          ),
        );
      }
    }
  });
});
