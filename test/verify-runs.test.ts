/**
 * The proof's symbolic memory in runs (src/schedule/runs.ts): a memory is a list of runs whose
 * value is affine in the element index, split where the plan's written regions fall (the cuts it
 * starts with) and where a write's boundaries and pieces fall, merged where one value continues
 * across runs within a write.
 *   - Runs against one cell per element: after any sequence of writes (of values, of nothing,
 *     of what another region of the memory holds), every element holds what the cells hold.
 *   - Reductions against one cell per element: joining two regions (each a patchwork of runs)
 *     gives, element for element, the cells' join: the same contributions, the same element
 *     index, and wrong exactly where a rank is held twice or the indices differ; a region with
 *     an unwritten element is refused.
 *   - Memory: the proof of an all-gather at 512 ranks and count n + 3 (n² elements a rank, n³
 *     cells in all as cells) fits a 512 MiB heap, in a child process of its own.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ring } from "../algorithms/allreduce/ring.js";
import { compileAll } from "../src/schedule/check.js";
import { type Algorithm, copy, recv, reduce, send, step, sub } from "../src/schedule/dsl.js";
import { flatPlan } from "../src/schedule/flat.js";
import { flattenAt, joinPieces, Pieces, RunMem, RunMemory, type RunVal } from "../src/schedule/runs.js";
import { makeCall } from "../src/specs/index.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const L = 40;

/** Leaves: value v's element k is contribution 100·v + k. */
const leaves: RunVal[] = [0, 1, 2].map((v) => ({
  id: 100 * v,
  a: null,
  ao: 0,
  b: null,
  bo: 0,
  idx: 0,
  ranks: [v, v + 1],
}));

/** What element `at` of the runs holds, flattened (null where unwritten). */
function holds(mem: RunMem, at: number): number | null {
  const i = mem.find(at);
  const cell = flattenAt(mem.val[i] as RunVal | null, (mem.off[i] as number) + at - (mem.start[i] as number), 100);
  return cell === null ? null : (cell[0] as number);
}

const write = fc.record({
  from: fc.nat(L - 1),
  count: fc.nat(L),
  /** Pieces: a leaf from an offset (0..2), nothing (3), or a copy of another region (4). */
  pieces: fc.array(fc.record({ what: fc.nat(4), off: fc.nat(20), len: fc.integer({ min: 1, max: 8 }) }), {
    minLength: 1,
    maxLength: 4,
  }),
  copyFrom: fc.nat(L - 1),
});

