/**
 * The native addon: it loads (or says why for every candidate), its host reductions equal the
 * TypeScript reference bit for bit for every dtype and op, and engine errors become EngineError.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DTYPES,
  type DType,
  dtypeInfo,
  float32ToBFloat16Bits,
  float32ToFloat16Bits,
  type TypedArray,
} from "../src/core/dtype.js";
import { EngineError } from "../src/core/errors.js";
import { type Combine, reduceArrays, scaleArrays } from "../src/core/op.js";
import { loadNative, nativeCandidates, toEngineError, tryLoad } from "../src/native/load.js";
import { reduceHost, scaleHost } from "../src/native/reduce.js";

const load = loadNative();
if (!load.ok) console.warn(`native tests skipped: ${load.reason}`);
const addon = load.ok ? load.addon : undefined;

const COMBINES: readonly Combine[] = ["sum", "prod", "min", "max", "band", "bor", "bxor"];
const combinesFor = (dtype: DType) =>
  COMBINES.filter((c) => dtypeInfo(dtype).kind === "int" || !["band", "bor", "bxor"].includes(c));

/** The n elements of `dtype` stored in `bytes` (any bit pattern: NaN, infinities, subnormals). */
const arrayOf = (dtype: DType, n: number, bytes: Uint8Array): TypedArray => {
  const copy = new Uint8Array(n * dtypeInfo(dtype).bytes);
  copy.set(bytes.subarray(0, copy.length));
  return new (dtypeInfo(dtype).array as unknown as new (b: ArrayBuffer) => TypedArray)(copy.buffer);
};

/** Integers: any bits. Floats: mostly ordinary values with the odd special one, so arithmetic is exercised. */
const valuesFor = (dtype: DType, n: number) => {
  const inf = dtypeInfo(dtype);
  if (inf.kind === "int") return fc.uint8Array({ minLength: n * inf.bytes, maxLength: n * inf.bytes });
  const special = [
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    0,
    1e-40,
    6e-8,
    65504,
    70000,
    3.4e38,
  ];
  return fc
    .array(
      fc.oneof(
        { weight: 8, arbitrary: fc.double({ min: -1000, max: 1000, noNaN: true }) },
        { weight: 2, arbitrary: fc.double() },
        { weight: 1, arbitrary: fc.constantFrom(...special) },
      ),
      { minLength: n, maxLength: n },
    )
    .map((vs) => {
      const a = new inf.array(n);
      for (let i = 0; i < n; i++) {
        const v = vs[i]!;
        if (dtype === "float16") (a as Uint16Array)[i] = float32ToFloat16Bits(v);
        else if (dtype === "bfloat16") (a as Uint16Array)[i] = float32ToBFloat16Bits(v);
        else (a as Float64Array)[i] = v;
      }
      return new Uint8Array(a.buffer);
    });
};

const bytesOf = (a: TypedArray) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const clone = (a: TypedArray): TypedArray => a.slice() as TypedArray;

describe("native addon loader", () => {
  it("tries every candidate and reports each reason", () => {
    const junk = join(tmpdir(), `cclab-not-an-addon-${process.pid}.node`);
    writeFileSync(junk, "not a shared library");
    const r = tryLoad(["/nonexistent/cclab.node", junk]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.tried.map((t) => t.path)).toEqual(["/nonexistent/cclab.node", junk]);
    expect(r.tried[0]!.reason).toBe("not found");
    expect(r.tried[1]!.reason).not.toBe("not found");
    expect(r.reason).toContain("/nonexistent/cclab.node: not found");
    expect(r.reason).toContain("npm run build:native");
  });

  it("looks at $CCLAB_NATIVE first, then build/Release and build/Debug", () => {
    const before = process.env.CCLAB_NATIVE;
    process.env.CCLAB_NATIVE = "/some/where/cclab.node";
    try {
      const c = nativeCandidates();
      expect(c[0]).toBe("/some/where/cclab.node");
      expect(c.slice(1).map((p) => p.split(/[\\/]/).slice(-3).join("/"))).toEqual([
        "build/Release/cclab.node",
        "build/Debug/cclab.node",
      ]);
    } finally {
      if (before === undefined) delete process.env.CCLAB_NATIVE;
      else process.env.CCLAB_NATIVE = before;
    }
  });

  it.skipIf(!addon)("reports which engines were compiled in", () => {
    const e = addon!.engines();
    expect(typeof e.mpi).toBe("boolean");
    expect(e.nccl).toBe(false);
    expect(e.mpi).toBe(addon!.mpi !== undefined);
    if (e.mpi) expect(e.mpiVersion).toMatch(/MPI/);
  });
});

