/**
 * MSCCL XML import (src/msccl/import.ts): the suite of programs msccl-tools itself emitted
 * (test/fixtures/msccl/generate.sh: ring and all-pairs all-reduce, all-gather, all-to-all on 2, 4
 * and 8 GPUs, 1 and 2 channels, in and out of place) each proved over its whole domain and run on
 * the simulator against the oracle; the published examples that are wrong as their scripts emit
 * them, and the race msccl-tools emits for an in-place program, each rejected with the
 * counterexample; the producer/executor difference in rrc's operands followed the executor's way.
 */
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { proveImported } from "../src/cli/msccl.js";
import { AlgorithmFileError } from "../src/core/errors.js";
import { importMsccl } from "../src/msccl/import.js";
import { explain } from "../src/schedule/explain.js";
import { registerAlgorithm } from "../src/schedule/registry.js";
import { makeCall } from "../src/specs/index.js";
import { caseArb, describeCase, runCase } from "../src/verify/property.js";

const DIR = new URL("./fixtures/msccl/", import.meta.url);
const read = (rel: string) => readFileSync(new URL(rel, DIR), "utf8");
const FIXTURES = readdirSync(new URL("xml/", DIR)).filter((f) => f.endsWith(".xml"));
const load = (rel: string) => importMsccl(read(rel), { file: rel });

describe("the msccl-tools suite", () => {
  it("covers ring and all-pairs all-reduce, all-gather and all-to-all on 2, 4 and 8 GPUs, 1 and 2 channels, in and out of place", () => {
    for (const n of [2, 4, 8]) {
      for (const coll of ["allreduce", "allgather"]) {
        for (const ch of [1, 2])
          for (const m of ["ip", "oop"]) expect(FIXTURES).toContain(`${coll}_ring_${n}_${ch}ch_${m}.xml`);
        expect(FIXTURES).toContain(`${coll}_allpairs_${n}_1ch_ip.xml`);
      }
      for (const ch of [1, 2])
        for (const m of ["ip", "oop"]) expect(FIXTURES).toContain(`alltoall_allpairs_${n}_${ch}ch_${m}.xml`);
    }
    expect(FIXTURES.length).toBe(42);
  });

  it.each(FIXTURES)("%s is proved over its domain and computes the oracle's result on sim", async (f) => {
    const imp = load(`xml/${f}`);
    const [coll, , n] = f.split("_");
    expect(imp.algorithm.collective).toBe(coll);
    expect(imp.program.ngpus).toBe(Number(n));
    expect(proveImported(imp, f)).toBe(8);
    registerAlgorithm(imp.algorithm);
    const result = await fc.check(
      fc.asyncProperty(caseArb(imp.algorithm), async (c) => {
        const err = await runCase(imp.algorithm, c);
        if (err) throw new Error(`${describeCase(imp.algorithm, c)}: ${err}`);
      }),
      { numRuns: 3, seed: 17 },
    );
    expect(result.failed, String(result.errorInstance)).toBe(false);
  });

  it("names the imported program's steps in explain (tb.step type) and runs 2-channel traffic on both channels", () => {
    const imp = load("xml/allreduce_ring_4_2ch_oop.xml");
    const text = explain(imp.algorithm, makeCall({ collective: "allreduce", size: 4, count: 4 }));
    expect(text).toMatch(/tb\d+\.\d+ (rrs|rrcs|rcs|s|r)\b/);
    const steps = [
      ...imp.algorithm.schedule(
        { ...makeCall({ collective: "allreduce", size: 4, count: 4 }), rank: 0 },
        {
          input: { buf: "input", offset: 0, count: 4 },
          output: { buf: "output", offset: 0, count: 4 },
          scratch: (k) => ({ buf: "scratch", offset: 0, count: k }),
        },
      ),
    ];
    const channels = new Set(steps.flatMap((s) => s.transfers.map((t) => t.channel ?? 0)));
    expect([...channels].sort()).toEqual([0, 1]);
  });
});

describe("programs that are wrong as published", () => {
  it("rejects msccl-tools' allreduce_a100_pcie_hierarchical at 4 GPUs with the counterexample its own Check() prints", () => {
    const imp = load("published/allreduce_a100_pcie_hierarchical_4.xml");
    // msccl-tools' Check(): "Rank 0 chunk 0 ... given ReduceChunk(... Chunk(0,0), Chunk(1,0), Chunk(1,0))".
    expect(() => proveImported(imp, "hierarchical")).toThrow(AlgorithmFileError);
    expect(() => proveImported(imp, "hierarchical")).toThrow(
      /not allreduce.*rank 0: output\[0\] holds \[0\+1\+1\] but allreduce needs \[0\+1\+2\+3\].*rank 1's element 0 counted 2 times/s,
    );
  });

  it("rejects pipeline_a100_ring, labelled allreduce on 8 GPUs, which reduces only ranks 0..3", () => {
    const imp = load("published/pipeline_a100_ring_4.xml");
    expect(imp.program.ngpus).toBe(8);
    expect(() => proveImported(imp, "pipeline")).toThrow(
      /not allreduce.*needs \[0\+1\+2\+3\+4\+5\+6\+7\].*rank 4's element 0 is missing/s,
    );
  });

  it("rejects the race msccl-tools emits for an in-place all-to-all that names its output Buffer.output, naming both steps", () => {
    expect(() => load("published/alltoall_allpairs_4_2ch_ip_race.xml")).toThrow(
      /gpu 0: race: gpu 0 tb \d+ step \d+ \(cpy\) writes o\[\d\] \(in place\) and gpu 0 tb \d+ step \d+ \(s\) reads it, and no dependency orders them/,
    );
  });
});

describe("the executor's reading of the fields", () => {
  const two = (
    step: string,
  ) => `<algo name="t" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1" outofplace="0" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="1">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      ${step}
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="1">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      ${step.replaceAll('off="0"', 'off="X"').replaceAll('off="1"', 'off="0"').replaceAll('off="X"', 'off="1"')}
    </tb>
  </gpu>
</algo>`;

  it("rrc reduces the received chunk with the local chunk at srcbuf/srcoff and stores it at dstbuf/dstoff", () => {
    // Each GPU receives its peer's half of the chunk it owns and reduces it into its own: an
    // allreduce's reduce-scatter half. With srcoff = the local chunk, the executor's reading.
    const imp = importMsccl(
      two(
        '<step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>',
      ),
    );
    const text = explain(imp.algorithm, makeCall({ collective: "allreduce", size: 2, count: 2, inPlace: true }));
    // gpu 0: out[0] = in[0] ⊕ received (gpu 1's chunk 0): [0+1]; chunk 1 is gpu 1's to finish.
    expect(text).toMatch(/out\[0\]\s+\[0\+1\]\s+\[1\]/);
  });

  it("where the producer's reading (srcoff = the sender's chunk) differs, the executor's result is what the checker sees", () => {
    // msccl-tools would write srcoff = the sender's index (1 on gpu 0's side) meaning 'reduce into
    // dst'; the executor reduces with the local chunk 1, so out[0] gets gpu 0's element 1.
    const imp = importMsccl(
      two(
        '<step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>',
      ),
    );
    expect(() => proveImported(imp, "rrc")).toThrow(/rank 0: output\[0\] holds .*rank 0's element 1 does not belong/);
  });
});