describe("symbolic memory in runs", () => {
  it("holds, element for element, what one cell per element holds after any writes", () => {
    // Cuts as the plan's regions give them: sorted, with repeats, 0 and L among them.
    const cuts = fc.array(fc.nat(L), { maxLength: 12 }).map((c) => Int32Array.from(c).sort());
    fc.assert(
      fc.property(fc.array(write, { maxLength: 30 }), cuts, (writes, cut) => {
        const mem = new RunMem(L, cut);
        const cells: (number | null)[] = new Array(L).fill(null);
        for (const w of writes) {
          const count = Math.min(w.count, L - w.from);
          const p = new Pieces();
          const want: (number | null)[] = [];
          for (const q of w.pieces) {
            const len = Math.min(q.len, count - want.length);
            if (len <= 0) break;
            if (q.what === 4) {
              const from = Math.min(w.copyFrom, L - len);
              mem.read(from, len, p);
              for (let k = 0; k < len; k++) want.push(cells[from + k] as number | null);
            } else {
              p.push(len, q.what === 3 ? null : (leaves[q.what] as RunVal), q.off);
              for (let k = 0; k < len; k++) want.push(q.what === 3 ? null : 100 * q.what + q.off + k);
            }
          }
          // The pieces cover what they cover: write that much.
          mem.write(w.from, want.length, p);
          for (let k = 0; k < want.length; k++) cells[w.from + k] = want[k] as number | null;
          // Runs start at 0, in order, none empty (none starts at the end).
          expect(mem.start[0]).toBe(0);
          for (let i = 1; i < mem.start.length; i++) {
            expect(mem.start[i]).toBeGreaterThan(mem.start[i - 1] as number);
          }
          expect(mem.start[mem.start.length - 1]).toBeLessThan(L);
          for (let at = 0; at < L; at++) expect(holds(mem, at)).toBe(cells[at]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("reduces, element for element, as one cell per element does: contributions, index, and what is wrong", () => {
    /** One cell: its contributions (rank r's element i is 100·r + i), its index (null: wrong), its ranks. */
    interface Cell {
      readonly contribs: number[];
      readonly index: number | null;
      readonly ranks: number[];
    }
    const leafCell = (rank: number, i: number): Cell => ({ contribs: [100 * rank + i], index: i, ranks: [rank] });
    const join = (x: Cell, y: Cell): Cell => {
      const ok = x.index !== null && x.index === y.index && !x.ranks.some((r) => y.ranks.includes(r));
      return {
        contribs: [...x.contribs, ...y.contribs],
        index: ok ? x.index : null,
        ranks: ok ? [...x.ranks, ...y.ranks].sort((a, b) => a - b) : [],
      };
    };
    /** Ranks from sorted intervals [lo, hi, ...]. */
    const expand = (iv: readonly number[]) => {
      const out: number[] = [];
      for (let k = 0; k < iv.length; k += 2) for (let r = iv[k] as number; r < (iv[k + 1] as number); r++) out.push(r);
      return out;
    };
    /** A region of L elements as runs of leaves (a rank, at an offset) or nothing (-1). */
    const region = fc.array(
      fc.record({ rank: fc.integer({ min: -1, max: 3 }), off: fc.nat(6), len: fc.integer({ min: 1, max: 5 }) }),
      {
        minLength: 1,
        maxLength: 6,
      },
    );
    const leafOf = (rank: number): RunVal => ({
      id: 100 * rank,
      a: null,
      ao: 0,
      b: null,
      bo: 0,
      idx: 0,
      ranks: [rank, rank + 1],
    });
    /** The region as Pieces of at most `n` elements, and as cells. */
    const build = (runs: { rank: number; off: number; len: number }[], n: number) => {
      const p = new Pieces();
      const cells: (Cell | null)[] = [];
      for (const r of runs) {
        const len = Math.min(r.len, n - cells.length);
        if (len <= 0) break;
        p.push(len, r.rank < 0 ? null : leafOf(r.rank), r.off);
        for (let k = 0; k < len; k++) cells.push(r.rank < 0 ? null : leafCell(r.rank, r.off + k));
      }
      return { p, cells };
    };
    fc.assert(
      fc.property(region, region, region, (a, b, c) => {
        // Two operands of one length (the shorter's), and a third joined onto their join.
        const n = Math.min(...[a, b].map((r) => r.reduce((s, x) => s + x.len, 0)));
        const x = build(a, n);
        const y = build(b, n);
        const z = build(c, n);
        const xy = new Pieces();
        const unwritten = x.cells.includes(null) || y.cells.includes(null);
        expect(joinPieces(x.p, y.p, xy)).toBe(!unwritten);
        if (unwritten) return;
        const want1 = x.cells.map((cx, k) => join(cx as Cell, y.cells[k] as Cell));
        const check = (got: Pieces, want: Cell[]) => {
          let k = 0;
          for (let i = 0; i < got.size; i++) {
            for (let e = 0; e < (got.len[i] as number); e++, k++) {
              const v = got.val[i] as RunVal;
              const o = (got.off[i] as number) + e;
              const w = want[k] as Cell;
              expect([...(flattenAt(v, o, 100) as number[])].sort((p, q) => p - q)).toEqual(
                [...w.contribs].sort((p, q) => p - q),
              );
              expect(v.idx < 0 ? null : v.idx + o).toBe(w.index);
              expect(v.idx < 0 ? [] : expand(v.ranks)).toEqual(w.ranks);
            }
          }
          expect(k).toBe(want.length);
        };
        check(xy, want1);
        // Joined again: a join's index and ranks carry on (a rank held twice, or indices mixed, stay wrong).
        if (z.cells.length < n || z.cells.includes(null)) return;
        const xyz = new Pieces();
        expect(joinPieces(xy, z.p, xyz)).toBe(true);
        check(
          xyz,
          want1.map((w, k) => join(w, z.cells[k] as Cell)),
        );
      }),
      { numRuns: 500 },
    );
  });

  it("a value that holds a contribution twice stays wrong when joined again, whatever the offsets", () => {
    const one = (v: RunVal, off: number) => {
      const p = new Pieces();
      p.push(1, v, off);
      return p;
    };
    const twice = new Pieces();
    expect(joinPieces(one(leaves[0] as RunVal, 0), one(leaves[0] as RunVal, 0), twice)).toBe(true);
    const bad = twice.val[0] as RunVal;
    expect(bad.idx).toBe(-1);
    // Seen at offset 1, the wrong value's index (-1) + 1 matches the leaf's 0 + 0: still wrong,
    // on either side of the join.
    for (const [x, y] of [
      [one(leaves[1] as RunVal, 0), one(bad, 1)],
      [one(bad, 1), one(leaves[1] as RunVal, 0)],
    ] as const) {
      const out = new Pieces();
      expect(joinPieces(x, y, out)).toBe(true);
      expect((out.val[0] as RunVal).idx).toBe(-1);
      expect((out.val[0] as RunVal).ranks).toEqual([]);
    }
  });

  it("a rank's memories start split where its plan writes, and only there", () => {
    // Two ranks, four elements: rank r receives into scratch[0:2], copies its input to its
    // output and reduces into out[3] and then out[1:3] (cuts given out of order), then sends
    // scratch[1:3], receiving into scratch[2:4]. Reads (sends, sources) split nothing.
    const alg: Algorithm = {
      ...ring,
      name: "cuts",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        const got = mem.scratch(4);
        yield step("swap", [send(peer, sub(mem.input, 0, 2)), recv(peer, sub(got, 0, 2))]);
        const sum = [
          copy(mem.output, mem.input),
          reduce(sub(mem.output, 3, 1), sub(got, 1, 1)),
          reduce(sub(mem.output, 1, 2), sub(got, 0, 2)),
        ];
        yield step("sum", [], sum);
        yield step("pass", [send(peer, sub(got, 1, 2)), recv(peer, sub(got, 2, 2))]);
      },
    };
    const call = makeCall({ collective: "allreduce", size: 2, count: 4, segment: 1 });
    const flats = compileAll(alg, call).map((p) => flatPlan(p));
    const none = () => {
      throw new Error("no message expected");
    };
    const [input, output, scratch] = new RunMemory(flats, 4, none, none).mem[0] as RunMem[];
    expect(input?.start).toEqual([0]);
    expect(output?.start).toEqual([0, 1, 3]);
    expect(scratch?.start).toEqual([0, 2]);
    expect([input?.length, output?.length, scratch?.length]).toEqual([4, 4, 4]);
    // The input holds the rank's contributions, the rest nothing yet.
    expect(input?.val).toEqual([expect.objectContaining({ id: 0, idx: 0, ranks: [0, 1] })]);
    expect(output?.val).toEqual([null, null, null]);
  });

  it("a memory of no elements has no runs", () => {
    expect(new RunMem(0).start).toEqual([]);
    expect(new RunMem(0, [0, 0]).start).toEqual([]);
  });

  it("reads a region back as the pieces that were written, split where runs end", () => {
    const mem = new RunMem(10);
    const p = new Pieces();
    p.push(4, leaves[1] as RunVal, 2);
    p.push(3, leaves[2] as RunVal, 0);
    mem.write(2, 7, p);
    const got = new Pieces();
    mem.read(0, 10, got);
    expect(got.size).toBe(4);
    expect(got.len.slice(0, 4)).toEqual([2, 4, 3, 1]);
    expect(got.val.slice(0, 4)).toEqual([null, leaves[1], leaves[2], null]);
    expect(got.off.slice(1, 3)).toEqual([2, 0]);
    // A memory split where a plan's regions fall: a write over whole runs changes them in place,
    // and one value continued across runs within a write is one run (the run after it stays).
    const cut = new RunMem(10, [0, 3, 3, 6, 10]);
    const part = new Pieces();
    part.push(3, leaves[0] as RunVal, 1);
    part.push(3, leaves[1] as RunVal, 0);
    cut.write(0, 6, part);
    expect(cut.start).toEqual([0, 3, 6]);
    expect(cut.off).toEqual([1, 0, 0]);
    const whole = new Pieces();
    whole.push(6, leaves[0] as RunVal, 1);
    cut.write(0, 6, whole);
    expect(cut.start).toEqual([0, 6]);
    expect(cut.off).toEqual([1, 0]);
  });

  it("a read or write outside the memory is an invariant failure naming the range, not a silent wrong answer", () => {
    const mem = new RunMem(10);
    const p = new Pieces();
    expect(() => mem.read(8, 4, p)).toThrow(/read \[8, 12\) of 10/);
    expect(() => mem.read(-1, 2, p)).toThrow(/read \[-1, 1\) of 10/);
    p.push(4, leaves[0] as RunVal, 0);
    expect(() => mem.write(7, 4, p)).toThrow(/write \[7, 11\) of 10/);
    expect(() => mem.write(-2, 4, p)).toThrow(/write \[-2, 2\) of 10/);
    // The edges themselves are inside.
    mem.write(6, 4, p);
    const back = new Pieces();
    mem.read(6, 4, back);
    expect(back.size).toBe(1);
  });

  it("proves an all-gather at 512 ranks and count n + 3 within a 512 MiB heap", { timeout: 600_000 }, () => {
    const r = spawnSync(
      process.execPath,
      [
        "--max-old-space-size=512",
        "--import",
        "tsx",
        "test/perf/verify-scale.ts",
        "--one",
        "allgather/ring",
        "512",
        "one",
      ],
      { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 24 },
    );
    expect(r.stderr).not.toMatch(/heap out of memory/);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as { cases: number; error: string };
    expect(out).toEqual(expect.objectContaining({ cases: 1, error: "" }));
  });
});
