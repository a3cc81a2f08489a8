/**
 * Broken MSCCL XML files, one kind of breakage each, made by editing a good program that
 * msccl-tools emitted (a 4-GPU ring all-gather, out of place, whose ring threadblocks wait on a
 * local copy): every one is rejected with an AlgorithmFileError that names the file and the gpu,
 * threadblock and step at fault (and the good program itself passes, so each test fails for the
 * breakage and nothing else).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { proveImported } from "../src/cli/msccl.js";
import { AlgorithmFileError } from "../src/core/errors.js";
import { importMsccl } from "../src/msccl/import.js";

const GOOD = readFileSync(new URL("./fixtures/msccl/xml/allgather_ring_4_1ch_oop.xml", import.meta.url), "utf8");

/** The good program with one step's line (or the gpu's / tb's opening line when step is omitted) rewritten. */
function edit(gpu: number, tb: number | undefined, step: number | undefined, f: (line: string) => string): string {
  const lines = GOOD.split("\n");
  let g = -1;
  let t = -1;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    const gm = /<gpu id="(\d+)"/.exec(l);
    if (gm) g = Number(gm[1]);
    const tm = /<tb id="(\d+)"/.exec(l);
    if (tm) t = Number(tm[1]);
    const sm = /<step s="(\d+)"/.exec(l);
    const hit =
      g === gpu &&
      (tb === undefined
        ? gm !== null
        : t === tb && (step === undefined ? tm !== null : sm !== null && Number(sm[1]) === step));
    if (hit) {
      lines[i] = f(l);
      return lines.join("\n");
    }
  }
  throw new Error(`no gpu ${gpu} tb ${tb} step ${step} in the fixture`);
}

/** Imports and proves a file; returns the error message it is rejected with. */
function rejection(xml: string): string {
  try {
    proveImported(importMsccl(xml, { file: "broken.xml" }), "broken.xml");
  } catch (e) {
    expect(e).toBeInstanceOf(AlgorithmFileError);
    return (e as Error).message;
  }
  throw new Error("the broken file was accepted");
}

