/**
 * The Swing paper's evaluation on the network model (docs/network-validation.md, "5e"): with the
 * paper's network (400 Gb/s links, 100 ns per link, 300 ns per hop) and the algorithms given the
 * torus they run on (`cclab model --topology torus:...`), Swing is ahead of recursive doubling at
 * 32 B on every torus the paper shows, and at 8 MiB the bandwidth-optimal Swing is ahead of the
 * ring, Rabenseifner and recursive doubling. Each figure of the doc's table is held here to 2%.
 * And a numeric value of the paper: Table 2's congestion deficiency of bandwidth-optimal Swing,
 * against the model's, within 15% (the doc's "Table 2" rows). And the large sizes on every torus shape
 * (2D, 3D, 4D, square and rectangular) at 2 MiB and 128 MiB, the paper's largest: Swing ahead of the
 * ring, Rabenseifner and recursive doubling, and its bandwidth term against Table 2's sum, or where the
 * shape is rectangular against the hand count that says why it differs (the doc's "large sizes" rows).
 * NETWORK_VALIDATION_TABLE=1 prints the rows.
 */
import { describe, expect, it } from "vitest";
import { shapeOfTopology } from "../src/cli/topology-shape.js";
import { callOf, machineFor, timeOnMachine } from "../src/model/machine.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { withShape } from "../src/schedule/shape.js";

/** The paper's network, stated once: 400 Gb/s = 50e3 bytes/µs, 100 ns per link, 300 ns per hop. */
const PAPER_NET = { link: 50e3, latency: 0.1, hopLatency: 0.3 } as const;

const times = new Map<string, number>();

/** µs, on the model with the algorithm bound to the torus (placement block); each call timed once. */
function modelled(torus: string, bytes: number, name: string): number {
  const key = `${torus} ${bytes} ${name}`;
  const known = times.get(key);
  if (known !== undefined) return known;
  const t = modelledOnce(torus, bytes, name);
  times.set(key, t);
  return t;
}

function modelledOnce(torus: string, bytes: number, name: string): number {
  const n = torus
    .split("x")
    .map(Number)
    .reduce((a, b) => a * b, 1);
  const m = machineFor({ topology: `torus:${torus}`, links: PAPER_NET, engine: "auto" }, n);
  const alg = withShape(findAlgorithm("allreduce", name, { op: "test" }), shapeOfTopology(m.topology, m.placement));
  const { call } = callOf(alg, n, bytes, { dtype: "float32" });
  return timeOnMachine(alg, call, m).time;
}

const show = process.env.NETWORK_VALIDATION_TABLE === "1";

const MiB = 2 ** 20;

/** docs/network-validation.md 5e, 32 B: [torus, swing_latency µs, recursive_doubling µs]. */
const SMALL: readonly [string, number, number][] = [
  ["8x8", 8.2, 9.81],
  ["8x8x8", 12.3, 14.7],
  ["256x4", 75.8, 110.4],
  ["8x8x8x8", 16.4, 19.6],
  ["64x64", 42.01, 58.88],
  ["4x4x4x4", 8.8, 10.41],
];

/** 5e, 8 MiB: [torus, swing_bandwidth, ring, rabenseifner, recursive_doubling] µs. */
const LARGE: readonly [string, number, number, number, number][] = [
  ["8x8", 106.84, 475.3, 1010.5, 2358.61],
  ["8x8x8", 81.97, 1516.69, 1034.07, 3537.92],
];

const near = (got: number, want: number, what: string) =>
  expect(Math.abs(got - want) / want, `${what}: model ${got.toFixed(2)} µs, the doc's ${want} µs`).toBeLessThan(0.02);

