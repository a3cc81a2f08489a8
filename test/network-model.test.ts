/**
 * Validation of the network model (issue 22, item 5), every expectation computed by hand in the
 * test from the topology's parameters, never copied from a run:
 * - 5a: `full` with link = 1/beta and latency = alpha is the alpha-beta model (modelTime, shared
 *   links) wherever no rank has two messages in flight in one direction; a tree root sending to
 *   two children shows the one difference (FIFO there, fair sharing here).
 * - 5b: ring all-reduce on `ring:N` is 2(N-1)(latency + (S/N)/link); recursive doubling on a ring
 *   pays for its long-distance steps: step k's messages cross 2^k links, 2^k of them on the
 *   busiest one.
 * - 5c: the bandwidth-term ratios ("congestion deficiency", De Sensi et al., NSDI'24) of
 *   Rabenseifner, recursive doubling and Swing on tori 8x8, 64x64, 8x8x8, 8x8x8x8.
 * - 5d: hierarchical all-reduce against the flat ring on 16 nodes of 8 GPUs with rail NICs.
 * - The shortcut rule (item 4): the phases engine within 5% of the exact one for every algorithm
 *   the scale targets name, and the rotation symmetry it uses holding on every rank.
 * docs/network-validation.md has the tables.
 */
import { describe, expect, it } from "vitest";
import { hierarchicalAllreduce } from "../algorithms/allreduce/hierarchical.js";
import { dtypeInfo } from "../src/core/dtype.js";
import {
  type NetworkResult,
  networkTime,
  networkTimeExact,
  networkTimePhases,
  parseTopology,
  placeRanks,
  rotationHolds,
  type Topology,
} from "../src/model/network/index.js";
import { type Algorithm, recv, send, step } from "../src/schedule/dsl.js";
import { interpret } from "../src/schedule/interpret.js";
import { modelTime } from "../src/schedule/model.js";
import { compile } from "../src/schedule/plan.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall, rankCall } from "../src/specs/index.js";
import type { CollectiveCall } from "../src/specs/types.js";

const site = { op: "network-model.test" };
const alg = (collective: string, name: string): Algorithm => findAlgorithm(collective as never, name, site);
const MiB = 2 ** 20;
const F32 = 4;

/** The call for S bytes, nccl-tests' convention: count = S/s for allreduce, S/(n·s) per rank for allgather. */
function callFor(a: Algorithm, n: number, bytes: number): CollectiveCall {
  const count = a.collective === "allgather" ? bytes / (n * F32) : bytes / F32;
  return makeCall({ collective: a.collective, size: n, count }, a);
}

function onTopology(spec: string, n: number, o: Parameters<typeof parseTopology>[2] = {}) {
  const topology = parseTopology(spec, n, o);
  return { topology, placement: placeRanks(topology, n) };
}

/**
 * Whether, under the alpha-beta model with shared links, some message waited for its sender's
 * outgoing or its receiver's incoming link (a rank with two messages in flight one way): where
 * none did, every message's bytes move in [start + alpha, start + alpha + beta·bytes] alone on
 * both of its links, which is what the flow engine computes on `full` too.
 */
function someMessageWaits(a: Algorithm, call: CollectiveCall, alpha: number, beta: number): boolean {
  const s = dtypeInfo(call.dtype).bytes;
  const plans = Array.from({ length: call.size }, (_, r) => compile(a, rankCall(call, r)));
  const egress = new Float64Array(call.size);
  const ingress = new Float64Array(call.size);
  let waited = false;
  const out = interpret(plans, {
    transfer: (snd, rcv, start) => {
      const bytes = snd.op.region.count * s;
      if (bytes === 0) return start;
      const alone = start + alpha + beta * bytes;
      const end = Math.max(start + alpha, egress[snd.rank] as number, ingress[rcv.rank] as number) + beta * bytes;
      if (end > alone * (1 + 1e-12)) waited = true;
      egress[snd.rank] = end;
      ingress[rcv.rank] = end;
      return end;
    },
  });
  expect(out.complete).toBe(true);
  return waited;
}

