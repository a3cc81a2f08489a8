/**
 * Swing (algorithms/lib/swing.ts): the peer function π(r, s) and ρ(s) as the paper defines them,
 * the block rule of the bandwidth-optimal variant (each chunk leaves each rank once per phase, on
 * one step), why cclab takes the authors' later rule (their earlier one loses contributions at
 * n = 26: proved here by the checker), the tail fold for other sizes, and the alpha-beta model's
 * verdict against recursive doubling, Rabenseifner and the ring.
 */
import { describe, expect, it } from "vitest";
import { swingBandwidth } from "../algorithms/allreduce/swing_bandwidth.js";
import { swingLatency } from "../algorithms/allreduce/swing_latency.js";
import {
  fitsNegabinary,
  negabinary,
  rho,
  type SendStepRule,
  swingChunksAt,
  swingLayout,
  swingPeer,
  swingReduceScatterAllGather,
  swingSendStep,
} from "../algorithms/lib/swing.js";
import { checkAlgorithm, compileAll } from "../src/schedule/check.js";
import { defineAlgorithm, partition } from "../src/schedule/dsl.js";
import { modelTime } from "../src/schedule/model.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";

/** swing_bandwidth with another send-step rule (the block rule under test). */
const withRule = (rule: SendStepRule) =>
  defineAlgorithm({
    ...swingBandwidth,
    name: "swing_with_rule",
    schedule: ({ rank, size, count }, { output, scratch }) =>
      swingReduceScatterAllGather(
        rank,
        size,
        output,
        partition(count, size),
        scratch(count),
        () => scratch(count),
        rule,
      ),
  });

describe("π(r, s) and ρ(s)", () => {
  it("ρ(s) = Σ (-2)^i: 1, -1, 3, -5, 11, -21, s+1 ones in negabinary", () => {
    expect([0, 1, 2, 3, 4, 5].map(rho)).toEqual([1, -1, 3, -5, 11, -21]);
    for (let s = 0; s < 10; s++) expect(negabinary(rho(s))).toBe(2 ** (s + 1) - 1);
  });
  it("even ranks step right, odd ranks left; peers pair up for even n", () => {
    expect([0, 1, 2].map((s) => swingPeer(0, s, 8))).toEqual([1, 7, 3]);
    expect([0, 1, 2].map((s) => swingPeer(5, s, 8))).toEqual([4, 6, 2]);
    for (let n = 2; n <= 64; n += 2) {
      for (let s = 0; 2 ** s < n; s++) {
        for (let r = 0; r < n; r++) expect(swingPeer(swingPeer(r, s, n), s, n), `n=${n} s=${s} r=${r}`).toBe(r);
      }
    }
  });
  it("odd n breaks the pairing (ranks n-1 and 0 are both even), hence the fold", () => {
    expect(swingPeer(4, 0, 5)).toBe(0);
    expect(swingPeer(0, 0, 5)).toBe(1);
  });
  it("hops shorter than recursive doubling's 2^s from step 2 on", () => {
    expect([0, 1, 2, 3, 4, 5].map((s) => Math.abs(rho(s)))).toEqual([1, 1, 3, 5, 11, 21]);
  });
  it("negabinary ranges: k digits hold [-2(4^⌊k/2⌋-1)/3, (4^⌊k/2⌋-1)/3 (+2^(k-1) for odd k)]", () => {
    expect(fitsNegabinary(5, 3)).toBe(true);
    expect(fitsNegabinary(6, 3)).toBe(false);
    expect(fitsNegabinary(-2, 3)).toBe(true);
    expect(fitsNegabinary(-3, 3)).toBe(false);
    expect(fitsNegabinary(-10, 4)).toBe(true);
    expect(fitsNegabinary(-11, 4)).toBe(false);
    expect(fitsNegabinary(1, 1)).toBe(true);
    expect(fitsNegabinary(-1, 1)).toBe(false);
  });
});

