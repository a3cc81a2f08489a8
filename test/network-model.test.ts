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
import { hierarchicalAllreduce, squarestGroup } from "../algorithms/allreduce/hierarchical.js";
import { dtypeInfo } from "../src/core/dtype.js";
import { knownEnds, walkDataflow } from "../src/model/network/dataflow.js";
import { flattenPlans } from "../src/model/network/flat-plans.js";
import { FlowNet } from "../src/model/network/flows.js";
import {
  AUTO_EXACT_HASHED_MAX_OPERATIONS,
  AUTO_EXACT_MAX_OPERATIONS,
  autoEngine,
  bytesByClass,
  type NetworkResult,
  networkTime,
  networkTimeExact,
  networkTimePhases,
  parseTopology,
  placeRanks,
  type Symmetry,
  symmetryHolds,
  type Topology,
} from "../src/model/network/index.js";
import { type Algorithm, recv, send, step } from "../src/schedule/dsl.js";
import { interpret } from "../src/schedule/interpret.js";
import { modelTime } from "../src/schedule/model.js";
import { compile, type Plan } from "../src/schedule/plan.js";
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

// ---------------------------------------------------------------------------------------------
// 5c: congestion on tori (De Sensi et al., NSDI'24). docs/network-validation.md has the table.

/**
 * The busiest link of one step, by hand: every message (src -> dst, `bytes`) split evenly over
 * the topology's paths (its routing rule), bytes summed per link; the step carries
 * max(link bytes / bandwidth). Under max-min sharing a step of equal flows ends then: the busiest
 * link's flows all get its fair share from the start and finish together.
 */
function busiestLinkTime(t: Topology, pairs: readonly (readonly [number, number])[], bytes: number): number {
  const load = new Float64Array(t.links.count);
  for (const [a, b] of pairs) {
    const ps = t.paths(a, b);
    for (const p of ps) for (const l of p) load[l] = (load[l] as number) + bytes / ps.length;
  }
  let worst = 0;
  for (let l = 0; l < load.length; l++) worst = Math.max(worst, (load[l] as number) / (t.links.bandwidth[l] as number));
  return worst;
}

/** The largest latency of a step's messages (route latencies plus a hop latency per link). */
function stepLatency(t: Topology, pairs: readonly (readonly [number, number])[]): number {
  let worst = 0;
  for (const [a, b] of pairs) {
    for (const p of t.paths(a, b)) {
      let s = t.hopLatency * p.length;
      for (const l of p) s += t.links.latency[l] as number;
      worst = Math.max(worst, s);
    }
  }
  return worst;
}

/** Swing's peer (De Sensi et al., Section 3): rho(s) = sum_{i<=s} (-2)^i; even ranks go +rho, odd -rho. */
const rho = (s: number) => (1 - (-2) ** (s + 1)) / 3;
const swingPeer = (r: number, s: number, n: number) => (((r % 2 === 0 ? r + rho(s) : r - rho(s)) % n) + n) % n;

/**
 * Each algorithm's steps as (pairs, bytes), the whole vector S in bytes, for n a power of two:
 * - recursive doubling: step k, r <-> r xor 2^k, S each;
 * - Rabenseifner (cclab's): reduce-scatter from the farthest peer, step i: r <-> r xor n/2^(i+1),
 *   S/2^(i+1); all-gather the same steps backwards;
 * - swing_bandwidth: step s, r <-> swingPeer(r, s), S/2^(s+1); all-gather backwards.
 */
function stepsOf(name: string, n: number, S: number): { pairs: [number, number][]; bytes: number }[] {
  const L = Math.log2(n);
  const all = (peer: (r: number) => number) => Array.from({ length: n }, (_, r) => [r, peer(r)] as [number, number]);
  const out: { pairs: [number, number][]; bytes: number }[] = [];
  if (name === "recursive_doubling") {
    for (let k = 0; k < L; k++) out.push({ pairs: all((r) => r ^ (2 ** k)), bytes: S });
    return out;
  }
  const half: { pairs: [number, number][]; bytes: number }[] = [];
  for (let i = 0; i < L; i++) {
    const peer = name === "rabenseifner" ? (r: number) => r ^ (n / 2 ** (i + 1)) : (r: number) => swingPeer(r, i, n);
    half.push({ pairs: all(peer), bytes: S / 2 ** (i + 1) });
  }
  return [...half, ...half.slice().reverse()];
}

/** The hand time of an algorithm on a topology: per step its largest latency plus its busiest link's bytes. */
function handTime(t: Topology, name: string, n: number, S: number): { time: number; latency: number } {
  let time = 0;
  let latency = 0;
  for (const st of stepsOf(name, n, S)) {
    const lat = stepLatency(t, st.pairs);
    latency += lat;
    time += lat + busiestLinkTime(t, st.pairs, st.bytes);
  }
  return { time, latency };
}