describe("5a: full with link 1/beta is the alpha-beta model", () => {
  const alpha = 5;
  const link = 25e3; // 25 GB/s in bytes per microsecond
  const beta = 1 / link;
  const cases: [string, string, number[]][] = [
    ["allreduce", "ring", [2, 3, 5, 8, 12]],
    ["allreduce", "segmented_ring", [3, 6, 8]],
    ["allreduce", "recursive_doubling", [3, 6, 8, 12, 16]],
    ["allreduce", "rabenseifner", [3, 5, 8, 12, 16]],
    ["allreduce", "swing_latency", [4, 6, 8, 12, 16]],
    ["allreduce", "swing_bandwidth", [3, 6, 8, 12, 16]],
    ["allreduce", "hierarchical", [6, 8, 12, 16]],
    ["allgather", "ring", [3, 5, 8, 12]],
    // Bruck at a power of two sends one message per step after the last arrived.
    ["allgather", "bruck", [4, 8, 16]],
  ];
  for (const [collective, name, sizes] of cases) {
    it(`${collective}/${name}: equal at n = ${sizes.join(", ")}, two counts each`, () => {
      const a = alg(collective, name);
      for (const n of sizes) {
        for (const count of [n * 1000 + 7, 4096]) {
          const call = makeCall({ collective: a.collective, size: n, count }, a);
          expect(someMessageWaits(a, call, alpha, beta), `${name} n=${n}: a message waits`).toBe(false);
          const net = networkTimeExact(a, call, onTopology("full", n, { link, latency: alpha }));
          const ab = modelTime(a, call, { alpha, beta, contention: "shared" });
          expect(net.time, `${name} n=${n} count=${count}`).toBeCloseTo(ab.time, 9);
          expect(net.engine).toBe("exact");
        }
      }
    });
  }

  it("a tree root sending to two children at once: FIFO there, fair sharing here, by hand", () => {
    // Rank 0 sends B bytes to ranks 1 and 2 together; rank 1 forwards them to rank 3.
    const tree: Algorithm = {
      ...alg("allreduce", "ring"),
      name: "two_children",
      *schedule(c, mem) {
        const buf = mem.output;
        if (c.rank === 0) yield step("to both children", [send(1, buf), send(2, buf)]);
        if (c.rank === 1) {
          yield step("from the root", [recv(0, buf)]);
          yield step("to the grandchild", [send(3, buf)]);
        }
        if (c.rank === 2) yield step("from the root", [recv(0, buf)]);
        if (c.rank === 3) yield step("from rank 1", [recv(1, buf)]);
      },
    };
    const count = 250_000;
    const B = count * F32; // 1 MB: beta·B = 40 µs
    const call = makeCall({ collective: "allreduce", size: 4, count }, tree);
    expect(someMessageWaits(tree, call, alpha, beta)).toBe(true);
    // FIFO: rank 1 has the data at alpha + beta·B, rank 2 at alpha + 2·beta·B (it waited), rank 3
    // at 2·alpha + 2·beta·B. Fair sharing: both children at alpha + 2·beta·B (each at half rate),
    // rank 3 at 2·alpha + 3·beta·B.
    expect(modelTime(tree, call, { alpha, beta }).time).toBeCloseTo(2 * alpha + 2 * beta * B, 9);
    expect(networkTimeExact(tree, call, onTopology("full", 4, { link, latency: alpha })).time).toBeCloseTo(
      2 * alpha + 3 * beta * B,
      9,
    );
  });
});

/** Latency of a message crossing `d` router-to-router links on a ring or torus: injection (its latency, one hop), d links and hops, ejection (no latency, one hop). */
const directLatency = (d: number, latency = 0.1, hop = 0.1) => latency + d * latency + (d + 2) * hop;