describe("the bandwidth-optimal block rule", () => {
  it("every even n: each rank sends every other chunk exactly once, one step each", () => {
    for (let n = 2; n <= 64; n += 2) {
      const k = Math.ceil(Math.log2(n));
      for (let r = 0; r < n; r++) {
        const sent = Array.from({ length: k }, (_, s) => swingChunksAt(r, s, n)).flat();
        expect(
          sent.sort((a, b) => a - b),
          `n=${n} r=${r}`,
        ).toEqual(Array.from({ length: n }, (_, i) => i).filter((i) => i !== r));
      }
    }
  });
  it("n = 8: rank 0 gives away half its window, then half of the rest, as recursive halving would", () => {
    expect([0, 1, 2].map((s) => swingChunksAt(0, s, 8))).toEqual([[1, 2, 5, 6], [4, 7], [3]]);
    expect(swingSendStep(0, 7, 3, 8)).toBe(1);
    expect(() => swingSendStep(3, 3, 3, 8)).toThrow(/own block/);
  });

  /** The authors' earlier rule (get_step_to_reach, Feb 2024): of two forms of a distance, the one that arrives last. */
  const earlier: SendStepRule = (r, b, k, n) => {
    const first = (x: number) => {
      const neg = negabinary(x);
      const y = neg & 1 ? ~neg >>> 0 : neg;
      return Math.log2(y & -y) - 1;
    };
    const last = (x: number) => 31 - Math.clz32(negabinary(x));
    const a = b % 2 === 1 ? b - r : r - b;
    const c = a < 0 ? a + n : a - n;
    const fa = fitsNegabinary(a, k) ? first(a) : -1;
    const fc = fitsNegabinary(c, k) ? first(c) : -1;
    if (fa < 0 || fc < 0 || fa === fc) return Math.max(fa, fc);
    return last(a) > last(c) ? fa : fc;
  };
  it("the earlier rule loses contributions at n = 26, where the registered one holds", () => {
    const call = makeCall({ collective: "allreduce", size: 26, count: 26, inPlace: true });
    const broken = checkAlgorithm(withRule(earlier), call, { skipCost: true });
    expect(broken.errors.join("\n")).toMatch(/rank 22's element 0 is missing/);
    expect(checkAlgorithm(withRule(swingSendStep), call, { skipCost: true }).errors).toEqual([]);
    expect(checkAlgorithm(withRule(earlier), { ...call, size: 24, count: 24 }, { skipCost: true }).errors).toEqual([]);
  });
});

describe("the tail fold (libswing's shrink and enlarge)", () => {
  it("the last n - m ranks hand their buffer to the ranks n - m below", () => {
    /** Each rank's first peer and the last, where it folds (else -1 for both). */
    const fold = (alg: typeof swingLatency, n: number) =>
      compileAll(alg, makeCall({ collective: "allreduce", size: n, count: n, inPlace: true })).map((p) => {
        const peers = p.ops.filter((o) => o.kind === "send" || o.kind === "recv").map((o) => o.peer);
        return p.steps[0]?.label.includes("rank") && !p.steps[0]?.label.includes("with") ? peers[0] : -1;
      });
    expect(fold(swingLatency, 6)).toEqual([-1, -1, 4, 5, 2, 3]);
    expect(fold(swingBandwidth, 5)).toEqual([-1, -1, -1, 4, 3]);
  });
  it("costs two steps and one buffer more, like recursive doubling's fold", () => {
    const call = makeCall({ collective: "allreduce", size: 6, count: 12 });
    const r = checkAlgorithm(swingLatency, call);
    expect(r.errors).toEqual([]);
    expect(r.steps).toBe(4);
    expect(r.sent).toBe(3 * 12);
    expect(r.perRank.map((p) => p.steps)).toEqual([2, 2, 4, 4, 2, 2]);
    const b = checkAlgorithm(swingBandwidth, makeCall({ collective: "allreduce", size: 7, count: 12 }));
    expect(b.errors).toEqual([]);
    expect(b.perRank.map((p) => p.steps)).toEqual([6, 6, 6, 6, 6, 8, 2]);
  });
});

describe("in cclab's alpha-beta model (no torus)", () => {
  const time = (name: string, n: number, bytes: number) =>
    modelTime(
      findAlgorithm("allreduce", name, { op: "test" }),
      makeCall({ collective: "allreduce", size: n, count: bytes / 4 }),
      {
        alpha: 5,
        beta: 1 / 25e3,
      },
    ).time;
  it("Swing-L costs what recursive doubling costs; Swing-B what Rabenseifner costs on powers of two", () => {
    for (const n of [8, 64]) {
      expect(time("swing_latency", n, 4096)).toBeCloseTo(time("recursive_doubling", n, 4096), 6);
      expect(time("swing_bandwidth", n, 1 << 22)).toBeCloseTo(time("rabenseifner", n, 1 << 22), 6);
    }
  });
  it("Swing-B beats recursive doubling on large buffers, and the ring (fewer steps, the same bytes)", () => {
    expect(time("swing_bandwidth", 16, 1 << 24)).toBeLessThan(time("recursive_doubling", 16, 1 << 24));
    expect(time("swing_bandwidth", 32, 1 << 20)).toBeLessThan(time("ring", 32, 1 << 20));
  });
  it("Swing-B is bandwidth-optimal on even sizes that are not powers of two, where Rabenseifner folds", () => {
    const b = checkAlgorithm(swingBandwidth, makeCall({ collective: "allreduce", size: 12, count: 1200 }));
    expect(b.errors).toEqual([]);
    expect(b.sent).toBe((2 * 11 * 1200) / 12);
    expect(b.steps).toBe(8);
    const r = checkAlgorithm(
      findAlgorithm("allreduce", "rabenseifner", { op: "test" }),
      makeCall({ collective: "allreduce", size: 12, count: 1200 }),
    );
    expect(r.sent).toBeGreaterThan(b.sent);
  });
});

describe("the layout: one message each way per step", () => {
  it("powers of two: every rank's chunks of every step lie together; elsewhere the identity", () => {
    for (const n of [2, 4, 8, 16, 32, 64]) {
      const order = swingLayout(n);
      expect(
        [...order].sort((a, b) => a - b),
        `n=${n}`,
      ).toEqual(Array.from({ length: n }, (_, i) => i));
      for (let r = 0; r < n; r++) {
        for (let s = 0; 2 ** s < n; s++) {
          const at = swingChunksAt(r, s, n)
            .map((b) => order.indexOf(b))
            .sort((a, b) => a - b);
          expect(at, `n=${n} r=${r} s=${s}`).toEqual(at.map((_, j) => (at[0] as number) + j));
        }
      }
    }
    expect(swingLayout(8)).not.toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(swingLayout(12)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });
  it("swingSendStep's fast path (windows as runs of positions) gives what the sets of blocks per rank give", () => {
    // The same rule under another name takes the general path: a set of blocks per rank, each
    // step's chunks read off the rank's send steps.
    const same: SendStepRule = (r, b, k, n) => swingSendStep(r, b, k, n);
    for (let n = 1; n <= 256; n *= 2) expect(swingLayout(n), `n=${n}`).toEqual(swingLayout(n, same));
    const ops = (rule: SendStepRule) =>
      compileAll(withRule(rule), makeCall({ collective: "allreduce", size: 32, count: 32 * 3 + 1, inPlace: true })).map(
        (p) => [p.steps.map((x) => x.label), p.ops],
      );
    expect(ops(swingSendStep)).toEqual(ops(same));
  });
  it("no packing on powers of two, packing elsewhere, and never an empty step", () => {
    const steps = (n: number) =>
      compileAll(
        swingBandwidth,
        makeCall({ collective: "allreduce", size: n, count: 3 * n + 1, inPlace: true }),
      ).flatMap((p) => p.steps);
    for (const n of [4, 8, 16]) {
      expect(
        steps(n).filter((s) => s.label.startsWith("pack")),
        `n=${n}`,
      ).toEqual([]);
      expect(
        steps(n).filter((s) => s.local.some((l) => l.kind === "copy")),
        `n=${n}`,
      ).toEqual([]);
    }
    const six = steps(6);
    expect(six.some((s) => /^pack chunks \d/.test(s.label))).toBe(true);
    expect(six.some((s) => /^recvCopySend chunks \d/.test(s.label) && s.local.length > 0)).toBe(true);
    for (const n of [4, 6, 7, 12])
      expect(steps(n).filter((s) => s.transfers.length + s.local.length === 0)).toEqual([]);
  });
  it("powers of two: one reduction per step, and long steps named by their first and last chunk", () => {
    const n = 64;
    const plans = compileAll(
      swingBandwidth,
      makeCall({ collective: "allreduce", size: n, count: 5 * n, inPlace: true }),
    );
    for (const p of plans) {
      // Six steps each way, a send, a receive and (reduce-scatter) one reduction each: a rank's plan
      // no longer grows with the chunks a step moves (32 at the first step here).
      expect(p.steps.filter((s) => s.local.length > 1)).toEqual([]);
      expect(p.ops.length).toBe(6 * 3 + 6 * 2);
    }
    const first = (plans[0]?.steps[0]?.label ?? "").match(
      /^recvReduceSend chunks (\d+),…,(\d+) \((\d+)\) with rank 1$/,
    );
    expect(first?.[3]).toBe("32");
    const blocks = swingChunksAt(1, 0, n);
    expect(blocks).toHaveLength(32);
    // The first and last of peer 1's chunks in buffer order (the layout's), as the label has them.
    const order = swingLayout(n).filter((b) => blocks.includes(b));
    expect([first?.[1], first?.[2]]).toEqual([String(order[0]), String(order[31])]);
    // Up to 8 chunks a label lists them all (n = 16: 8 at the first step), from 9 it abbreviates.
    const label = (m: number) =>
      compileAll(swingBandwidth, makeCall({ collective: "allreduce", size: m, count: m, inPlace: true }))[0]?.steps[0]
        ?.label ?? "";
    expect(label(16)).toMatch(/^recvReduceSend chunks (\d+,){7}\d+ with rank 1$/);
    expect(label(32)).toMatch(/^recvReduceSend chunks \d+,…,\d+ \(16\) with rank 1$/);
  });
  it("the core needs an even n and one chunk per rank", () => {
    const r = { buf: "output", offset: 0, count: 8 } as const;
    expect(() => [...swingReduceScatterAllGather(0, 5, r, partition(8, 5), r, () => r)]).toThrow(
      /swing: 5 chunks for 5 ranks/,
    );
    expect(() => [...swingReduceScatterAllGather(0, 4, r, partition(8, 3), r, () => r)]).toThrow(
      /swing: 3 chunks for 4 ranks/,
    );
  });
});