/**
 * The closed form for Rabenseifner and recursive doubling on a torus k^D (k a power of two) under
 * block placement: rank bit b moves dimension floor(b / log2 k) by 2^(b mod log2 k) hops, and on a
 * ring of k a step at distance d < k/2 puts d flows on its busiest link (5b); at d = k/2 dimension
 * order sends every flow + (k/2 on each link) while minimal routing splits each both ways (k/4 of
 * a flow's bytes' worth). So the bandwidth term of a step at bit b with B bytes is
 * share(b)·B/link.
 */
function torusShare(k: number, b: number, routing: "dor" | "minimal"): number {
  const d = 2 ** (b % Math.log2(k));
  if (d < k / 2) return d;
  return routing === "dor" ? k / 2 : k / 4;
}

function closedFormBandwidth(name: string, k: number, D: number, S: number, link: number, routing: "dor" | "minimal") {
  const n = k ** D;
  const L = Math.log2(n);
  let t = 0;
  for (let i = 0; i < L; i++) {
    if (name === "recursive_doubling") t += (torusShare(k, i, routing) * S) / link;
    else t += (2 * torusShare(k, L - 1 - i, routing) * (S / 2 ** (i + 1))) / link;
  }
  return t;
}

/**
 * Table 2 of De Sensi et al. (NSDI'24; arXiv 2401.09356v2, Section 2.3 and 4.1), bandwidth side,
 * on a torus k^D. The paper counts, per step, the bytes sent times the distance to the peer (its
 * footnote 1 neglects the two minimal paths of the half-way step), in units of the optimum:
 * - recursive doubling (L): every step sends S, Ψ·Ξ summing to D·Σ_{i<log2 k} 2^i = D(k-1) S/link
 *   (Ξ "≤ 2D·p^(1/D)" in the table is the bound of that sum);
 * - recursive doubling (B), Sack and Gropp's torus version (dimensions in turn, nearest peer first,
 *   one port): Ξ = (2^D - 1)/(2^D - 2) as k grows;
 * - Swing (B), 2D collectives at once (one per port, each on S/(2D), dimensions in turn):
 *   Ξ = Σ_s δ(σ(s))/2^(s+1), given as 1.19, 1.03, 1.008 for D = 2, 3, 4 as k grows.
 * paperSum gives these sums at a given k (for recursive doubling in S/link, for the other two as Ξ).
 */
const TABLE2_SWING_B: Record<number, number> = { 2: 1.19, 3: 1.03, 4: 1.008 };
const table2RabenseifnerLimit = (D: number) => (2 ** D - 1) / (2 ** D - 2);
function paperSum(name: string, k: number, D: number): number {
  if (name === "recursive_doubling") return D * (k - 1);
  let xi = 0;
  for (let j = 0; j < Math.log2(k); j++) {
    for (let d = 0; d < D; d++) xi += (name === "rabenseifner" ? 2 ** j : Math.abs(rho(j))) / 2 ** (j * D + d + 1);
  }
  return xi;
}