describe("5b: closed forms on a ring", () => {
  it("ring all-reduce on ring:N is 2(N-1)·(latency + (S/N)/link)", () => {
    const a = alg("allreduce", "ring");
    const link = 50e3;
    for (const N of [4, 7, 16]) {
      const S = N * 2 ** 16 * F32;
      const r = networkTimeExact(a, callFor(a, N, S), onTopology(`ring:${N}`, N));
      // Every message goes one hop + (r -> r+1): 0.1 inject + 0.1 link + 3 hops of 0.1 = 0.5 µs.
      expect(directLatency(1)).toBeCloseTo(0.5, 12);
      expect(r.time).toBeCloseTo(2 * (N - 1) * (directLatency(1) + S / N / link), 6);
    }
  });

  /**
   * Recursive doubling on ring:N, N a power of two: at step k rank r exchanges the whole vector
   * with r xor 2^k, 2^k hops away. Ranks with bit k clear go + (r -> r + 2^k), the others -.
   * The + link j -> j+1 carries the flows of the ranks r <= j < r + 2^k with bit k clear: with
   * i = j mod 2^(k+1), i + 1 of them if i < 2^k, else 2^(k+1) - i - 1; the busiest 2^k. At the
   * last step (2^k = N/2) both ways are equally short: the tie goes +, so all N flows go + and
   * every + link carries N/2 = 2^k of them. So each step's flows are all held to link/2^k by the
   * busiest link they cross, and step k takes latency(2^k) + 2^k·S/link.
   */
  const rdLinkFlows = (N: number, k: number, j: number) => {
    if (2 ** k === N / 2) return N / 2;
    const i = j % 2 ** (k + 1);
    return i < 2 ** k ? i + 1 : 2 ** (k + 1) - i - 1;
  };

  it("recursive doubling on ring:N pays 2^k·S/link at step k: congestion of the long steps", () => {
    const a = alg("allreduce", "recursive_doubling");
    const link = 50e3;
    for (const N of [8, 16]) {
      const S = 4 * MiB;
      const { topology, placement } = onTopology(`ring:${N}`, N);
      const r = networkTimeExact(a, callFor(a, N, S), { topology, placement });
      let hand = 0;
      let ideal = 0;
      for (let k = 0; 2 ** k < N; k++) {
        hand += directLatency(2 ** k) + (2 ** k * S) / link;
        ideal += directLatency(2 ** k) + S / link;
      }
      expect(r.time).toBeCloseTo(hand, 6);
      // Without sharing it would take log2 N · S/link: the long steps cost (N - 1)/log2 N times that.
      expect(r.time / ideal).toBeGreaterThan(((N - 1) / Math.log2(N)) * 0.95);
      // Bytes per + link, by hand: every step's flows on link j -> j+1, S each.
      for (let j = 0; j < N; j++) {
        let flows = 0;
        for (let k = 0; 2 ** k < N; k++) flows += rdLinkFlows(N, k, j);
        const plus = linkBetween(topology, `r${j}`, `r${(j + 1) % N}`);
        expect(r.linkBytes[plus], `link r${j} -> r${(j + 1) % N}`).toBeCloseTo(flows * S, 0);
      }
    }
  });

  it("--routing minimal splits the tied last step both ways: it takes half as long", () => {
    const a = alg("allreduce", "recursive_doubling");
    const N = 8;
    const S = 4 * MiB;
    const dor = networkTimeExact(a, callFor(a, N, S), onTopology(`ring:${N}`, N)).time;
    const minimal = networkTimeExact(a, callFor(a, N, S), onTopology(`ring:${N}`, N, { routing: "minimal" })).time;
    // Last step: each half message (S/2) shares every link of both ways with N/2 others.
    expect(dor - minimal).toBeCloseTo(((N / 2) * S) / 50e3 - ((N / 2) * (S / 2)) / 50e3, 6);
  });
});

/** The link from the node named `a` to the node named `b`. */
function linkBetween(t: Topology, a: string, b: string): number {
  for (let l = 0; l < t.links.count; l++) {
    if (t.nodeName(t.links.from[l] as number) === a && t.nodeName(t.links.to[l] as number) === b) return l;
  }
  throw new Error(`no link ${a} -> ${b} in ${t.name}`);
}