describe("Swing against recursive doubling at 32 B on every torus of the paper", () => {
  for (const [torus, swing, rd] of SMALL) {
    it(`torus:${torus}: swing_latency ahead (doc: ${swing} against ${rd} µs)`, () => {
      const s = modelled(torus, 32, "swing_latency");
      const r = modelled(torus, 32, "recursive_doubling");
      if (show) console.log(`| ${torus} | 32 B | ${s.toFixed(2)} | ${r.toFixed(2)} | ${(s / r).toFixed(3)} |`);
      expect(s).toBeLessThan(r);
      near(s, swing, `swing_latency torus:${torus}`);
      near(r, rd, `recursive_doubling torus:${torus}`);
    }, 300_000);
  }
});

describe("the large-size order: Swing, then the ring and Rabenseifner, recursive doubling last", () => {
  for (const [torus, ...doc] of LARGE) {
    it(`torus:${torus} at 8 MiB`, () => {
      const names = ["swing_bandwidth", "ring", "rabenseifner", "recursive_doubling"];
      const t = names.map((a) => modelled(torus, 8 * 2 ** 20, a));
      if (show) console.log(`| ${torus} | 8 MiB | ${t.map((x) => x.toFixed(2)).join(" | ")} |`);
      t.forEach((x, i) => {
        near(x, doc[i] as number, `${names[i]} torus:${torus}`);
      });
      const [swing, ring, rab, rd] = t as [number, number, number, number];
      expect(swing).toBeLessThan(Math.min(ring, rab, rd));
      expect(rd).toBeGreaterThan(Math.max(ring, rab));
    }, 300_000);
  }
});

/**
 * Table 2 of the paper (Section 4.1), bandwidth-optimal Swing's congestion deficiency Ξ on a
 * torus k^D: Σ over its steps of δ(σ(s))/2^(s+1), the peer distance |ρ(j)| of each per-dimension
 * step j weighted by the share of the vector it sends; printed as 1.19, 1.03, 1.008 for D = 2, 3, 4
 * as k grows. At k = 8: 1.078 (D = 2), 1.025 (D = 3).
 */
const rho = (j: number) => (1 - (-2) ** (j + 1)) / 3;
function swingDeficiency(k: number, D: number): number {
  let xi = 0;
  for (let j = 0; j < Math.log2(k); j++) for (let d = 0; d < D; d++) xi += Math.abs(rho(j)) / 2 ** (j * D + d + 1);
  return xi;
}

/** [torus, the table's printed value (k large), the model's Ξ as the doc gives it]. */
const TABLE2: readonly [string, number, number][] = [
  ["8x8", 1.19, 1.095],
  ["8x8x8", 1.03, 1.028],
];

describe("Table 2: bandwidth-optimal Swing's congestion deficiency, the paper's value against the model's", () => {
  for (const [torus, printed, doc] of TABLE2) {
    it(`torus:${torus}: within 15% of the paper's Ξ at this size and of the value it prints`, () => {
      const dims = torus.split("x").map(Number);
      const n = dims.reduce((a, b) => a * b, 1);
      const D = dims.length;
      const S = 8 * 2 ** 20;
      // The bandwidth term: what a second 8 MiB adds (the latencies are the same at both sizes),
      // against the optimum on 2D ports, 2(n-1)/n · S / (2D · link).
      const added = modelled(torus, 2 * S, "swing_bandwidth") - modelled(torus, S, "swing_bandwidth");
      const xi = added / (((2 * (n - 1)) / n) * (S / (2 * D * PAPER_NET.link)));
      const paper = swingDeficiency(8, D);
      if (show)
        console.log(`| ${torus} | ${paper.toFixed(3)} (${printed}) | ${xi.toFixed(3)} | ${(xi / paper).toFixed(3)} |`);
      expect(Math.abs(xi - doc) / doc, `model Ξ ${xi.toFixed(4)}, the doc's ${doc}`).toBeLessThan(0.02);
      expect(Math.abs(xi / paper - 1)).toBeLessThan(0.15);
      expect(Math.abs(xi / printed - 1)).toBeLessThan(0.15);
    }, 300_000);
  }
});

