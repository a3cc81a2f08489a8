/**
 * PAT (algorithms/lib/pat.ts): cclab's op generators against NCCL's own, compiled from its header
 * (test/fixtures/pat/nccl-ops.txt, written by generate.sh), NCCL's aggregation, the message counts
 * of the header formulas, the buffer bound of the reduce-scatter, and the proof in the regimes the
 * n = 1..64 matrix does not reach (blocks cut into several chunks, partial packing).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { pat as patAllGatherAlg } from "../algorithms/allgather/pat.js";
import {
  aggregatedSteps,
  NCCL_STEPS,
  PAT_GRAIN,
  type PatOp,
  patAllGatherOps,
  patChunk,
  patMessages,
  patReduceScatterOps,
  patShape,
} from "../algorithms/lib/pat.js";
import { pat as patReduceScatterAlg } from "../algorithms/reducescatter/pat.js";
import { checkAlgorithm, compileAll } from "../src/schedule/check.js";
import { compile } from "../src/schedule/plan.js";
import { makeCall, rankCall } from "../src/specs/index.js";

const FIXTURE = new URL("./fixtures/pat/nccl-ops.txt", import.meta.url);

/** dump.cc's line for one op. */
const line = (ag: boolean, o: PatOp) =>
  `${o.recvDim} ${o.sendDim} ${o.block} ${o.sendDim >= 0 ? (o.post ? 1 : 0) : "-"} ${!ag && o.sendDim >= 0 ? o.ahead : "-"} ${o.count} ${o.offset}\n`;

describe("the op generators are NCCL's", () => {
  const rows = readFileSync(FIXTURE, "utf8")
    .split("\n")
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => l.split(" "));
  it("the fixture covers both generators, n = 2..64 and beyond", () => {
    expect(rows.length).toBe(2 * (63 + 8) * 11);
  });
  it("every case: the same ops, in the same order, posted by the same ops", () => {
    const bad: string[] = [];
    for (const [kind, n, count, chunk, ops, hash] of rows) {
      const ag = kind === "ag";
      const args = [Number(n), Number(count), Number(chunk)] as const;
      const mine = [...(ag ? patAllGatherOps(...args) : patReduceScatterOps(...args))];
      const text = mine.map((o) => line(ag, o)).join("");
      const h = createHash("sha256").update(text).digest("hex").slice(0, 16);
      if (String(mine.length) !== ops || h !== hash) bad.push(`${kind} n=${n} count=${count} chunk=${chunk}`);
    }
    expect(bad).toEqual([]);
  });
  it("spells out n = 8, one element a block: dimension-reversed Bruck, packed", () => {
    const ag = [...patAllGatherOps(8, 1, 128)].filter((o) => o.sendDim >= 0);
    expect(ag.map((o) => `${o.block}>${o.sendDim}${o.post ? "!" : ""}`).join(" ")).toBe(
      "0>2! 0>1 4>1! 0>0 2>0 4>0 6>0!",
    );
    const rs = [...patReduceScatterOps(8, 1, 128)];
    expect(rs.map((o) => `${o.recvDim}:${o.block}>${o.sendDim}${o.post ? "!" : ""}`).join(" ")).toBe(
      "-1:7>0 -1:3>0 -1:5>0 -1:1>0! 0:6>1 0:2>1! 1:4>2 1:0>-1 0:4>2! 2:0>-1 0:0>-1",
    );
  });
  it("aggregated steps: a depth-first walk, each node before its subtrees", () => {
    expect(aggregatedSteps(0)).toEqual([]);
    expect(aggregatedSteps(1)).toEqual([1]);
    expect(aggregatedSteps(3)).toEqual([4, 6, 7, 5, 2, 3, 1]);
    expect(new Set(aggregatedSteps(6)).size).toBe(63);
  });
});

