/**
 * Where the ring reduce-scatter receives (algorithms/lib/ring.ts): out of place a chunk arrives
 * where its sum goes, so the schedules built on it need no receive buffer; in place the output is
 * the input, so they receive into scratch. Their results are the checker's (algorithms.check);
 * this holds the buffers each allocates, per rank, across world sizes, counts and roots, and the
 * routines' refusal of a chunk list that is not one chunk per rank. (Receiving over the rank's own
 * contribution, "acc" in place, is the checker's to find: at schedule time a scaled input's
 * scratch copy and the schedule's own scratch share the buffer name, so regions cannot tell.)
 */
import { describe, expect, it } from "vitest";
import { ringAllGather, ringReduceScatter } from "../algorithms/lib/ring.js";
import { compileAll } from "../src/schedule/check.js";
import { chunkOf, partition, type Region } from "../src/schedule/dsl.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { type Collective, makeCall } from "../src/specs/index.js";

const SIZES = [2, 3, 4, 5, 8, 13];
const COUNTS = [1, 7, 64, 1000];
const SEGMENT = 4;

/** Scratch elements of every rank's plan. */
function scratch(collective: Collective, name: string, size: number, count: number, inPlace: boolean, root = 0) {
  const alg = findAlgorithm(collective, name, { op: "ring-buffers.test" });
  return compileAll(alg, makeCall({ collective, size, count, inPlace, segment: SEGMENT, root }, alg)).map(
    (p) => p.scratch,
  );
}

const chunk0 = (count: number, size: number) => Math.ceil(count / size);

describe("ring reduce-scatter: receive buffers out of place and in place", () => {
  it("allreduce/ring: none out of place; one chunk in place", () => {
    for (const n of SIZES) {
      for (const count of COUNTS) {
        expect(scratch("allreduce", "ring", n, count, false), `n=${n} count=${count}`).toEqual(Array(n).fill(0));
        expect(scratch("allreduce", "ring", n, count, true), `n=${n} count=${count}`).toEqual(
          Array(n).fill(chunk0(count, n)),
        );
      }
    }
  });
  it("allreduce/segmented_ring: none out of place; two segments in place", () => {
    for (const n of SIZES) {
      for (const count of COUNTS) {
        const slot = Math.min(SEGMENT, chunk0(count, n));
        expect(scratch("allreduce", "segmented_ring", n, count, false), `n=${n} count=${count}`).toEqual(
          Array(n).fill(0),
        );
        expect(scratch("allreduce", "segmented_ring", n, count, true), `n=${n} count=${count}`).toEqual(
          Array(n).fill(2 * slot),
        );
      }
    }
  });
  it("reducescatter/ring: two partial-sum slots out of place, and a receive chunk in place", () => {
    for (const n of SIZES) {
      for (const count of COUNTS) {
        expect(scratch("reducescatter", "ring", n, count, false), `n=${n} count=${count}`).toEqual(
          Array(n).fill(2 * count),
        );
        expect(scratch("reducescatter", "ring", n, count, true), `n=${n} count=${count}`).toEqual(
          Array(n).fill(3 * count),
        );
      }
    }
  });
  it("reduce/rabenseifner: the root receives into its output out of place, into one chunk in place", () => {
    for (const n of SIZES) {
      for (const count of COUNTS) {
        for (const root of [0, n - 1]) {
          const where = `n=${n} count=${count} root=${root}`;
          expect(scratch("reduce", "rabenseifner", n, count, false, root)[root], where).toBe(0);
          expect(scratch("reduce", "rabenseifner", n, count, true, root)[root], where).toBe(chunk0(count, n));
          // The next vrank is a leaf of the gather: it accumulates in a scratch copy of the whole
          // buffer and receives into it, in place or not, with nothing more.
          const leaf = (root + 1) % n;
          for (const inPlace of [false, true])
            expect(scratch("reduce", "rabenseifner", n, count, inPlace, root)[leaf], where).toBe(count);
        }
      }
    }
  });
  it("refuses a chunk list that is not one chunk per rank, saying how many of each", () => {
    const output: Region = { buf: "output", offset: 0, count: 8 };
    const input: Region = { buf: "input", offset: 0, count: 8 };
    const chunks = partition(8, 2);
    const acc = (_k: number, j: number) => chunkOf(output, chunks[j]!);
    expect(() => [...ringReduceScatter(0, 3, { chunks, input, acc, tmp: "acc" })]).toThrow(
      "ringReduceScatter: 2 chunks for 3 ranks",
    );
    expect(() => [...ringAllGather(0, 3, output, chunks)]).toThrow("ringAllGather: 2 chunks for 3 ranks");
  });
});