describe("5c: congestion deficiency on tori", () => {
  const S = 64 * MiB;
  const link = 50e3;
  const cases: { k: number; D: number; routings: ("dor" | "minimal")[]; swingMinimal: boolean }[] = [
    { k: 8, D: 2, routings: ["dor", "minimal"], swingMinimal: true },
    { k: 8, D: 3, routings: ["dor", "minimal"], swingMinimal: true },
    { k: 64, D: 2, routings: ["dor", "minimal"], swingMinimal: false },
    { k: 8, D: 4, routings: ["dor", "minimal"], swingMinimal: false },
  ];
  it("Table 2's bandwidth entries are the paper's sums as the torus grows", () => {
    for (const D of [2, 3, 4]) {
      expect(paperSum("rabenseifner", 2 ** 20, D)).toBeCloseTo(table2RabenseifnerLimit(D), 5);
      // The table gives two or three digits (1.19 for the sum's limit 1.2).
      const swing = paperSum("swing_bandwidth", 2 ** 20, D);
      expect(Math.abs(swing / (TABLE2_SWING_B[D] as number) - 1), `D = ${D}: ${swing}`).toBeLessThan(0.01);
    }
    // Recursive doubling's sum on 8x8: distances 1, 2, 4 in each of the two dimensions.
    expect(paperSum("recursive_doubling", 8, 2)).toBe(2 * (1 + 2 + 4));
  });

  it("ring:64, the 1-D torus: Swing's step s puts (delta(s)+1)/2 flows on its busiest link", () => {
    // delta(s) = |rho(s)| is odd; even ranks go +rho(s), odd ones -rho(s) (or the reverse), so the
    // + link j -> j+1 carries the even ranks among the delta(s) ranks j-delta+1..j: (delta+1)/2 of
    // them when j is even. Both phases: 2·sum_s (delta(s)+1)/2 · S/2^(s+1) / link.
    const N = 64;
    const { topology, placement } = onTopology(`ring:${N}`, N);
    const a = alg("allreduce", "swing_bandwidth");
    let bw = 0;
    for (let s = 0; 2 ** s < N; s++) bw += (2 * ((Math.abs(rho(s)) + 1) / 2) * (S / 2 ** (s + 1))) / link;
    expect([0, 1, 2, 3, 4, 5].map((s) => (Math.abs(rho(s)) + 1) / 2)).toEqual([1, 1, 2, 3, 6, 11]);
    const r = networkTimeExact(a, callFor(a, N, S), { topology, placement });
    const hand = handTime(topology, "swing_bandwidth", N, S);
    expect(hand.time - hand.latency).toBeCloseTo(bw, 6);
    expect(Math.abs((r.time - hand.latency) / bw - 1)).toBeLessThan(0.05);
    record(
      `ring:${N}`,
      "shortest",
      "swing_bandwidth",
      (r.time - hand.latency) / (((2 * (N - 1)) / N) * (S / link)),
      bw / (((2 * (N - 1)) / N) * (S / link)),
    );
  });

  for (const { k, D, routings, swingMinimal } of cases) {
    const spec = `torus:${Array(D).fill(k).join("x")}`;
    const n = k ** D;
    for (const routing of routings) {
      it(`${spec} --routing ${routing}: Rabenseifner, recursive doubling and Swing as the hand count`, () => {
        const { topology, placement } = onTopology(spec, n, { routing });
        const ideal = ((2 * (n - 1)) / n) * (S / link);
        const names = ["rabenseifner", "recursive_doubling"];
        if (routing === "dor" || swingMinimal) names.push("swing_bandwidth");
        for (const name of names) {
          const a = alg("allreduce", name);
          const engine = n <= 64 ? "exact" : "phases";
          const r = networkTime(a, callFor(a, n, S), { topology, placement, engine });
          const hand = handTime(topology, name, n, S);
          const modelRatio = (r.time - hand.latency) / ideal;
          const handRatio = (hand.time - hand.latency) / ideal;
          const paper =
            name === "recursive_doubling" ? (paperSum(name, k, D) * S) / link / ideal : paperSum(name, k, D);
          record(spec, routing, name, modelRatio, handRatio, paper);
          expect(Math.abs(modelRatio / handRatio - 1), `${name}: model ${modelRatio} hand ${handRatio}`).toBeLessThan(
            0.05,
          );
          if (name !== "swing_bandwidth") {
            // The busiest-link count agrees with the closed form per dimension.
            expect((hand.time - hand.latency) / closedFormBandwidth(name, k, D, S, link, routing)).toBeCloseTo(1, 9);
          }
          if (name === "recursive_doubling" && routing === "dor") {
            // cclab's recursive doubling is the paper's schedule, and dimension order its count
            // (every flow of the half-way step one way): the model gives Table 2's sum.
            expect((r.time - hand.latency) / ((paperSum(name, k, D) * S) / link)).toBeCloseTo(1, 2);
          } else if (name !== "recursive_doubling") {
            // The paper's Rabenseifner goes nearest first, dimensions in turn, and its Swing runs
            // 2D collectives at once, one per port: schedules that put fewer bytes on far links
            // than cclab's (far first; one port, peers on the flattened ranks).
            expect(paperSum(name, k, D)).toBeLessThan(handRatio);
          }
        }
      });
    }
  }
});

const table: string[] = [];
function record(spec: string, routing: string, name: string, model: number, hand: number, paper?: number): void {
  table.push(
    `| ${spec} | ${routing} | ${name} | ${paper?.toFixed(3) ?? ""} | ${hand.toFixed(3)} | ${model.toFixed(3)} |`,
  );
  if (process.env.NETWORK_VALIDATION_TABLE) console.log(table.at(-1));
}

// ---------------------------------------------------------------------------------------------
// 5d: hierarchical all-reduce on rails.

