/**
 * The 'auto' rules for the algorithms of issue 17 (src/collectives/auto.ts): which calls go to
 * swing_bandwidth and to PAT's reduce-scatter, and that the alpha-beta model backs each choice
 * against what auto picked before for those calls (the ring), by the margin the rule states.
 */
import { describe, expect, it } from "vitest";
import { chooseAlgorithm } from "../src/collectives/auto.js";
import { modelTime } from "../src/schedule/model.js";
import { algorithmsOf, findAlgorithm } from "../src/schedule/registry.js";
import { type Collective, makeCall } from "../src/specs/index.js";

const KiB = 1024;
const pick = (c: Collective, n: number, bytes: number) =>
  chooseAlgorithm(
    c,
    n,
    bytes,
    algorithmsOf(c).map((a) => a.name),
  )?.algorithm;
const time = (c: Collective, name: string, n: number, bytes: number) => {
  const count = bytes / 4;
  const alg = findAlgorithm(c, name, { op: "test" });
  const call = makeCall({ collective: c, size: n, count }, alg);
  return modelTime(alg, call, { alpha: 5, beta: 1 / 25e3 }).time;
};

describe("allreduce: swing_bandwidth on even groups that are not powers of two", () => {
  it("picks it from just above 128 KiB to 8 MiB, and nowhere else", () => {
    expect(pick("allreduce", 24, 512 * KiB)).toBe("swing_bandwidth");
    expect(pick("allreduce", 6, 8 * 1024 * KiB)).toBe("swing_bandwidth");
    expect(pick("allreduce", 24, 128 * KiB)).toBe("ring");
    expect(pick("allreduce", 24, 8 * 1024 * KiB + 4)).toBe("ring");
    expect(pick("allreduce", 25, 512 * KiB)).toBe("ring");
    expect(pick("allreduce", 32, 512 * KiB)).toBe("rabenseifner");
    expect(pick("allreduce", 96, 512 * KiB)).toBe("double_binary_tree");
  });
  it("the model backs it: at least twice as fast as the ring at 512 KiB, and faster at the edges", () => {
    for (const n of [6, 12, 24, 48]) {
      expect(time("allreduce", "swing_bandwidth", n, 512 * KiB) * 1.3, `n=${n}`).toBeLessThan(
        time("allreduce", "ring", n, 512 * KiB),
      );
      expect(time("allreduce", "swing_bandwidth", n, 256 * KiB), `n=${n}`).toBeLessThan(
        time("allreduce", "ring", n, 256 * KiB),
      );
    }
    expect(time("allreduce", "swing_bandwidth", 24, 512 * KiB) * 2).toBeLessThan(
      time("allreduce", "ring", 24, 512 * KiB),
    );
  });
});

describe("reducescatter: PAT for small blocks where recursive halving cannot run", () => {
  it("picks it for groups that are not powers of two, up to 64 KiB blocks", () => {
    expect(pick("reducescatter", 24, 4 * KiB)).toBe("pat");
    expect(pick("reducescatter", 6, 64 * KiB)).toBe("pat");
    expect(pick("reducescatter", 24, 64 * KiB + 4)).toBe("ring");
    expect(pick("reducescatter", 16, 4 * KiB)).toBe("recursive_halving");
  });
  it("the model backs it: at least twice as fast as the ring", () => {
    for (const n of [6, 12, 24, 48]) {
      for (const bytes of [KiB, 16 * KiB, 64 * KiB]) {
        expect(time("reducescatter", "pat", n, bytes) * 2, `n=${n} ${bytes} B`).toBeLessThan(
          time("reducescatter", "ring", n, bytes),
        );
      }
    }
  });
});
