/**
 * The Bine paper (De Sensi et al., SC'25) on its own machines, in time and across node counts
 * (docs/network-validation.md, "Bine trees": "In time on LUMI's dragonfly" and "Across node
 * counts"). Its abstract claims up to 5x speedups and "consistent reductions in global-link traffic
 * across different vector sizes and node counts"; the rows hold what the model and the schedules
 * give on LUMI's groups (16 routers of 16 hosts, 200 Gb/s), to 2% (times) and to 0.1 point (bytes),
 * with Bine's order against the classic algorithms as the doc states it.
 * NETWORK_VALIDATION_TABLE=1 prints the rows.
 */
import { describe, expect, it } from "vitest";
import { bineTree } from "../algorithms/lib/bine.js";
import { callOf } from "../src/model/machine.js";
import { networkTime, parseTopology } from "../src/model/network/index.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { PAIRS, saving } from "../src/tools/bine-traffic.js";

const show = process.env.NETWORK_VALIDATION_TABLE === "1";
const MiB = 2 ** 20;

/** LUMI's network as the doc states it once: `dragonfly` groups of 16 routers of 16 hosts, 200 Gb/s links. */
const LUMI = { topology: "dragonfly:groups=5", link: 25e3, group: 256 } as const;

/** µs for one all-reduce of `bytes` on `n` ranks of LUMI's dragonfly, rank r on host r + offset. */
function onLumi(name: string, n: number, bytes: number, offset: number): number {
  const t = parseTopology(LUMI.topology, n + offset, { link: LUMI.link });
  const placement = new Int32Array(n);
  for (let r = 0; r < n; r++) placement[r] = r + offset;
  const alg = findAlgorithm("allreduce", name, { op: "test" });
  const { call } = callOf(alg, n, bytes, { dtype: "float32" });
  return networkTime(alg, call, { topology: t, placement, engine: "auto" }).time;
}

const NAMES = ["bine_latency", "recursive_doubling", "bine_bandwidth", "rabenseifner", "ring"] as const;

/** [bytes, offset, µs of NAMES in order], as the doc's table gives them: 1,024 ranks. */
const IN_TIME: readonly [number, number, readonly number[]][] = [
  [32, 0, [6.47, 5.68, 11.43, 10.72, 642.53]],
  [32, 128, [6.85, 6.04, 12.63, 11.53, 643.33]],
  [MiB, 0, [11025.49, 24331.36, 218.16, 16424.27, 726.0]],
  [MiB, 128, [11025.49, 23660.47, 218.17, 14914.48, 726.8]],
  [16 * MiB, 0, [176364.96, 389235.81, 3463.21, 262753.2, 1983.07]],
  [16 * MiB, 128, [176364.96, 378498.59, 3438.48, 238594.17, 1983.87]],
];