describe("5d: hierarchical all-reduce beats the flat ring where the NICs are the bottleneck", () => {
  /**
   * rail:16x8, 128 ranks in block placement, NVLink 450 GB/s, NIC 400 Gb/s = 50 GB/s, `spray`
   * routing (packets over every spine: no ECMP collision, so the NICs are the only bottleneck).
   * Flat ring: every one of its 2(n-1) steps has 16 messages of S/n crossing nodes (GPU 7 of node
   * i to GPU 0 of node i+1), each through one NIC alone: the step takes (S/n)/nic, so the ring
   * takes 2(n-1)/n·S/nic. Hierarchical with g = 8: ring reduce-scatter inside the node (7 steps of
   * S/8 over NVLink), ring all-reduce of S/8 across the 16 nodes on each of the 8 rails at once
   * (30 steps of S/128, each GPU's NIC carrying one flow, rail switch only, no spine), ring
   * all-gather inside: 2·7/8·S/nvlink + 2·15/16·(S/8)/nic.
   */
  const nodes = 16;
  const g = 8;
  const n = nodes * g;
  const nvlink = 450e3;
  const nic = 50e3;
  const S = 256 * MiB;

  it("at n = 128 the default hierarchical groups the node's 8 GPUs", () => {
    // The largest divisor of 128 not above sqrt(128) = 11.3 is 8: 2(g-1) + 2(n/g-1) = 44 steps.
    expect(squarestGroup(n)).toBe(g);
    expect(alg("allreduce", "hierarchical").cost.steps.value(n, n, 1)).toBe(2 * (g - 1) + 2 * (n / g - 1));
  });

  const hRing = ((2 * (n - 1)) / n) * (S / nic);
  const hHier = ((2 * (g - 1)) / g) * (S / nvlink) + ((2 * (nodes - 1)) / nodes) * (S / g / nic);
  const system = () => onTopology(`rail:${nodes}x${g}`, n, { nvlink, nic, routing: "spray" });
  const ring = alg("allreduce", "ring");
  const hier = hierarchicalAllreduce("hierarchical_node", () => g, "g = 8, the node's GPUs");
  const within = (model: number, hand: number, tol: number) => {
    expect(model / hand - 1, `model ${model} µs, hand ${hand} µs`).toBeGreaterThanOrEqual(0);
    expect(model / hand - 1, `model ${model} µs, hand ${hand} µs`).toBeLessThan(tol);
  };

  it("hierarchical (g = 8) takes 2(g-1)/g·S/nvlink + 2(h-1)/h·(S/g)/nic, within 3%", () => {
    within(networkTimeExact(hier, callFor(hier, n, S), system()).time, hHier, 0.03);
  });

  it("the flat ring in dataflow order takes 2(n-1)/n·S/nic too, and hierarchical wins by their ratio, within 3%", () => {
    // A rank behind NVLink receives faster than its NIC sends: its next chunk to the next node
    // is posted while the last is still on the NIC. Down one connection (NCCL's, MPI's per-peer
    // order) it waits for the one ahead, so the NIC stays busy and the ring holds its bound.
    const tRing = networkTimeExact(ring, callFor(ring, n, S), system()).time;
    const tHier = networkTimeExact(hier, callFor(hier, n, S), system()).time;
    if (process.env.NETWORK_VALIDATION_TABLE) console.log("5d", { tRing, tHier, hRing, hHier, win: tRing / tHier });
    expect(hRing / hHier).toBeGreaterThan(4.5);
    within(tRing, hRing, 0.03);
    expect(Math.abs(tRing / tHier / (hRing / hHier) - 1)).toBeLessThan(0.03);
  });
});

// ---------------------------------------------------------------------------------------------
// Item 4's rule for shortcuts: the phases engine (approximate) within 5% of the exact one at
// n <= 1,024, and the symmetry it walks under holding on every rank.

const SCALE_TARGETS: [string, string][] = [
  ["allreduce", "ring"],
  ["allreduce", "segmented_ring"],
  ["allreduce", "double_binary_tree"],
  ["allreduce", "recursive_doubling"],
  ["allreduce", "rabenseifner"],
  ["allreduce", "swing_latency"],
  ["allreduce", "swing_bandwidth"],
  ["allreduce", "hierarchical"],
  ["allgather", "ring"],
  ["allgather", "bruck"],
  ["allgather", "pat"],
];

/** The symmetry a phases result says it walked under ('rotation' or 'exclusive-or', period p), if any. */
function symmetryOf(r: NetworkResult): Symmetry | undefined {
  const m = /\((rotation|exclusive-or), period (\d+)\)/.exec(r.note ?? "");
  if (!m) return undefined;
  return { kind: m[1] === "rotation" ? "rotate" : "xor", p: Number(m[2]) };
}

/**
 * Where the shortcut misses the 5% the issue asks for, measured (2026-11-26) and held so it cannot
 * get worse; `auto` gives every one of these calls the exact engine (tested below). docs/network-validation.md ("The shortcut's error and its causes") has the worked
 * cases. In short: on the fat-tree ECMP puts some pairs of a round on a shared uplink, so the
 * round's flows end at different times and the ranks fall out of step; each round is solved with
 * its messages started together, while in the exact run they start spread out (an early flow has
 * the link alone for a while: phases too slow, recursive doubling, Swing latency, Bruck) and
 * overlap the next round's (phases too fast, Swing bandwidth). PAT on the torus is held up by
 * the busiest link's bytes (the floor) where the exact run keeps that link 90% busy.
 */
const KNOWN_MISSES: Record<string, number> = {
  "torus:8x8|allgather/pat": 0.1,
  "fattree|allreduce/recursive_doubling": 0.1,
  "fattree|allreduce/swing_latency": 0.11,
  "fattree|allreduce/swing_bandwidth": 0.12,
  "fattree|allgather/bruck": 0.09,
};

/** At n = 1,024 on the fat-tree the same causes grow (more leaves, more collisions a step), measured 2026-11-26. */
const KNOWN_MISSES_1024: Record<string, number> = {
  "fattree|allreduce/recursive_doubling": 0.11,
  "fattree|allreduce/swing_latency": 0.23,
  "fattree|allgather/bruck": 0.06,
};