/**
 * Table 2's sum for a torus of any shape, by hand: the steps go round the dimensions in turn, a
 * dimension dropping out once its log2 k_d steps are done (algorithms/lib/swing_torus.ts); step s
 * sends 1/2^(s+1) of each collective's vector over |ρ(j)| hops (j that dimension's own step). On a
 * square torus every step has all D dimensions, the 2D collectives spread over the 2D ports, and the
 * sum is Table 2's. Where only a of the D dimensions are left, the 2D collectives share those 2a
 * ports, so that step's term counts D/a times.
 */
function swingSum(dims: readonly number[]): number {
  const D = dims.length;
  const steps = dims.map((k) => Math.log2(k));
  let xi = 0;
  let s = 0;
  for (let j = 0; j < Math.max(...steps); j++) {
    const active = steps.filter((l) => l > j).length;
    for (let a = 0; a < active; a++) xi += ((D / active) * Math.abs(rho(j))) / 2 ** ++s;
  }
  return xi;
}

/**
 * docs/network-validation.md 5e, large sizes: [torus, bytes, swing_bandwidth, ring, rabenseifner,
 * recursive_doubling] µs, as the doc's table gives them.
 */
const LARGE_SHAPES: readonly [string, number, number, number, number, number][] = [
  ["8x8", 2 * MiB, 39.01, 227.58, 267.33, 597.0],
  ["8x8", 128 * MiB, 1463.43, 5429.82, 15874.07, 37590.76],
  ["64x64", 2 * MiB, 108.84, 9144.07, 1934.69, 5343.62],
  ["64x64", 128 * MiB, 1673.58, 14427.6, 116411.23, 338287.47],
  ["256x4", 2 * MiB, 182.87, 2337.6, 2114.8, 10931.5],
  ["256x4", 128 * MiB, 2618.82, 7617.27, 121462.0, 692673.68],
  ["8x8x8", 2 * MiB, 38.96, 1265.52, 280.57, 895.5],
  ["8x8x8", 128 * MiB, 942.13, 6540.02, 16104.07, 56386.15],
  ["4x4x4x4", 2 * MiB, 28.04, 711.76, 160.06, 513.72],
  ["4x4x4x4", 128 * MiB, 686.07, 5975.94, 8933.7, 32222.65],
];

/** [torus, the model's Ξ at 128 MiB as the doc gives it]: the bandwidth term (128 MiB − 64 MiB) over the 2D-port optimum. */
const XI_128M: readonly [string, number][] = [
  ["8x8", 1.095],
  ["64x64", 1.185],
  ["256x4", 1.953],
  ["8x8x8", 1.027],
  ["4x4x4x4", 1.0],
];

describe("the large sizes on every torus shape: Swing ahead of the ring, Rabenseifner and recursive doubling", () => {
  for (const [torus, bytes, ...doc] of LARGE_SHAPES) {
    it(`torus:${torus} at ${bytes / MiB} MiB`, () => {
      const names = ["swing_bandwidth", "ring", "rabenseifner", "recursive_doubling"];
      const t = names.map((a) => modelled(torus, bytes, a));
      if (show) console.log(`| ${torus} | ${bytes / MiB} MiB | ${t.map((x) => x.toFixed(2)).join(" | ")} |`);
      t.forEach((x, i) => {
        near(x, doc[i] as number, `${names[i]} torus:${torus} ${bytes} B`);
      });
      expect(t[0] as number).toBeLessThan(Math.min(...t.slice(1)));
    }, 300_000);
  }
});

