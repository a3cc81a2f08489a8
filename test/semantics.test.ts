/**
 * docs/semantics.md, rule by rule: each describe names the rules it holds. The element rules on
 * the TypeScript reference (src/core/op.ts) and the native kernels (native/ops.h through the
 * addon) with hand-written bits; the rules on whole calls through the public API on the sim
 * backend and, under mpirun, on the mpi backend (test/support/semantics-cases.ts, one table for
 * both); I1 on the MPI differential test; and A3, every rank of every all-reduce ending with the
 * same bytes, on arbitrary floats where the oracle cannot say what the sum is.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mpirunCommand } from "../src/backends/mpi/index.js";
import { allReduce } from "../src/collectives/api.js";
import type { Comm } from "../src/comm.js";
import { view, zeros } from "../src/core/buffer.js";
import { DTYPES, type DType, dtypeInfo, type TypedArray } from "../src/core/dtype.js";
import { InvalidArgumentError } from "../src/core/errors.js";
import { type Combine, checkOpFitsDType, type ReduceOp, reduceArrays, scaleArrays } from "../src/core/op.js";
import { loadNative } from "../src/native/load.js";
import { algorithmsOf } from "../src/schedule/registry.js";
import { spawn } from "../src/sim/index.js";
import { builtinNotOracle } from "../src/verify/mpi-cases.js";
import type { Case } from "../src/verify/property.js";
import { mpiSkipReason } from "./support/mpi.js";
import { runFakeRanks } from "./support/nccl-fake.js";
import { bits, runSemanticsCase, type SemanticsCase, semanticsCases } from "./support/semantics-cases.js";

const load = loadNative();
const addon = load.ok ? load.addon : undefined;

/** An array of `dtype` holding the given raw bits. */
function ofBits(dtype: DType, xs: readonly bigint[]): TypedArray {
  const a = new (dtypeInfo(dtype).array)(xs.length);
  for (const [i, x] of xs.entries()) bits.set(dtype, a, i, x);
  return a;
}
const bitsOf = (dtype: DType, a: TypedArray) => Array.from({ length: a.length }, (_, i) => bits.at(dtype, a, i));

/** a (op) b elementwise, on the TypeScript reference and, where loaded, the native addon: both must give `want`. */
function expectReduce(dtype: DType, combine: Combine, a: bigint[], b: bigint[], want: bigint[]): void {
  const ts = ofBits(dtype, a);
  reduceArrays(dtype, combine, ts, 0, ofBits(dtype, b), 0, a.length);
  expect(bitsOf(dtype, ts).map(bits.hex), `TypeScript ${dtype} ${combine}`).toEqual(want.map(bits.hex));
  if (addon) {
    // 64 copies: past the vector width, so the vectorised loop is what runs
    const rep = <T>(xs: T[]) => Array.from({ length: 64 }, () => xs).flat();
    const nat = ofBits(dtype, rep(a));
    addon.reduce(dtype, combine, nat, 0, ofBits(dtype, rep(b)), 0, nat.length);
    expect(bitsOf(dtype, nat).map(bits.hex), `native ${dtype} ${combine}`).toEqual(rep(want).map(bits.hex));
  }
}
/** (x * mul) / div elementwise on both. */
function expectScale(dtype: DType, x: bigint[], mul: number, div: number, want: bigint[]): void {
  const ts = new (dtypeInfo(dtype).array)(x.length);
  scaleArrays(dtype, ts, 0, ofBits(dtype, x), 0, x.length, mul, div);
  expect(bitsOf(dtype, ts).map(bits.hex), `TypeScript ${dtype} scale ${mul}/${div}`).toEqual(want.map(bits.hex));
  if (addon) {
    const nat = new (dtypeInfo(dtype).array)(x.length);
    addon.scale(dtype, nat, 0, ofBits(dtype, x), 0, x.length, mul, div);
    expect(bitsOf(dtype, nat).map(bits.hex), `native ${dtype} scale ${mul}/${div}`).toEqual(want.map(bits.hex));
  }
}