describe("NCCL's aggregation", () => {
  it("aggregates NCCL_STEPS deep, times the chunks packed per message, up to n/2", () => {
    expect(NCCL_STEPS).toBe(8);
    expect(patShape(2, 1000, 128)).toEqual({ pow2: 2, agg: 1, delta: 2, pack: 1 });
    expect(patShape(32, 1000, 128)).toEqual({ pow2: 32, agg: 8, delta: 4, pack: 1 });
    expect(patShape(32, 32, 128)).toEqual({ pow2: 32, agg: 16, delta: 2, pack: 4 });
    expect(patShape(64, 16, 128)).toEqual({ pow2: 64, agg: 32, delta: 2, pack: 8 });
    expect(patShape(33, 1, 128)).toEqual({ pow2: 64, agg: 16, delta: 4, pack: 16 });
    expect(patShape(1024, 1000, 128)).toEqual({ pow2: 1024, agg: 8, delta: 128, pack: 1 });
  });
  it("a chunk is the segment, at least one 512-byte grain", () => {
    expect(PAT_GRAIN).toBe(128);
    expect(patChunk(1)).toBe(128);
    expect(patChunk(4096)).toBe(4096);
  });
});

describe("message counts (the header formulas)", () => {
  const posts = (ops: Iterable<PatOp>) => [...ops].filter((o) => o.post && o.sendDim >= 0).length;
  it("log2 n messages when a whole loop packs into one, n a power of two", () => {
    for (const n of [2, 4, 8, 16, 32, 64, 128, 256, 1024]) {
      expect(patMessages(n, 1, 1024), `n=${n}`).toBe(Math.log2(n));
      expect(posts(patReduceScatterOps(n, 1, 1024)), `n=${n}`).toBe(Math.log2(n));
    }
  });
  it("n-1 per chunk when nothing packs", () => {
    expect(patMessages(8, 1000, 128)).toBe(7 * 8);
    expect(patMessages(17, 65, 128)).toBe(16);
    expect(patMessages(100, 300, 256)).toBe(99 * 2);
  });
  it("counts every message the generators post, for n up to 300", () => {
    const bad: string[] = [];
    for (let n = 2; n <= 300; n += n < 70 ? 1 : 23) {
      for (const [count, chunk] of [
        [1, 128],
        [5, 128],
        [16, 128],
        [40, 128],
        [129, 128],
        [7, 1000],
      ] as const) {
        const want = patMessages(n, count, chunk);
        if (posts(patAllGatherOps(n, count, chunk)) !== want) bad.push(`ag n=${n} count=${count}`);
        const rs = posts(patReduceScatterOps(n, count, chunk));
        const exact = (n & (n - 1)) === 0 || patShape(n, count, chunk).pack === 1;
        if (exact ? rs !== want : rs > (n - 1) * Math.ceil(count / chunk)) bad.push(`rs n=${n} count=${count}`);
      }
    }
    expect(bad).toEqual([]);
  });
  it("reduce-scatter's declared cost: exact where n is a power of two or nothing packs, a bound the plan keeps elsewhere", () => {
    // [n, count, segment, exact, steps]: the header's formula at points that tell its parts apart.
    const table: [number, number, number, boolean, number][] = [
      [8, 1000, 128, true, 56], // a power of two, nothing packed
      [16, 5, 1, true, 4], // a power of two, 8 blocks a message
      [33, 1000, 128, true, 256], // not a power of two, nothing packed: (n-1)·⌈count/c⌉ exactly
      [33, 16, 128, false, 32], // packed: (n-1)·⌈16/128⌉ = 32 bounds 10 messages
      [12, 40, 128, false, 11],
      [6, 1, 1, false, 5],
      [6, 0, 1, false, 0], // nothing to send: no message, whatever packs
    ];
    for (const [n, count, segment, exact, steps] of table) {
      const { cost } = patReduceScatterAlg;
      expect(cost.exact?.(n, count, segment), `exact n=${n} count=${count}`).toBe(exact);
      expect(cost.steps.value(n, count, segment), `steps n=${n} count=${count}`).toBe(steps);
      const posted = posts(patReduceScatterOps(n, count, patChunk(segment)));
      if (exact) expect(posted, `posted n=${n} count=${count}`).toBe(steps);
      else expect(posted).toBeLessThanOrEqual(steps);
    }
  });
  it("reduce-scatter packs fewer per message than all-gather where n is not a power of two", () => {
    expect(patMessages(33, 16, 128)).toBe(7);
    expect(posts(patReduceScatterOps(33, 16, 128))).toBe(10);
  });
});