describe("auto: the exact engine where it is cheap, the shortcut elsewhere", () => {
  const engineOf = (name: string, n: number) => {
    const a = alg("allreduce", name);
    return autoEngine(a, callFor(a, n, 64 * MiB));
  };
  it("exact up to 64 ranks whatever the call; up to 1,024 for calls of at most 100,000 operations", () => {
    expect(engineOf("ring", 64)).toBe("exact");
    // Recursive doubling at 1,024: 10 steps of a send, a receive and a reduction per rank.
    const rd = alg("allreduce", "recursive_doubling");
    const ops = compile(rd, rankCall(callFor(rd, 1024, 64 * MiB), 0)).ops.length * 1024;
    expect(ops).toBeLessThanOrEqual(AUTO_EXACT_MAX_OPERATIONS);
    expect(engineOf("recursive_doubling", 1024)).toBe("exact");
    // The ring's 2(n-1) steps at 1,024 ranks are millions of operations: the shortcut.
    expect(engineOf("ring", 1024)).toBe("phases");
    expect(engineOf("recursive_doubling", 2048)).toBe("phases");
  });
  it("on a hashed (ECMP) network, exact at any n up to 1.2 million operations; never on a torus above 1,024", () => {
    const fat = parseTopology("fattree", 16384, {});
    expect(fat.hashed).toBe(true);
    const torus = parseTopology("torus:128x128", 16384, {});
    expect(torus.hashed).not.toBe(true);
    expect(parseTopology("fattree", 16384, { routing: "spray" }).hashed).toBe(false);
    const at = (collective: string, name: string, t: Topology) => {
      const a = alg(collective, name);
      return autoEngine(a, callFor(a, 16384, 64 * MiB), t);
    };
    // Recursive doubling at 16,384: 14 steps of three operations per rank, 704,512 in all.
    expect(at("allreduce", "recursive_doubling", fat)).toBe("exact");
    expect(at("allgather", "bruck", fat)).toBe("exact");
    expect(at("allreduce", "recursive_doubling", torus)).toBe("phases");
    // The ring's 2(n-1) steps: 1.3·10^9 operations, the shortcut whatever the network.
    expect(at("allreduce", "ring", fat)).toBe("phases");
    const rd = alg("allreduce", "recursive_doubling");
    const ops = compile(rd, rankCall(callFor(rd, 16384, 64 * MiB), 0)).ops.length * 16384;
    expect(ops).toBeLessThanOrEqual(AUTO_EXACT_HASHED_MAX_OPERATIONS);
    // Not a power of two: rank 0 is folded out (two operations), rank 1 takes its partner's part
    // (16 steps): 40,000 ranks are about 1.5 million operations, past the bound.
    const big = callFor(rd, 40000, 64 * MiB);
    expect(compile(rd, rankCall(big, 0)).ops.length * 40000).toBeLessThan(AUTO_EXACT_HASHED_MAX_OPERATIONS);
    expect(compile(rd, rankCall(big, 1)).ops.length * 40000).toBeGreaterThan(AUTO_EXACT_HASHED_MAX_OPERATIONS);
    expect(autoEngine(rd, big, parseTopology("fattree", 40000, {}))).toBe("phases");
  });
  it("every call the shortcut is known to miss by more than 5% is one auto gives the exact engine", () => {
    const misses = [
      ...Object.keys(KNOWN_MISSES).map((k) => [k, 64] as const),
      ...Object.keys(KNOWN_MISSES_1024).map((k) => [k, 1024] as const),
      // The same algorithms on the fat-tree at 16,384 ranks (the shortcut there: +9 to +13%, -16%).
      ...["recursive_doubling", "swing_latency", "swing_bandwidth"].map(
        (a) => [`fattree|allreduce/${a}`, 16384] as const,
      ),
      ["fattree|allgather/bruck", 16384] as const,
    ];
    for (const [key, n] of misses) {
      const [spec, name] = key.split("|") as [string, string];
      const [collective, algorithm] = name.split("/") as [string, string];
      const a = alg(collective, algorithm);
      expect(autoEngine(a, callFor(a, n, 64 * MiB), parseTopology(spec, n, {})), `${key} at n = ${n}`).toBe("exact");
    }
  });
  it("the exact engine tells its progress in messages started, ending at every message", () => {
    const a = alg("allreduce", "recursive_doubling");
    const told: [number, number, string][] = [];
    const r = networkTimeExact(a, callFor(a, 128, MiB), {
      ...onTopology("fattree", 128),
      onProgress: (done, total, what) => told.push([done, total, what]),
    });
    // 7 steps of one message per rank: 896 messages, told from 0 up to all of them, never back.
    expect(told[0]).toEqual([0, 896, "messages"]);
    expect(told.at(-1)).toEqual([896, 896, "messages"]);
    expect(r.messages).toBe(896);
    for (let i = 1; i < told.length; i++)
      expect((told[i] as number[])[0]).toBeGreaterThan((told[i - 1] as number[])[0] as number);
    expect(told.length).toBeGreaterThan(100);
  });
  it("networkTime's auto result is the engine autoEngine names", () => {
    const a = alg("allreduce", "recursive_doubling");
    const call = callFor(a, 128, MiB);
    const r = networkTime(a, call, onTopology("fattree", 128));
    expect(r.engine).toBe("exact");
    expect(r.approximate).toBe(false);
  });
});