describe("Table 2 at 128 MiB on every torus shape: the model's Ξ against the paper's sum and the hand count", () => {
  it("the hand count is Table 2's sum on a square torus", () => {
    expect(swingSum([8, 8])).toBeCloseTo(swingDeficiency(8, 2), 12);
    expect(swingSum([8, 8, 8])).toBeCloseTo(swingDeficiency(8, 3), 12);
    expect(swingSum([64, 64])).toBeCloseTo(swingDeficiency(64, 2), 12);
    // 256x4: the 4-ring's two steps are done after step 4, and the last six steps share the x ports.
    expect(swingSum([256, 4])).toBeGreaterThan(1.3 * swingSum([256, 256]));
  });
  for (const [torus, doc] of XI_128M) {
    it(`torus:${torus}: within 15% of the hand count`, () => {
      const dims = torus.split("x").map(Number);
      const n = dims.reduce((a, b) => a * b, 1);
      const D = dims.length;
      const S = 64 * MiB;
      const added = modelled(torus, 2 * S, "swing_bandwidth") - modelled(torus, S, "swing_bandwidth");
      const xi = added / (((2 * (n - 1)) / n) * (S / (2 * D * PAPER_NET.link)));
      const hand = swingSum(dims);
      if (show) console.log(`| ${torus} | ${hand.toFixed(3)} | ${xi.toFixed(3)} | ${(xi / hand).toFixed(3)} |`);
      expect(Math.abs(xi - doc) / doc, `model Ξ ${xi.toFixed(4)}, the doc's ${doc}`).toBeLessThan(0.02);
      expect(Math.abs(xi / hand - 1)).toBeLessThan(0.15);
    }, 300_000);
  }
});

/**
 * The paper's strongest baseline at large sizes, the bucket algorithm with 2D ports (cclab has no
 * such algorithm), by hand on the same network: 2·Σ(k_d − 1) neighbour steps of 1.1 µs each (100 ns
 * injection, 100 ns link, three 300 ns hops) and, every step to a neighbour with no link shared,
 * the 2D-port optimum 2(n−1)/n · S / (2D · link) for its bytes.
 */
function bucketByHand(dims: readonly number[], bytes: number): number {
  const n = dims.reduce((a, b) => a * b, 1);
  const steps = 2 * dims.reduce((a, k) => a + k - 1, 0);
  return steps * 1.1 + (((2 * (n - 1)) / n) * bytes) / (2 * dims.length * PAPER_NET.link);
}

/** [torus, bytes, Swing's time over the hand-counted bucket's] as the doc's table gives them. */
const AGAINST_BUCKET: readonly [string, number, number][] = [
  ["8x8", 2 * MiB, 0.758],
  ["8x8", 128 * MiB, 1.082],
  ["64x64", 2 * MiB, 0.365],
  ["64x64", 128 * MiB, 1.034],
  ["256x4", 2 * MiB, 0.311],
  ["256x4", 128 * MiB, 1.372],
  ["8x8x8", 2 * MiB, 0.648],
  ["8x8x8", 128 * MiB, 1.003],
  ["4x4x4x4", 2 * MiB, 0.761],
  ["4x4x4x4", 128 * MiB, 0.987],
];

describe("against the paper's bucket algorithm, by hand: the abstract's 'up to 3x', and where Table 2 puts the bucket ahead", () => {
  it("the doc's ratios, the largest speedup over the strongest baseline within 15% of 3x", () => {
    let best = 0;
    for (const [torus, bytes, doc] of AGAINST_BUCKET) {
      const dims = torus.split("x").map(Number);
      const swing = modelled(torus, bytes, "swing_bandwidth");
      const bucket = bucketByHand(dims, bytes);
      const others = ["ring", "rabenseifner", "recursive_doubling"].map((a) => modelled(torus, bytes, a));
      const speedup = Math.min(bucket, ...others) / swing;
      if (show)
        console.log(
          `| ${torus} | ${bytes / MiB} MiB | ${bucket.toFixed(1)} | ${(swing / bucket).toFixed(3)} | ${speedup.toFixed(2)} |`,
        );
      expect(
        Math.abs(swing / bucket - doc),
        `${torus} ${bytes} B: Swing / bucket ${(swing / bucket).toFixed(3)}`,
      ).toBeLessThan(0.01);
      best = Math.max(best, speedup);
    }
    expect(Math.abs(best / 3 - 1)).toBeLessThan(0.15);
  }, 300_000);
});