describe("broken MSCCL files", () => {
  it("the good program they are made from passes", () => {
    expect(proveImported(importMsccl(GOOD, { file: "good.xml" }), "good.xml")).toBe(8);
  });

  it("1. malformed XML: the line and column", () => {
    const m = rejection(
      GOOD.replace('<tb id="1" send="2" recv="0" chan="0">', '<tb id="1" send="2" recv="0" chan="0"'),
    );
    expect(m).toMatch(/^broken\.xml: line \d+, column \d+: malformed XML/);
  });

  it("2. a missing attribute", () => {
    expect(rejection(edit(2, 1, 3, (l) => l.replace(' cnt="1"', "")))).toBe(
      "broken.xml: gpu 2 tb 1 step 3 (r): missing attribute 'cnt'",
    );
  });

  it("3. a step type the executor does not know", () => {
    expect(rejection(edit(1, 1, 2, (l) => l.replace('type="rcs"', 'type="rrx"')))).toMatch(
      /^broken\.xml: gpu 1 tb 1 step 2: type="rrx": expected one of s, r, rcs/,
    );
  });

  it("4. an offset past the buffer", () => {
    expect(rejection(edit(3, 1, 0, (l) => l.replace('srcoff="3"', 'srcoff="4"')))).toBe(
      'broken.xml: gpu 3 tb 1 step 0 (s): srcoff="4" cnt="1" reaches past srcbuf="o" (output: o_chunks="4" on this GPU)',
    );
  });

  it("5. a send with no matching receive on that channel", () => {
    // gpu 1 no longer receives its last chunk from gpu 0.
    const m = rejection(edit(1, 1, 3, () => ""));
    expect(m).toMatch(
      /^broken\.xml: gpu 0 tb 1 step 2 \(rcs\): sends to gpu 1 on channel 0 \(its 3rd message there\), but gpu 1 tb 1, which receives from gpu 0 on channel 0, has only 2 receive\(s\): no receive matches it$/,
    );
  });

  it("6. a send and its receive that disagree on the count", () => {
    const m = rejection(edit(2, 1, 0, (l) => l.replace('srcoff="2"', 'srcoff="1"').replace('cnt="1"', 'cnt="2"')));
    expect(m).toMatch(
      /^broken\.xml: gpu 2 tb 1 step 0 \(s\): sends 2 chunk\(s\) to gpu 3 on channel 0, but the receive it pairs with .*gpu 3 tb 1 step 1 \(rcs\), takes 1$/,
    );
  });

  it("7. a dependency on a threadblock or step that does not exist", () => {
    expect(rejection(edit(0, 1, 0, (l) => l.replace('depid="0"', 'depid="5"')))).toBe(
      "broken.xml: gpu 0 tb 1 step 0 (s): depends on tb 5 step 0, but gpu 0 has no threadblock 5",
    );
    expect(rejection(edit(0, 1, 0, (l) => l.replace('deps="0"', 'deps="3"')))).toBe(
      "broken.xml: gpu 0 tb 1 step 0 (s): depends on tb 0 step 3, but tb 0 has only 1 steps",
    );
  });

  it("8. a dependency on a step that never sets its flag (hasdep=0): it would wait forever", () => {
    expect(rejection(edit(2, 0, 0, (l) => l.replace('hasdep="1"', 'hasdep="0"')))).toMatch(
      /^broken\.xml: gpu 2 tb 1 step 0 \(s\): depends on tb 0 step 0, but no step of tb 0 from 0 on has hasdep="1": .* wait forever$/,
    );
  });

  it("9. a deadlock: two GPUs that both wait to receive first, the cycle named", () => {
    // gpu 1 receives chunk 0 before it sends its own, so gpu 2 (which waits for gpu 1's own
    // chunk first) and so on round the ring... here made a two-GPU cycle: gpu 0 also waits.
    const swapped = (xml: string, gpu: number, recvLine: RegExp) => {
      const lines = xml.split("\n");
      let g = -1;
      for (let i = 0; i < lines.length; i++) {
        const gm = /<gpu id="(\d+)"/.exec(lines[i] as string);
        if (gm) g = Number(gm[1]);
        if (g === gpu && /<tb id="1"/.test(lines[i] as string)) {
          // Move the first step (s) after the second (rcs) and renumber.
          const a = (lines[i + 1] as string).replace('s="0"', 's="1"');
          const b = (lines[i + 2] as string).replace('s="1"', 's="0"');
          expect(b).toMatch(recvLine);
          lines[i + 1] = b.replace('depid="-1" deps="-1"', 'depid="0" deps="0"');
          lines[i + 2] = a.replace('depid="0" deps="0"', 'depid="-1" deps="-1"');
          return lines.join("\n");
        }
      }
      throw new Error("not found");
    };
    let xml = GOOD;
    for (const g of [0, 1, 2, 3]) xml = swapped(xml, g, /type="rcs"/);
    const m = rejection(xml);
    expect(m).toMatch(/^broken\.xml: gpu \d+: deadlock: these steps wait for each other in a cycle/);
    expect(m).toMatch(/gpu \d+ tb 1 step 0 \(rcs\) receives 1 chunk\(s\) from gpu \d+ on channel 0/);
  });

  it("10. a race: a read-after-write across threadblocks with no dependency", () => {
    // The ring's first send reads the chunk the local copy writes; drop the dependency on it.
    expect(rejection(edit(1, 1, 0, (l) => l.replace('depid="0" deps="0"', 'depid="-1" deps="-1"')))).toBe(
      "broken.xml: gpu 1: race: gpu 1 tb 0 step 0 (cpy) writes o[1] and gpu 1 tb 1 step 0 (s) reads it, and no dependency orders them (depid/deps, directly or through other steps and messages)",
    );
  });

  it("11. a result that is not the collective: the checker's counterexample", () => {
    // gpu 2 stores the chunk it forwards from gpu 1 at o[3] instead of o[1] (and o[3] is then
    // overwritten by the chunk that belongs there): o[1] is never written.
    const m = rejection(edit(2, 1, 1, (l) => l.replace('dstoff="1"', 'dstoff="3"')));
    expect(m).toMatch(/^broken\.xml: the program is not allgather \(checker's counterexample/);
    expect(m).toMatch(/rank 2: output\[1\] was never written; it should hold \[1\]/);
  });

  it("12. threadblock and GPU structure the executor rejects", () => {
    expect(rejection(edit(0, 1, undefined, (l) => l.replace('send="1"', 'send="0"')))).toBe(
      'broken.xml: gpu 0 tb 1: send="0" recv="3": a threadblock\'s peers must be other GPUs',
    );
    expect(rejection(edit(0, 1, undefined, (l) => l.replace('<tb id="1"', '<tb id="2"')))).toBe(
      "broken.xml: gpu 0 tb 1: is missing: threadblock ids must run 0, 1, 2, ... without gaps (the executor's rule)",
    );
    expect(rejection(edit(0, 1, undefined, (l) => l.replace('chan="0"', 'chan="1"')))).toBe(
      'broken.xml: gpu 0 tb 1: chan="1" but the algorithm has nchannels="1"',
    );
    expect(rejection(edit(1, undefined, undefined, (l) => l.replace('i_chunks="1"', 'i_chunks="2"')))).toBe(
      'broken.xml: gpu 1: i_chunks="2" but allgather\'s input holds 1 chunks here (nchunksperloop="4")',
    );
    expect(rejection(GOOD.replace('coll="allgather"', 'coll="custom"'))).toMatch(
      /^broken\.xml: <algo>: coll="custom" is not a collective cclab knows/,
    );
  });
});