describe("the phases shortcut against the exact engine (within 5%), its symmetry on every rank", () => {
  const cases: { spec: string; n: number; bytes: number; dbtBytes?: number }[] = [
    { spec: "torus:8x8", n: 64, bytes: 64 * MiB, dbtBytes: 8 * MiB },
    { spec: "fattree", n: 64, bytes: 64 * MiB, dbtBytes: 8 * MiB },
    { spec: "torus:4x4", n: 16, bytes: 64 * 1024 },
    { spec: "fattree", n: 16, bytes: 64 * 1024 },
  ];
  for (const { spec, n, bytes, dbtBytes } of cases) {
    for (const [collective, name] of SCALE_TARGETS) {
      const S = name === "double_binary_tree" && dbtBytes ? dbtBytes : bytes;
      it(`${spec}, n = ${n}, ${S / 1024} KiB: ${collective}/${name}`, () => {
        const a = alg(collective, name);
        const call = callFor(a, n, S);
        const params = onTopology(spec, n);
        const exact = networkTimeExact(a, call, params);
        const phases = networkTimePhases(a, call, params);
        // Only the representatives walked, each operation timed for all its copies at once (as
        // auto runs the rings and PAT at 16,384 ranks): the every-rank walk's times too.
        const perCopy = networkTimePhases(a, call, params, { form: "per-copy" });
        expect(perCopy.time).toBe(phases.time);
        if (perCopy.symmetry) expect(perCopy.note).toMatch(/each of their operations timed for its \d+ copies at once/);
        // Under a symmetry with every rank walked (as auto runs calls whose reductions cost gamma
        // at 16,384 ranks): ranks p.. take their representative's plan moved, and time as if compiled.
        const moved = networkTimePhases(a, call, params, { form: "moved" });
        expect(moved.time).toBe(phases.time);
        expect(moved.messages).toBe(phases.messages);
        if (perCopy.symmetry)
          expect(moved.note).toMatch(/every rank walked, ranks \d+\.\. with the plans of ranks 0\.\.\d+ moved/);
        expect(phases.approximate).toBe(true);
        expect(phases.note).toMatch(/approximate/);
        const err = phases.time / exact.time - 1;
        if (process.env.NETWORK_VALIDATION_TABLE) {
          console.log(
            `| ${spec} | ${n} | ${S / 1024} KiB | ${collective}/${name} | ${exact.time.toFixed(2)} | ${phases.time.toFixed(2)} | ${(err * 100).toFixed(2)}% |`,
          );
        }
        const bound = (n === 64 ? KNOWN_MISSES[`${spec}|${collective}/${name}`] : undefined) ?? 0.05;
        expect(Math.abs(err), `phases ${phases.time} µs, exact ${exact.time} µs`).toBeLessThanOrEqual(bound);
        for (const r of [phases, moved, perCopy]) {
          const sym = symmetryOf(r);
          expect(r.engine, "the engine reported is one --engine takes").toBe("phases");
          expect(sym, "a result walked under a symmetry names it in its note and its fields").toEqual(r.symmetry);
          if (sym) {
            const plans = Array.from({ length: n }, (_, k) => compile(a, rankCall(call, k)));
            expect(symmetryHolds(plans, sym), `${sym.kind} period ${sym.p}`).toBe(true);
          }
        }
      });
    }
  }

  // At n = 1,024 the exact engine runs the log-step algorithms in about a second, so their
  // shortcut (every rank walked, as auto runs them there) is measured at the largest n.
  for (const spec of ["torus:32x32", "fattree"]) {
    for (const [collective, name] of [
      ["allreduce", "recursive_doubling"],
      ["allreduce", "rabenseifner"],
      ["allreduce", "swing_latency"],
      ["allgather", "bruck"],
    ] as const) {
      it(`${spec}, n = 1024, 64 MiB: ${collective}/${name}, every rank walked`, () => {
        const a = alg(collective, name);
        const call = callFor(a, 1024, 64 * MiB);
        const params = onTopology(spec, 1024);
        const exact = networkTimeExact(a, call, params);
        const phases = networkTimePhases(a, call, params, { form: "every-rank" });
        expect(phases.engine).toBe("phases");
        const err = phases.time / exact.time - 1;
        if (process.env.NETWORK_VALIDATION_TABLE) {
          console.log(
            `| ${spec} | 1024 | 65536 KiB | ${collective}/${name} | ${exact.time.toFixed(2)} | ${phases.time.toFixed(2)} | ${(err * 100).toFixed(2)}% |`,
          );
        }
        const bound = KNOWN_MISSES_1024[`${spec}|${collective}/${name}`] ?? 0.05;
        expect(Math.abs(err), `phases ${phases.time} µs, exact ${exact.time} µs`).toBeLessThanOrEqual(bound);
      });
    }
  }

  it("torus:16x16, n = 256, 64 MiB: ring all-reduce, walked under its symmetry", () => {
    const a = alg("allreduce", "ring");
    const call = callFor(a, 256, 64 * MiB);
    const params = onTopology("torus:16x16", 256);
    const exact = networkTimeExact(a, call, params).time;
    const phases = networkTimePhases(a, call, params, { form: "per-copy" });
    expect(phases.note).toMatch(/ranks 0\.\.0 walked under.*timed for its 256 copies at once/);
    expect(Math.abs(phases.time / exact - 1)).toBeLessThanOrEqual(0.05);
    const sym = symmetryOf(phases);
    expect(sym).toBeDefined();
    const plans = Array.from({ length: 256 }, (_, r) => compile(a, rankCall(call, r)));
    expect(symmetryHolds(plans, sym as Symmetry)).toBe(true);
  });
});