const F32 = { one: 0x3f800000n, two: 0x40000000n, negZero: 0x80000000n, inf: 0x7f800000n, canon: 0x7fffffffn };
const F64 = { one: 0x3ff0000000000000n, negZero: 0x8000000000000000n, canon: 0x7fffffffffffffffn };

describe("element arithmetic, TypeScript and native (semantics.md I1-I3, F1-F4, A1, A2, P1)", () => {
  it("I1: integer sum and prod wrap around", () => {
    expectReduce("int8", "sum", [127n, 0x80n], [1n, 0xffn], [0x80n, 0x7fn]);
    expectReduce("uint8", "sum", [255n], [1n], [0n]);
    expectReduce("int32", "prod", [0x10000n], [0x10000n], [0n]);
    expectReduce("uint64", "sum", [0xffffffffffffffffn], [2n], [1n]);
    expectReduce("int64", "prod", [0x7fffffffffffffffn], [2n], [0xfffffffffffffffen]);
  });
  it("I2, I3: integer min/max compare signed or unsigned by type; bitwise ops are integers only", () => {
    expectReduce("int8", "min", [0xffn], [1n], [0xffn]); // -1 < 1
    expectReduce("uint8", "min", [0xffn], [1n], [1n]); // 255 > 1
    expectReduce("int64", "max", [0x8000000000000000n], [0n], [0n]);
    expectReduce("uint32", "bxor", [0xf0f0f0f0n], [0xffffffffn], [0x0f0f0f0fn]);
    expect(() => checkOpFitsDType({ name: "band" }, "float32", { rank: 3, op: "allReduce" })).toThrow(
      /rank 3: allReduce: argument 'op': reduce op 'band' is bitwise/,
    );
  });
  it("F1: float16/bfloat16 round once from float32; subnormals are kept", () => {
    expectReduce("float16", "sum", [0x3c00n], [0x1000n], [0x3c00n]); // 1 + 2^-11 rounds to even: 1
    expectReduce("float16", "sum", [0x0001n], [0x0001n], [0x0002n]); // least subnormal doubled
    expectReduce("bfloat16", "prod", [0x3f81n], [0x3f81n], [0x3f82n]); // (1+2^-7)^2 = 1 + 2^-6 + 2^-14 -> 1 + 2^-6
    expectReduce("float32", "sum", [0x00000001n], [0x00000001n], [0x00000002n]);
  });
  it("F2: every NaN an operation makes is the canonical NaN, whatever the operands' payloads and signs", () => {
    expectReduce(
      "float32",
      "sum",
      [0xffc00000n, 0x7f800001n, F32.inf],
      [0x7fc00001n, 0n, 0xff800000n],
      [F32.canon, F32.canon, F32.canon],
    );
    expectReduce("float32", "prod", [0n], [F32.inf], [F32.canon]);
    expectReduce("float64", "sum", [0xfff8000000000000n], [0x7ff0000000000001n], [F64.canon]);
    expectReduce("float16", "sum", [0xfe00n, 0x7c01n], [0x7e00n, 0x3c00n], [0x7fffn, 0x7fffn]);
    expectReduce("bfloat16", "prod", [0xffc1n], [0x3f80n], [0x7fffn]);
    expectReduce("float32", "min", [0xffc00000n], [0x7f800001n], [F32.canon]);
  });
  it("F3: min/max ignore a NaN operand and order -0 below +0, in both operand orders", () => {
    for (const [a, b] of [
      [0x7fc00000n, F32.one],
      [F32.one, 0xff800001n],
    ] as const) {
      expectReduce("float32", "min", [a], [b], [F32.one]);
      expectReduce("float32", "max", [a], [b], [F32.one]);
    }
    expectReduce("float32", "min", [0n, F32.negZero], [F32.negZero, 0n], [F32.negZero, F32.negZero]);
    expectReduce("float32", "max", [0n, F32.negZero], [F32.negZero, 0n], [0n, 0n]);
    expectReduce("float64", "min", [0n, F64.negZero], [F64.negZero, 0n], [F64.negZero, F64.negZero]);
    expectReduce("float16", "max", [0x8000n, 0x7e00n], [0n, 0xbc00n], [0n, 0xbc00n]);
    expectReduce("bfloat16", "min", [0x8000n], [0n], [0x8000n]);
  });
  it("F4: signed zeros add and multiply as IEEE 754 says", () => {
    expectReduce(
      "float32",
      "sum",
      [F32.negZero, F32.negZero, 0n],
      [F32.negZero, 0n, F32.negZero],
      [F32.negZero, 0n, 0n],
    );
    expectReduce("float32", "prod", [F32.negZero, F32.negZero], [F32.one, 0xbf800000n], [F32.negZero, 0n]);
  });
  it("A1: integer avg's division truncates toward zero, the sum wrapped first", () => {
    expectScale("int32", [0xfffffff9n], 1, 2, [0xfffffffdn]); // -7 / 2 = -3
    expectScale("int8", [0xc8n], 1, 2, [0xe4n]); // 100 + 100 wrapped to -56, / 2 = -28
    expectScale("int64", [0xfffffffffffffff9n], 1, 2, [0xfffffffffffffffdn]);
    expectScale("uint8", [0xc8n], 1, 3, [66n]);
  });
  it("A2: float avg's pre-multiplier is 1/n in float32, then in the element type (NCCL's __float2half(float(1.0/n)))", () => {
    expectScale("float16", [0x7b53n], 1 / 2, 1, [0x7753n]); // 60000 * 0.5 = 30000
    expectScale("float16", [0x3c00n], 1 / 3, 1, [0x3555n]); // half(float(1/3)) = 0x3555
    expectScale("float32", [0x3f800000n], 1 / 3, 1, [0x3eaaaaabn]);
    expectScale("float32", [0x7f800001n], 1, 1, [F32.canon]); // even * 1 makes a NaN canonical (F2)
  });
  it("P1: premulsum's scalar is taken in the element type; one that does not fit is refused", () => {
    expectScale("int32", [10n], 2.5, 1, [20n]);
    expectScale("int8", [10n], -2.9, 1, [0xecn]); // -2 * 10 = -20
    expectScale("int8", [100n], 2, 1, [0xc8n]); // 200 wraps to -56
    expectScale("uint64", [10n], 2.5, 1, [20n]);
    expectScale("float16", [0x3c00n], 0.1, 1, [0x2e66n]); // half(float(0.1))
    const site = { rank: 1, op: "allReduce", arg: "options.op" };
    expect(() => checkOpFitsDType({ name: "premulsum", scalar: -1 }, "uint8", site)).toThrow(InvalidArgumentError);
    expect(() => checkOpFitsDType({ name: "premulsum", scalar: 128 }, "int8", site)).toThrow(
      /rank 1: allReduce: argument 'options.op': premulsum's scalar 128 does not fit int8 \(it must be in -128\.\.127/,
    );
    expect(() => checkOpFitsDType({ name: "premulsum", scalar: 1e6 }, "float16", site)).toThrow(/does not fit float16/);
    expect(() => checkOpFitsDType({ name: "premulsum", scalar: 127.9 }, "int8", site)).not.toThrow();
    expect(() => checkOpFitsDType({ name: "premulsum", scalar: 1e38 }, "bfloat16", site)).not.toThrow();
  });
});