describe("buffers", () => {
  it("all-gather needs none; reduce-scatter at most 2·NCCL_STEPS·⌈log2 n⌉ slots of one message", () => {
    for (const n of [2, 3, 5, 8, 13, 16, 31, 64]) {
      for (const count of [1, 7, 64, 200, 1000]) {
        const call = { size: n, count, segment: 1 };
        const ag = compileAll(patAllGatherAlg, makeCall({ collective: "allgather", ...call }));
        expect(Math.max(...ag.map((p) => p.scratch)), `allgather n=${n} count=${count}`).toBe(0);
        const rs = compileAll(patReduceScatterAlg, makeCall({ collective: "reducescatter", ...call }));
        const { pack } = patShape(n, count, PAT_GRAIN);
        const slot = pack * Math.min(PAT_GRAIN, count);
        const most = Math.max(...rs.map((p) => p.scratch));
        expect(most, `reducescatter n=${n} count=${count}`).toBeLessThanOrEqual(
          2 * NCCL_STEPS * Math.ceil(Math.log2(n)) * slot,
        );
        expect(most % slot, `reducescatter n=${n} count=${count}`).toBe(0);
      }
    }
  });
  it("the reduce-scatter's scratch does not grow with the count", () => {
    const scratch = (count: number) =>
      Math.max(
        ...compileAll(
          patReduceScatterAlg,
          makeCall({ collective: "reducescatter", size: 16, count, segment: 128 }),
        ).map((p) => p.scratch),
      );
    expect(scratch(128 * 40)).toBe(scratch(128 * 10));
  });
});

describe("proved where the n = 1..64 matrix does not reach", () => {
  // The matrix's counts fit one chunk; here blocks take several chunks, packed or not.
  it.each([
    ["allgather", patAllGatherAlg],
    ["reducescatter", patReduceScatterAlg],
  ] as const)("%s: several chunks per block, partial packing, in and out of place", (collective, alg) => {
    const errors: string[] = [];
    for (const n of [2, 3, 4, 5, 7, 8, 12, 16, 23]) {
      for (const [count, segment] of [
        [129, 1],
        [300, 128],
        [257, 200],
        [20, 128],
        [33, 400],
      ] as const) {
        for (const inPlace of [false, true]) {
          const r = checkAlgorithm(alg, makeCall({ collective, size: n, count, segment, inPlace }));
          errors.push(...r.errors);
        }
      }
    }
    expect(errors).toEqual([]);
  });
});

describe("steps as explain shows them", () => {
  const labels = (collective: string, n: number, count: number, segment: number) =>
    compile(
      collective === "allgather" ? patAllGatherAlg : patReduceScatterAlg,
      rankCall(makeCall({ collective, size: n, count, segment }), 0),
    ).steps.map((s) => s.label);
  it("a block cut into chunks names the chunk's elements", () => {
    expect(labels("allgather", 2, 300, 128)).toEqual([
      "copy own block",
      "copySend blocks +0 on dim 0 (elements 0..127)",
      "copySend blocks +0 on dim 0 (elements 128..255)",
      "copySend blocks +0 on dim 0 (elements 256..299)",
    ]);
    expect(labels("reducescatter", 4, 1, 128)).toEqual([
      "send blocks +3,+1 on dim 0",
      "recvReduce blocks +2",
      "send blocks +2 on dim 1",
      "recvReduce blocks +0,+0 into the output",
    ]);
  });
  it("no step is empty", () => {
    for (const collective of ["allgather", "reducescatter"]) {
      for (const [n, count, segment] of [
        [5, 7, 1],
        [8, 300, 128],
        [13, 1, 200],
      ] as const) {
        for (const plan of compileAll(
          collective === "allgather" ? patAllGatherAlg : patReduceScatterAlg,
          makeCall({ collective, size: n, count, segment }),
        )) {
          expect(plan.steps.filter((s) => s.transfers.length + s.local.length === 0)).toEqual([]);
        }
      }
    }
  });
});