describe("the exact engine posts no transfer before its dependencies are done", () => {
  it("hierarchical on a fat-tree, n = 64, 1 MiB: a transfer queued behind another for the same peer", () => {
    // The walker's ready() (dataflow.ts; interpret.ts's then): a queue's members were posted while readyAt >= 0, but
    // readyAt is set when the first of an operation's dependencies finishes, not the last, so a
    // send whose data is not yet reduced is posted (in the past: FlowNet.add's invariant fails).
    const a = alg("allreduce", "hierarchical");
    const r = networkTimeExact(a, callFor(a, 64, MiB), onTopology("fattree", 64));
    expect(r.time).toBeGreaterThan(0);
  });
});

describe("a long pipeline folded", () => {
  it("the double binary tree walked at a small segment count and extended gives the walk of all its segments, within 1%", () => {
    const a = alg("allreduce", "double_binary_tree");
    const call = callFor(a, 64, 16 * MiB);
    const params = onTopology("torus:8x8", 64);
    const whole = networkTimePhases(a, call, params, { extrapolate: false });
    const folded = networkTimePhases(a, call, params, { extrapolate: true });
    expect(folded.note).toMatch(/pipeline folded/);
    expect(whole.note).not.toMatch(/folded/);
    expect(Math.abs(folded.time / whole.time - 1)).toBeLessThanOrEqual(0.01);
    // Each further steady round's messages are counted too.
    expect(folded.messages).toBe(whole.messages);
  });

  // The fold walks 4·log2(n) + 2 segments, so its error depends on n: measured against the
  // exact engine at n = 256 (64 segments, walked at 34 and extended) and n = 1,024 (128
  // segments, walked at 42), where the exact engine takes seconds (at 1,024 ranks and 64 MiB,
  // 2.6M operations, much longer).
  for (const [spec, n, mib, walked] of [
    ["torus:16x16", 256, 8, 34],
    ["fattree", 256, 8, 34],
    ["torus:32x32", 1024, 16, 42],
    ["fattree", 1024, 16, 42],
    // Here the timed walk's pace grows after seven steady rounds (a connection's backlog): read
    // from the first two alone the fold was -4.4%; bounded by the busiest connection, -1.3%.
    ["torus:10x10", 100, 16, 30],
  ] as const) {
    it(`${spec}, n = ${n}, ${mib} MiB: the double binary tree folded within 5% of the exact engine`, () => {
      const a = alg("allreduce", "double_binary_tree");
      const call = callFor(a, n, mib * MiB);
      const params = onTopology(spec, n);
      const exact = networkTimeExact(a, call, params);
      const folded = networkTimePhases(a, call, params, { extrapolate: true });
      expect(folded.note).toMatch(new RegExp(`pipeline folded: walked at ${walked} segments`));
      const err = folded.time / exact.time - 1;
      if (process.env.NETWORK_VALIDATION_TABLE) {
        console.log(
          `| ${spec} | ${n} | ${mib * 1024} KiB | allreduce/double_binary_tree (folded) | ${exact.time.toFixed(2)} | ${folded.time.toFixed(2)} | ${(err * 100).toFixed(2)}% | ${folded.engine} |`,
        );
      }
      expect(Math.abs(err), `folded ${folded.time} µs, exact ${exact.time} µs`).toBeLessThanOrEqual(0.05);
      // The exact engine at 1,024 ranks: about 15 s of CPU alone, 65 s at a load of 25 on 2 cores.
    }, 300_000);
  }
});