describe("A3: every op is commutative bit for bit, on every dtype, for any bits", () => {
  const COMBINES: Combine[] = ["sum", "prod", "min", "max", "band", "bor", "bxor"];
  for (const dtype of DTYPES) {
    const combines = COMBINES.filter((c) => dtypeInfo(dtype).kind === "int" || !c.startsWith("b"));
    it(dtype, () => {
      const bytes = dtypeInfo(dtype).bytes;
      const elementBits = fc.bigInt({ min: 0n, max: (1n << BigInt(8 * bytes)) - 1n });
      fc.assert(
        fc.property(fc.array(fc.tuple(elementBits, elementBits), { minLength: 1, maxLength: 80 }), (pairs) => {
          for (const c of combines) {
            const a = pairs.map((p) => p[0]);
            const b = pairs.map((p) => p[1]);
            const ab = ofBits(dtype, a);
            const ba = ofBits(dtype, b);
            reduceArrays(dtype, c, ab, 0, ofBits(dtype, b), 0, a.length);
            reduceArrays(dtype, c, ba, 0, ofBits(dtype, a), 0, a.length);
            expect(bitsOf(dtype, ab), `${dtype} ${c}`).toEqual(bitsOf(dtype, ba));
            if (addon) {
              const nat = ofBits(dtype, b);
              addon.reduce(dtype, c, nat, 0, ofBits(dtype, a), 0, a.length);
              expect(bitsOf(dtype, nat), `${dtype} ${c} native`).toEqual(bitsOf(dtype, ab));
            }
          }
        }),
        { numRuns: 60 },
      );
    });
  }
});