describe("engine errors", () => {
  it("map to EngineError carrying engine, code and the engine's message", () => {
    const raw = Object.assign(new Error("MPI_Isend: mpi error 6: MPI_ERR_RANK: invalid rank"), {
      engine: "mpi",
      code: 6,
      engineMessage: "MPI_ERR_RANK: invalid rank",
      context: "MPI_Isend",
    });
    const e = toEngineError(raw, "rank 0: send to peer 9");
    expect(e).toBeInstanceOf(EngineError);
    const ee = e as EngineError;
    expect(ee.engine).toBe("mpi");
    expect(ee.code).toBe(6);
    expect(ee.engineMessage).toBe("MPI_ERR_RANK: invalid rank");
    expect(ee.message).toBe("rank 0: send to peer 9: MPI_Isend: mpi error 6: MPI_ERR_RANK: invalid rank");
    const plain = new TypeError("x");
    expect(toEngineError(plain)).toBe(plain);
  });

  it.skipIf(!addon)("argument errors from the addon are TypeErrors/RangeErrors, not crashes", () => {
    const a = new Float32Array(4);
    expect(() => addon!.reduce("float32", "band", a, 0, a, 0, 4)).toThrow(/bitwise/);
    expect(() => addon!.reduce("float32", "sum", a, 2, a, 0, 4)).toThrow(RangeError);
    expect(() => addon!.reduce("nope" as DType, "sum", a, 0, a, 0, 1)).toThrow(/unknown dtype/);
  });
});

describe.skipIf(!addon)("native reductions equal the TypeScript reference", () => {
  for (const dtype of DTYPES) {
    for (const combine of combinesFor(dtype)) {
      it(`${dtype} ${combine}`, () => {
        fc.assert(
          fc.property(
            fc
              .integer({ min: 0, max: 130 })
              .chain((n) => fc.tuple(fc.constant(n), valuesFor(dtype, n), valuesFor(dtype, n))),
            ([n, db, sb]) => {
              const dst = arrayOf(dtype, n, db);
              const src = arrayOf(dtype, n, sb);
              const ts = clone(dst);
              const nat = clone(dst);
              reduceArrays(dtype, combine, ts, 0, src, 0, n);
              addon!.reduce(dtype, combine, nat, 0, src, 0, n);
              expect(bytesOf(nat)).toEqual(bytesOf(ts));
              const via = clone(dst);
              reduceHost(dtype, combine, via, 0, src, 0, n);
              expect(bytesOf(via)).toEqual(bytesOf(ts));
            },
          ),
          { numRuns: 25 },
        );
      });
    }
    it(`${dtype} scale (avg's division, premulsum's multiplication)`, () => {
      const mulArb = dtypeInfo(dtype).bigint
        ? fc.integer({ min: -1000, max: 1000 })
        : fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }));
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 130 }).chain((n) => fc.tuple(fc.constant(n), valuesFor(dtype, n))),
          mulArb,
          fc.integer({ min: 1, max: 64 }),
          ([n, sb], mul, div) => {
            const src = arrayOf(dtype, n, sb);
            const ts = new (dtypeInfo(dtype).array)(n);
            const nat = new (dtypeInfo(dtype).array)(n);
            scaleArrays(dtype, ts, 0, src, 0, n, mul, div);
            addon!.scale(dtype, nat, 0, src, 0, n, mul, div);
            expect(bytesOf(nat)).toEqual(bytesOf(ts));
            const via = new (dtypeInfo(dtype).array)(n);
            scaleHost(dtype, via, 0, src, 0, n, mul, div);
            expect(bytesOf(via)).toEqual(bytesOf(ts));
          },
        ),
        { numRuns: 25 },
      );
    });
  }

  it.each(DTYPES)("%s: dst = a op src in one pass equals copying a then reducing (NCCL's reduceCopy)", (dtype) => {
    const combine = combinesFor(dtype)[0] as Combine;
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: 130 })
          .chain((n) => fc.tuple(fc.constant(n), valuesFor(dtype, n), valuesFor(dtype, n))),
        ([n, ab, sb]) => {
          const a = arrayOf(dtype, n, ab);
          const src = arrayOf(dtype, n, sb);
          const want = clone(a);
          reduceArrays(dtype, combine, want, 0, src, 0, n);
          const nat = new (dtypeInfo(dtype).array)(n + 3);
          addon!.reduce(dtype, combine, nat, 3, src, 0, n, a, 0);
          expect(bytesOf(nat.subarray(3) as TypedArray)).toEqual(bytesOf(want));
          expect(bytesOf(a)).toEqual(bytesOf(arrayOf(dtype, n, ab)));
          // dst may be src itself: dst = a op dst.
          const inSrc = clone(src);
          addon!.reduce(dtype, combine, inSrc, 0, inSrc, 0, n, a, 0);
          expect(bytesOf(inSrc)).toEqual(bytesOf(want));
          const via = new (dtypeInfo(dtype).array)(n);
          reduceHost(dtype, combine, via, 0, src, 0, n, a, 0);
          expect(bytesOf(via)).toEqual(bytesOf(want));
        },
      ),
      { numRuns: 20 },
    );
  });

  it("refuses a dst that partly overlaps a third operand", () => {
    const d = new Float32Array(8);
    expect(() => addon!.reduce("float32", "sum", d, 0, new Float32Array(4), 0, 4, d, 2)).toThrow(/partly overlaps/);
  });

  it("handles offsets and dst aliasing src", () => {
    const d = new Int32Array([1, 2, 3, 4, 5, 6]);
    addon!.reduce("int32", "sum", d, 2, d, 0, 4); // overlapping, element by element in order
    const t = new Int32Array([1, 2, 3, 4, 5, 6]);
    reduceArrays("int32", "sum", t, 2, t, 0, 4);
    expect([...d]).toEqual([...t]);
  });
});