describe("Bine in time on LUMI's dragonfly, 1,024 ranks in 4 groups", () => {
  for (const [bytes, offset, doc] of IN_TIME) {
    it(`${bytes} B, the job at host ${offset}: the doc's times and order`, () => {
      const t = NAMES.map((a) => onLumi(a, 1024, bytes, offset));
      if (show) console.log(`| ${bytes} | ${offset} | ${t.map((x) => x.toFixed(2)).join(" | ")} |`);
      t.forEach((x, i) => {
        const want = doc[i] as number;
        expect(Math.abs(x - want) / want, `${NAMES[i]}: model ${x.toFixed(2)} µs, the doc's ${want}`).toBeLessThan(
          0.02,
        );
      });
      const [bineLat, rd, bineBw, rab, ring] = t as [number, number, number, number, number];
      if (bytes >= MiB) {
        // The paper's order: Bine ahead of recursive doubling and of the butterfly it replaces.
        expect(bineLat).toBeLessThan(rd / 2);
        expect(bineBw).toBeLessThan(rab / 5);
      } else {
        // 32 B on a job aligned to LUMI's routers: recursive doubling's first four steps stay
        // inside a router (the next test takes the alignment away).
        expect(rd).toBeLessThan(bineLat);
      }
      // The ring: behind Bine at 1 MiB, ahead at 16 MiB (it crosses the fewest global-link bytes).
      if (bytes === MiB) expect(bineBw).toBeLessThan(ring);
      if (bytes === 16 * MiB) expect(ring).toBeLessThan(bineBw);
    }, 300_000);
  }

  it("by hand: at 1 MiB, recursive doubling's two steps between groups each put a whole group on one global link", () => {
    // Recursive doubling: rank r xor 256 and r xor 512 are in another group for every r, so each of
    // those two steps sends 256 messages of 1 MiB over one global link, one step after the other.
    // Bine: its peers are r + ρ for even r and r - ρ for odd r, at distances that are not multiples
    // of 256, so a step's messages leave a group over two to four global links; over all its steps
    // the busiest link carries about one group's worth, 256 MiB.
    const perGroup = (256 * MiB) / LUMI.link;
    const rd = onLumi("recursive_doubling", 1024, MiB, 0);
    const bine = onLumi("bine_latency", 1024, MiB, 0);
    expect(Math.abs(rd / (2 * perGroup) - 1)).toBeLessThan(0.15);
    expect(Math.abs(bine / perGroup - 1)).toBeLessThan(0.15);
  }, 300_000);

  it("by hand: at 32 B recursive doubling is ahead only while the job is aligned to the routers", () => {
    const bine = onLumi("bine_latency", 1024, 32, 8);
    const rd = onLumi("recursive_doubling", 1024, 32, 8);
    if (show) console.log(`| 32 | 8 | ${bine.toFixed(2)} | ${rd.toFixed(2)} |`);
    expect(Math.abs(bine - 7.22) / 7.22).toBeLessThan(0.02);
    expect(Math.abs(rd - 7.29) / 7.29).toBeLessThan(0.02);
    expect(bine).toBeLessThan(rd);
  }, 300_000);
});

/** [n, collective/bine, saving at any offset in percent] as the doc's table gives them: groups of 256 hosts, 1 MiB. */
const ACROSS_N: readonly [number, string, number][] = [
  [64, "broadcast/bine", -42.2],
  [64, "allreduce/bine_latency", -3.1],
  [64, "allreduce/bine_bandwidth", 83.8],
  [128, "broadcast/bine", -43.5],
  [128, "allreduce/bine_latency", -3.3],
  [128, "allreduce/bine_bandwidth", 90.3],
  [256, "broadcast/bine", -47.6],
  [256, "allreduce/bine_latency", -3.5],
  [256, "allreduce/bine_bandwidth", 94.4],
  [512, "broadcast/bine", -8.7],
  [512, "allreduce/bine_latency", 14.8],
  [512, "allreduce/bine_bandwidth", 97.5],
  [1024, "broadcast/bine", 10.5],
  [1024, "allreduce/bine_latency", 16.0],
  [1024, "allreduce/bine_bandwidth", 98.2],
];

describe("Bine's global-link bytes across node counts on LUMI's groups, the job at any host of its group", () => {
  it("the doc's savings", () => {
    for (const [n, id, doc] of ACROSS_N) {
      const p = PAIRS.find((q) => `${q.collective}/${q.bine}` === id);
      if (p === undefined) throw new Error(`no pair ${id}`);
      const got = Math.round(1000 * saving(p, n, MiB, LUMI.group).anyOffset) / 10;
      if (show) console.log(`| ${n} | ${id} | ${got} |`);
      expect([n, id, got]).toEqual([n, id, doc]);
    }
  }, 300_000);

  it("by hand: Bine's tree has edges that wrap round the rank numbers, which a block of hosts does not", () => {
    // Bine's distances are modulo n: on a contiguous block of hosts an edge of distance -1 from
    // rank 0 spans the whole job and crosses any group boundary inside it; the binomial tree's
    // edges v -> v + 2^j never wrap.
    // Rank 0's children: 43, 11, 59, 3, 63, 1. Three of them (63, 59, 43: distances -1, -5, -21)
    // sit at the far end of the block, 63, 59 and 43 hosts away; the binomial tree's farthest
    // child is 32 away.
    const children = bineTree(0, 64).children;
    expect([...children].sort((a, b) => a - b)).toEqual([1, 3, 11, 43, 59, 63]);
    expect(children.filter((c) => c > 32)).toHaveLength(3);
  });
});