describe("docs/semantics.md names every rule once, and a test here holds each", () => {
  it("every rule is referenced by name in this file or its case table", () => {
    const doc = readFileSync("docs/semantics.md", "utf8");
    const rules = [...doc.matchAll(/^\*\*([A-Z]\d)\. /gm)].map((m) => m[1] as string);
    expect(rules.length).toBeGreaterThanOrEqual(14);
    expect(new Set(rules).size, "a rule name is defined twice").toBe(rules.length);
    const tests =
      readFileSync("test/semantics.test.ts", "utf8") + readFileSync("test/support/semantics-cases.ts", "utf8");
    const unreferenced = rules.filter((r) => !new RegExp(`\\b${r}\\b`).test(tests));
    expect(unreferenced).toEqual([]);
  });
});

type Ranks = <T>(n: number, fn: (comm: Comm) => Promise<T>) => Promise<T[]>;

/** Every case on `size` ranks of a backend; every rank's failure, by case name. */
async function failuresOf(cases: readonly SemanticsCase[], ranks: Ranks): Promise<string[]> {
  const failures: string[] = [];
  for (const c of cases) {
    const errs = await ranks(c.size, (comm) => runSemanticsCase(c, comm));
    for (const e of errs) if (e) failures.push(`${c.name}: ${e}`);
  }
  return failures;
}

describe("semantics.md's rules on whole calls, on the sim backend (F2, F3, F4, A2, P1, P2, M1)", () => {
  const cases = semanticsCases();
  // One test per rule, as each case's name starts: "F3: ...", "P1, P2: ..." (F2 rides on F4's sums).
  const rules = [...new Set(cases.map((c) => c.name.slice(0, c.name.indexOf(":"))))];
  it("has cases for every rule", () => {
    expect([...rules].sort()).toEqual(["A2", "F3", "F4", "M1", "P1", "P1, P2"]);
  });
  for (const rule of rules) {
    const mine = cases.filter((c) => c.name.startsWith(`${rule}: `));
    it(`${rule}: ${mine.length} cases, every rank`, async () => {
      expect(await failuresOf(mine, (n, fn) => spawn(n, fn))).toEqual([]);
    });
  }
});

describe("semantics.md's rules on whole calls, on the nccl backend's fake engine (no GPU; the same cases run on GPUs in test/gpu)", () => {
  const cases = semanticsCases();
  it(`${cases.length} cases, every rank`, async () => {
    expect(await failuresOf(cases, (n, fn) => runFakeRanks(n, fn))).toEqual([]);
  });
});