describe("the flat dataflow walker is interpret()'s walk", () => {
  // Both engines walk the plans flattened into typed arrays with a walker of their own (one bucket
  // per time in the unit walk, a heap in the timed one): every operation starts when interpret(),
  // which the alpha-beta model and the checker use, starts it, and the transfers and local
  // operations are timed in interpret()'s order (the exact engine's flow network, and a
  // connection's queue, depend on it).
  const cases: [string, string, number, number][] = [
    ["allreduce", "double_binary_tree", 64, 64 * 8192],
    ["allreduce", "double_binary_tree", 37, 5000],
    ["allreduce", "ring", 16, 4096],
    ["allreduce", "rabenseifner", 24, 4096],
    ["allreduce", "hierarchical", 64, 8192],
    ["allreduce", "swing_bandwidth", 16, 4096],
    ["allgather", "pat", 16, 256],
    ["allgather", "bruck", 13, 100],
  ];
  for (const unit of [true, false]) {
    for (const [collective, name, n, count] of cases) {
      it(`${collective}/${name}, n = ${n}: the same start for every operation (${unit ? "whole" : "fractional"} durations)`, () => {
        const a = alg(collective, name);
        const call = makeCall({ collective, size: n, count }, a);
        const plans = Array.from({ length: n }, (_, r) => compile(a, rankCall(call, r)));
        // Durations that differ from transfer to transfer, so that the order of events matters.
        const duration = (r: number, i: number) => {
          const k = (r * 7919 + i * 104729) % 13;
          return unit ? 1 + (k % 3) : 1 + k / 7;
        };
        const want = plans.map((p) => new Float64Array(p.ops.length).fill(-1));
        const wantOrder: string[] = [];
        const out = interpret(plans, {
          transfer: (snd, rcv, start) => {
            want[snd.rank]![snd.index] = start;
            want[rcv.rank]![rcv.index] = start;
            wantOrder.push(`${snd.rank}.${snd.index}>${rcv.rank}.${rcv.index}`);
            return start + duration(snd.rank, snd.index);
          },
          local: (at, start) => {
            want[at.rank]![at.index] = start;
            wantOrder.push(`${at.rank}.${at.index}`);
            return start;
          },
        });
        // The plans flattened as the engine flattens them (every rank walked), and walked.
        const flat = flattenPlans(
          (r) => plans[r] as Plan,
          n,
          { kind: "rotate", p: n },
          1,
          Number.POSITIVE_INFINITY,
          (ops) => {
            throw new Error(`${ops} operations`);
          },
        );
        const rankOf = (g: number) => flat.rank[g] as number;
        const at = (g: number) => `${rankOf(g)}.${g - (flat.base[rankOf(g)] as number)}`;
        const gotOrder: string[] = [];
        const got = walkDataflow(
          flat,
          knownEnds((snd, rcv, start) => {
            gotOrder.push(`${at(snd)}>${at(rcv)}`);
            return start + duration(rankOf(snd), snd - (flat.base[rankOf(snd)] as number));
          }),
          (g, start) => {
            gotOrder.push(at(g));
            return start;
          },
          unit,
        );
        expect(gotOrder).toEqual(wantOrder);
        expect(out.complete && got.complete).toBe(true);
        for (let r = 0; r < n; r++)
          expect(Array.from(got.start.slice(flat.base[r] as number, flat.base[r + 1] as number)), `rank ${r}`).toEqual(
            Array.from(want[r] as Float64Array),
          );
        expect(Array.from(got.finish)).toEqual(out.finish);
      });
    }
  }
});

describe("FlowNet keeps its paths right when it packs the pool", () => {
  it("a long flow on link 0 outlives 50 rounds of two short ones on links 1-3 and 4-6: times and bytes by hand", () => {
    // Every link carries 1 byte/µs. The long flow (1000 bytes) has link 0 to itself: it ends at
    // 1000. Each round's two short flows (10 bytes each, over links 1-3 and 4-6) have their links
    // to themselves: round k ends at 10k. The first of each pair leaves a hole in the middle of
    // the path pool, so the pool is packed many times while the long flow is in flight.
    const net = new FlowNet(new Float64Array(7).fill(1), 16);
    const ends: number[][] = [];
    net.add(1000, [0], 0, -1);
    let longEnd = 0;
    let round = 0;
    const addPair = () => {
      net.add(10, [1, 2, 3], net.now, round);
      net.add(10, [4, 5, 6], net.now, round);
      round++;
    };
    addPair();
    while (net.inFlight > 0) {
      net.take((tag) => {
        if (tag < 0) {
          longEnd = net.now;
          return;
        }
        (ends[tag] ??= []).push(net.now);
        if (ends[tag]?.length === 2 && round < 50) addPair();
      });
    }
    expect(longEnd).toBeCloseTo(1000, 9);
    expect(ends).toHaveLength(50);
    ends.forEach((pair, k) => {
      expect(pair).toHaveLength(2);
      for (const t of pair) expect(t).toBeCloseTo(10 * (k + 1), 9);
    });
    expect([...net.linkBytes]).toEqual([1000, 500, 500, 500, 500, 500, 500]);
  });
});

describe("bytes per link class", () => {
  it("a ring all-reduce over two dragonfly groups: local and global bytes as counted by hand", () => {
    // ranks 0,1 in group 0 and 2,3 in group 1 (one host per router); every ring edge carries
    // 2(n-1) chunks of S/n = 1.5 S; edges 0->1 and 2->3 cross one local link, 1->2 and 3->0 a
    // local and a global one.
    const S = 64 * 1024;
    const a = alg("allreduce", "ring");
    const net = onTopology("dragonfly:groups=2,routers=2,hosts=1", 4);
    const r = networkTimeExact(a, callFor(a, 4, S), net);
    const byKind = Object.fromEntries(bytesByClass(net.topology, r.linkBytes).map((c) => [c.kind, c]));
    expect(byKind.global?.bytes).toBe(3 * S);
    expect(byKind.global?.used).toBe(2);
    expect(byKind.global?.links).toBe(2);
    expect(byKind.local?.bytes).toBe(6 * S);
    expect(byKind.inject?.bytes).toBe(6 * S);
    expect(byKind.global?.share).toBeCloseTo(3 / 21, 12);
  });
});
