/**
 * MSCCL export then import (src/msccl/export.ts, import.ts) for every registered algorithm of
 * every collective MSCCL can express, at n = 2..16: the XML passes the import's checks (the
 * executor's rules, matched messages, no deadlock, no race), the imported program is proved the
 * collective over its whole domain (counts 0..3 units, in and out of place), and at the exported
 * call it sends the same messages, with the same contributions, between every pair of ranks on
 * every channel as the schedule (compare.ts says why that is the equality that can be asked).
 * Also: the in-place export, two instances over channels, the executor's limits, and the
 * collectives MSCCL cannot express.
 */
import { describe, expect, it } from "vitest";
import { proveImported } from "../src/cli/msccl.js";
import { differentMessages } from "../src/msccl/compare.js";
import { exportMsccl, overLimits, toXml } from "../src/msccl/export.js";
import { importMsccl } from "../src/msccl/import.js";
import { parseMscclXml } from "../src/msccl/parse.js";
import type { Algorithm } from "../src/schedule/dsl.js";
import { explainCall } from "../src/schedule/explain.js";
import { allAlgorithms, findAlgorithm } from "../src/schedule/registry.js";
import type { CollectiveCall } from "../src/specs/types.js";

const EXPRESSIBLE = allAlgorithms().filter((a) => a.collective !== "alltoallv" && a.collective !== "barrier");
const SIZES = Array.from({ length: 15 }, (_, i) => i + 2);

/** The exported call: explain's (one element per chunk), one segment (MSCCL pipelines chunks itself). */
const callOf = (alg: Algorithm, n: number, inPlace = false): CollectiveCall => {
  const c = explainCall(alg, n);
  return { ...c, inPlace, segment: Math.max(1, c.count) };
};

function roundTrip(alg: Algorithm, call: CollectiveCall, channels = 1): string | undefined {
  const program = exportMsccl(alg, call, { channels });
  expect(overLimits(program)).toEqual([]);
  const xml = toXml(program);
  // The XML says what the program says.
  expect(parseMscclXml(xml).program).toEqual(program);
  const imp = importMsccl(xml, { file: `${alg.collective}_${alg.name}_${call.size}.xml` });
  expect(proveImported(imp, "exported")).toBe(8);
  return channels === 1 ? differentMessages(alg, imp.algorithm, call) : undefined;
}

describe("export then import", () => {
  it.each(EXPRESSIBLE.map((a) => [`${a.collective}/${a.name}`, a] as const))(
    "%s at n = 2..16 proves equal",
    (_, alg) => {
      for (const n of SIZES) expect(roundTrip(alg, callOf(alg, n)), `n = ${n}`).toBeUndefined();
    },
  );

  it.each(EXPRESSIBLE.map((a) => [`${a.collective}/${a.name}`, a] as const))("%s in place at n = 3, 8", (_, alg) => {
    for (const n of [3, 8]) expect(roundTrip(alg, callOf(alg, n, true)), `n = ${n}`).toBeUndefined();
  });

  it("two instances side by side on channels 0 and 1 still prove the collective", () => {
    const alg = findAlgorithm("allreduce", "ring", { op: "test" });
    const program = exportMsccl(alg, callOf(alg, 4), { channels: 2 });
    expect(program.nchannels).toBe(2);
    expect(program.nchunksperloop).toBe(8);
    expect(roundTrip(alg, callOf(alg, 4), 2)).toBeUndefined();
  });

  it("writes what the executor reads: every attribute, one threadblock per peer and channel, hasdep on every step waited for", () => {
    const alg = findAlgorithm("allgather", "ring", { op: "test" });
    const xml = toXml(exportMsccl(alg, callOf(alg, 4), { proto: "LL128" }));
    expect(xml).toMatch(
      /^<algo name="allgather_ring_4" proto="LL128" nchannels="1" nchunksperloop="4" ngpus="4" coll="allgather" inplace="0" outofplace="1" minBytes="0" maxBytes="0">/,
    );
    const p = parseMscclXml(xml).program;
    for (const g of p.gpus) {
      const peers = g.tbs.filter((t) => t.send >= 0 || t.recv >= 0).map((t) => `${t.send}/${t.recv}/${t.chan}`);
      expect(new Set(peers).size).toBe(peers.length);
      for (const t of g.tbs) {
        for (const s of t.steps) {
          if (s.depid < 0) continue;
          expect(g.tbs[s.depid]?.steps[s.deps]?.hasdep, `gpu ${g.id} tb ${t.id} step ${s.s}`).toBe(true);
        }
      }
    }
  });

  it("a pipelined schedule too long for the executor is reported by its threadblock", () => {
    const alg = findAlgorithm("allreduce", "binary_tree", { op: "test" });
    const program = exportMsccl(alg, { ...callOf(alg, 16), segment: 1 });
    expect(overLimits(program)[0]).toMatch(
      /^gpu \d+ tb \d+ has \d+ steps; msccl-executor-nccl allows 64 \(MSCCL_MAX_NUM_STEPS\)$/,
    );
  });

  it("refuses the collectives MSCCL cannot express, saying why", () => {
    for (const [coll, name] of [
      ["alltoallv", "pairwise"],
      ["barrier", "dissemination"],
    ] as const) {
      const alg = findAlgorithm(coll, name, { op: "test" });
      expect(() => exportMsccl(alg, { ...explainCall(alg, 4) })).toThrow(/cannot be written as MSCCL IR/);
    }
  });
});