describe("A3, O1: every rank of an all-reduce ends with the same bytes, on arbitrary floats (sim)", () => {
  // The oracle cannot predict a sum of arbitrary floats (another order rounds differently, O1),
  // but every rank must still hold the same bits: an algorithm must combine in the same order on
  // every rank, or in orders that differ only by swapping operands (A3).
  const ops: ReduceOp[] = [
    { name: "sum" },
    { name: "prod" },
    { name: "min" },
    { name: "max" },
    { name: "avg" },
    { name: "premulsum", scalar: 0.3 },
  ];
  /** Whether every rank holds rank 0's bytes after one all-reduce of arbitrary bytes. */
  const agree = async (
    alg: string,
    [n, count, dtype, op, seed, valueSeed, segment]: [
      number,
      number,
      DType,
      ReduceOp,
      number,
      number,
      number | undefined,
    ],
  ): Promise<boolean> => {
    const outs = await spawn(
      n,
      async (comm) => {
        const buf = zeros(dtype, count);
        const raw = new Uint8Array(buf.data.buffer, buf.data.byteOffset, buf.data.byteLength);
        let s = (valueSeed ^ Math.imul(comm.rank + 1, 0x9e3779b1)) >>> 0;
        for (let i = 0; i < raw.length; i++) {
          s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
          raw[i] = s >>> 24;
        }
        await allReduce(comm, view(buf), { op, algorithm: alg, segment });
        return Array.from(raw).join(",");
      },
      { seed },
    );
    return outs.every((o) => o === outs[0]);
  };
  const calls = (dtypes: DType[], opsOf: ReduceOp[]) =>
    fc.tuple(
      fc.integer({ min: 2, max: 9 }),
      fc.integer({ min: 1, max: 40 }),
      fc.constantFrom<DType>(...dtypes),
      fc.constantFrom(...opsOf),
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
    );
  const floats: DType[] = ["float16", "bfloat16", "float32", "float64"];
  for (const alg of algorithmsOf("allreduce")) {
    if (alg.ranksDiffer === undefined) {
      it(`allreduce/${alg.name}`, async () => {
        await fc.assert(
          fc.asyncProperty(calls(floats, ops), async (c) => agree(alg.name, c)),
          { numRuns: 25 },
        );
      });
    } else {
      // An algorithm that declares ranks may differ (its ranksDiffer says why) must really differ on
      // floats, or the declaration is stale; min and max (no rounding) still agree on every rank.
      it(`allreduce/${alg.name} declares that ranks may differ on float sums, and they do; min/max agree`, async () => {
        const found = await fc.check(
          fc.asyncProperty(calls(floats, [{ name: "sum" }]), async (c) => agree(alg.name, c)),
          { numRuns: 200 },
        );
        expect(found.failed, alg.ranksDiffer).toBe(true);
        await fc.assert(
          fc.asyncProperty(calls(floats, [{ name: "min" }, { name: "max" }]), async (c) => agree(alg.name, c)),
          { numRuns: 25 },
        );
      });
    }
  }
});

describe("semantics.md I1: MPI's built-in is not the oracle for int8/uint8 sums", () => {
  it("the MPI differential test says why it compares those with the sequential oracle", () => {
    const c = { collective: "allreduce", dtype: "int8", op: { name: "sum" } } as Case;
    expect(builtinNotOracle(c)).toMatch(/saturates int8\/uint8 sums .*ompi#8045.*I1 wraps/);
    expect(builtinNotOracle({ ...c, collective: "reducescatter", dtype: "uint8", op: { name: "avg" } })).toMatch(
      /ompi#8045/,
    );
    expect(builtinNotOracle({ ...c, dtype: "int32" })).toBeUndefined();
    expect(builtinNotOracle({ ...c, collective: "allgather" })).toBeUndefined();
    expect(builtinNotOracle({ ...c, collective: "reduce", dtype: "float32", op: { name: "max" } })).toMatch(/F3/);
  });
});

const skipMpi = mpiSkipReason("mpi semantics tests") !== "";

describe.skipIf(skipMpi)("semantics.md's rules on whole calls and I1, on the mpi backend, under mpirun", () => {
  it("np=5: every case agrees on every rank", () => {
    const { cmd, args } = mpirunCommand(5, [process.execPath, "--import", "tsx", "test/fixtures/mpi/semantics.ts"]);
    const r = spawnSync(cmd, args, {
      encoding: "utf8",
      timeout: 240_000,
      env: { ...process.env, CCLAB_TIMEOUT: "30" },
    });
    const out = `${r.stdout}\n${r.stderr}`;
    const fails = out.split("\n").filter((l) => l.startsWith("FAIL"));
    expect(fails, out.slice(-3000)).toEqual([]);
    expect(r.status, out.slice(-3000)).toBe(0);
    const expected = semanticsCases().length + 1;
    expect(out.match(/^ok /gm)?.length, out.slice(-3000)).toBe(5 * expected);
    expect(out).toContain("ok I1: the MPI differential test compares an overflowing int8 sum with the oracle, n=5");
  }, 300_000);
});
