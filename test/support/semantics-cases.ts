/**
 * The cases that hold docs/semantics.md's rules on whole calls (one rule each), written once and
 * run on the sim backend and the nccl backend's fake engine (test/semantics.test.ts), under
 * mpirun on the mpi backend (test/fixtures/mpi/semantics.ts) and on GPUs (test/gpu/semantics.ts).
 * Each case runs on every rank of a communicator of `size` ranks and returns undefined or what
 * went wrong on that rank.
 *
 * Expected values are written out by hand from the rules (a table of bits per case), not
 * computed by src/core/op.ts, so a wrong implementation cannot agree with itself.
 */

import { readDevice, writeDevice } from "../../src/backends/nccl/index.js";
import { allocate, invoke } from "../../src/collectives/dispatch.js";
import type { Comm } from "../../src/comm.js";
import { type HostBuffer, isHostBuffer, type View, view } from "../../src/core/buffer.js";
import { type DType, dtypeInfo, type TypedArray } from "../../src/core/dtype.js";
import { InvalidArgumentError } from "../../src/core/errors.js";
import type { ReduceOp } from "../../src/core/op.js";
import { algorithmsOf, allAlgorithms } from "../../src/schedule/registry.js";
import { makeCall, rankCall, specOf } from "../../src/specs/index.js";
import type { CollectiveCall, RankCall } from "../../src/specs/types.js";

/** This rank's view of a call of `collective` on comm. */
const callOn = (comm: Comm, collective: string, c: Partial<CollectiveCall>): RankCall =>
  rankCall(makeCall({ collective, size: comm.size, segment: 1, ...c }), comm.rank);

export interface SemanticsCase {
  /** "F3: allreduce/ring max, float32, n=3: ...": the rule of docs/semantics.md it holds, and the call. */
  readonly name: string;
  readonly size: number;
  readonly run: (comm: Comm) => Promise<string | undefined>;
}

const FLOATS = ["float16", "bfloat16", "float32", "float64"] as const;

/** An unsigned integer view of the same bytes as arr (one element per element). */
function unsignedView(dtype: DType, arr: TypedArray): Uint8Array | Uint16Array | Uint32Array | BigUint64Array {
  const { buffer, byteOffset, length } = arr;
  switch (dtypeInfo(dtype).bytes) {
    case 1:
      return new Uint8Array(buffer, byteOffset, length);
    case 2:
      return new Uint16Array(buffer, byteOffset, length);
    case 4:
      return new Uint32Array(buffer, byteOffset, length);
    default:
      return new BigUint64Array(buffer, byteOffset, length);
  }
}
/** Raw bits of an element as a bigint. */
function bitsAt(dtype: DType, arr: TypedArray, i: number): bigint {
  return BigInt(unsignedView(dtype, arr)[i] as number | bigint);
}
function setBits(dtype: DType, arr: TypedArray, i: number, bits: bigint): void {
  const v = unsignedView(dtype, arr);
  if (v instanceof BigUint64Array) v[i] = BigInt.asUintN(64, bits);
  else v[i] = Number(bits);
}
const hex = (x: bigint) => `0x${x.toString(16)}`;

/** Bits of a few values per float dtype: the tables below are written with these names. */
const B: Record<(typeof FLOATS)[number], Record<string, bigint>> = {
  float16: {
    one: 0x3c00n,
    two: 0x4000n,
    four: 0x4400n,
    negZero: 0x8000n,
    zero: 0n,
    nan: 0x7e00n,
    negNan: 0xfe01n,
    sNan: 0x7c01n,
    canon: 0x7fffn,
    v60000: 0x7b53n,
    max: 0x7bffn,
  },
  bfloat16: {
    one: 0x3f80n,
    two: 0x4000n,
    four: 0x4080n,
    negZero: 0x8000n,
    zero: 0n,
    nan: 0x7fc0n,
    negNan: 0xffc1n,
    sNan: 0x7f81n,
    canon: 0x7fffn,
  },
  float32: {
    one: 0x3f800000n,
    two: 0x40000000n,
    four: 0x40800000n,
    negZero: 0x80000000n,
    zero: 0n,
    nan: 0x7fc00000n,
    negNan: 0xffc00000n,
    sNan: 0x7f800001n,
    canon: 0x7fffffffn,
  },
  float64: {
    one: 0x3ff0000000000000n,
    two: 0x4000000000000000n,
    four: 0x4010000000000000n,
    negZero: 0x8000000000000000n,
    zero: 0n,
    nan: 0x7ff8000000000000n,
    negNan: 0xfff8000000000000n,
    sNan: 0x7ff0000000000001n,
    canon: 0x7fffffffffffffffn,
  },
};

/** The view's elements as a host array: its own memory on sim and mpi, a copy from the device on nccl. */
async function read(v: View): Promise<TypedArray> {
  if (!isHostBuffer(v.buffer)) return readDevice(v);
  return (v.buffer as HostBuffer).data.subarray(v.offset, v.offset + v.count) as TypedArray;
}
/** Fills the view with `bits` (element i gets bits(i)). */
async function fill(v: View, dtype: DType, bitsOf: (i: number) => bigint): Promise<void> {
  const arr = new (dtypeInfo(dtype).array)(v.count);
  for (let i = 0; i < v.count; i++) setBits(dtype, arr, i, bitsOf(i));
  if (isHostBuffer(v.buffer)) (v.buffer as HostBuffer).data.set(arr as never, v.offset);
  else await writeDevice(v, arr);
}

/**
 * One reduction through the public API: rank r's input is inputs[r] (bits), every element of the
 * output must have the bits want[i] (all-reduce: on every rank; reduce: at root 0).
 */
async function reduceBits(
  comm: Comm,
  collective: "allreduce" | "reduce",
  algorithm: string,
  dtype: DType,
  op: ReduceOp,
  inputs: readonly (readonly bigint[])[],
  want: readonly bigint[],
): Promise<string | undefined> {
  const count = want.length;
  const rc = callOn(comm, collective, { count, root: 0, dtype, op });
  const b = allocate(comm, rc);
  await fill(b.input as View, dtype, (i) => inputs[comm.rank]?.[i] ?? 0n);
  await invoke(comm, rc, algorithm, b);
  if (collective === "reduce" && comm.rank !== 0) return undefined;
  const out = await read(b.output as View);
  for (let i = 0; i < count; i++) {
    const got = bitsAt(dtype, out, i);
    if (got !== want[i]) {
      const ins = inputs.map((r) => hex(r[i] ?? 0n)).join(", ");
      return `rank ${comm.rank}: output[${i}] = ${hex(got)}, want ${hex(want[i] ?? 0n)} (inputs ${ins})`;
    }
  }
  return undefined;
}

/** Item 1 (F3): min/max ignore a NaN operand; all NaN gives the canonical NaN, on every rank. */
function nanMinMax(): SemanticsCase[] {
  const out: SemanticsCase[] = [];
  for (const alg of algorithmsOf("allreduce")) {
    for (const size of [2, 3, 5]) {
      for (const dtype of FLOATS) {
        const b = B[dtype];
        const one = b.one as bigint;
        const four = b.four as bigint;
        const nan = b.nan as bigint;
        // element 0: [1, 4, NaN, 1, 4] (the issue's [1, 4, NaN] at n = 3); element 1: NaN first;
        // element 2: NaNs with different signs and payloads everywhere.
        const col = (r: number) => [
          [one, four, nan, one, four][r] as bigint,
          r === 0 ? nan : one,
          [b.negNan, b.sNan, nan][r % 3] as bigint,
        ];
        const inputs = Array.from({ length: size }, (_, r) => col(r));
        for (const name of ["min", "max"] as const) {
          const want = [name === "max" ? four : one, one, b.canon as bigint];
          out.push({
            name: `F3: allreduce/${alg.name} ${name}, ${dtype}, n=${size}: a NaN operand is ignored`,
            size,
            run: (comm) => reduceBits(comm, "allreduce", alg.name, dtype, { name }, inputs, want),
          });
        }
      }
    }
  }
  return out;
}

/** Item 2 (F3, F4, F2): -0 < +0 in min/max, signed zeros in sums, NaN bits canonical, on every rank. */
function signedZeroAndNaNBits(): SemanticsCase[] {
  const out: SemanticsCase[] = [];
  for (const alg of algorithmsOf("allreduce")) {
    for (const size of [2, 4]) {
      for (const dtype of FLOATS) {
        const b = B[dtype];
        const z = b.zero as bigint;
        const nz = b.negZero as bigint;
        // element 0: [-0, +0, ...]; element 1: [+0, -0, ...]; element 2: all -0; element 3: NaNs of both signs
        const inputs = Array.from({ length: size }, (_, r) => [
          r % 2 === 0 ? nz : z,
          r % 2 === 0 ? z : nz,
          nz,
          (r % 2 === 0 ? b.negNan : b.nan) as bigint,
        ]);
        const canon = b.canon as bigint;
        const cases: [string, ReduceOp, bigint[], string][] = [
          ["min", { name: "min" }, [nz, nz, nz, canon], "F3: -0 < +0"],
          ["max", { name: "max" }, [z, z, nz, canon], "F3: -0 < +0"],
          ["sum", { name: "sum" }, [z, z, nz, canon], "F4: -0 + +0 = +0, -0 + -0 = -0; F2: NaN canonical"],
        ];
        for (const [label, op, want, rule] of cases) {
          out.push({
            name: `${rule}: allreduce/${alg.name} ${label}, ${dtype}, n=${size}`,
            size,
            run: (comm) => reduceBits(comm, "allreduce", alg.name, dtype, op, inputs, want),
          });
        }
      }
    }
  }
  return out;
}

/** Item 3 (A2): float avg pre-multiplies each input by 1/n, so [60000], [60000] averages to 60000 in float16. */
function floatAvg(): SemanticsCase[] {
  const out: SemanticsCase[] = [];
  for (const alg of algorithmsOf("allreduce")) {
    const v = B.float16.v60000 as bigint;
    out.push({
      name: `A2: allreduce/${alg.name} avg, float16, n=2: 60000 and 60000 average to 60000`,
      size: 2,
      run: (comm) => reduceBits(comm, "allreduce", alg.name, "float16", { name: "avg" }, [[v], [v]], [v]),
    });
    // float32 at n = 3: 3e38 three times; the sum would overflow, each third does not.
    const f = new Float32Array([3e38, 1 / 3, 0]);
    const t = Math.fround((f[0] as number) * (f[1] as number));
    f[2] = Math.fround(Math.fround(t + t) + t);
    const u = new Uint32Array(f.buffer);
    const x = BigInt(u[0] as number);
    out.push({
      name: `A2: allreduce/${alg.name} avg, float32, n=3: three 3e38 average without overflowing`,
      size: 3,
      run: (comm) =>
        reduceBits(comm, "allreduce", alg.name, "float32", { name: "avg" }, [[x], [x], [x]], [BigInt(u[2] as number)]),
    });
  }
  return out;
}

/** Item 4 (P1, P2): premulsum's scalar is taken in the element type (2.5 on integers is 2), then multiplies each input. */
function premulInts(): SemanticsCase[] {
  const out: SemanticsCase[] = [];
  for (const alg of algorithmsOf("allreduce")) {
    for (const dtype of ["int8", "uint8", "int32", "uint32", "int64", "uint64"] as const) {
      out.push({
        name: `P1, P2: allreduce/${alg.name} premulsum(2.5), ${dtype}, n=2: 2.5 x [10] + 2.5 x [10] = 40`,
        size: 2,
        run: (comm) =>
          reduceBits(comm, "allreduce", alg.name, dtype, { name: "premulsum", scalar: 2.5 }, [[10n], [10n]], [40n]),
      });
    }
  }
  out.push({
    name: "P1: premulsum(-1) on uint8 is refused, naming the rank, the operation and the argument",
    size: 2,
    run: async (comm) => {
      const rc = callOn(comm, "allreduce", { count: 1, dtype: "uint8", op: { name: "premulsum", scalar: -1 } });
      const b = allocate(comm, rc);
      try {
        await invoke(comm, rc, "auto", b);
      } catch (e) {
        if (!(e instanceof InvalidArgumentError))
          return `rank ${comm.rank}: expected InvalidArgumentError, got ${String(e)}`;
        const m = e.message;
        const ok =
          m.includes(`rank ${comm.rank}`) && /allReduce|allreduce/.test(m) && m.includes("op") && m.includes("uint8");
        return ok
          ? undefined
          : `rank ${comm.rank}: the message does not name rank, operation, argument and dtype: ${m}`;
      }
      return `rank ${comm.rank}: premulsum(-1) on uint8 was accepted`;
    },
  });
  return out;
}

/** Item 5 (M1): data movement delivers bits unchanged: NaN payloads, signaling NaNs, -0. */
function movementBits(): SemanticsCase[] {
  const out: SemanticsCase[] = [];
  const movers = allAlgorithms().filter((a) => !specOf(a.collective).reducing && specOf(a.collective).data);
  for (const alg of movers) {
    for (const dtype of ["float32", "float64"] as const) {
      for (const size of [2, 3]) {
        out.push({
          name: `M1: ${alg.collective}/${alg.name}, ${dtype}, n=${size}: NaN payloads arrive bit for bit`,
          size,
          run: (comm) => moveBits(comm, alg.collective, alg.name, dtype),
        });
      }
    }
  }
  // A reduction over one rank moves its input (M1): a signaling NaN stays signaling.
  for (const alg of algorithmsOf("allreduce")) {
    out.push({
      name: `M1: allreduce/${alg.name} sum, float32, n=1: a signaling NaN comes back unchanged`,
      size: 1,
      run: (comm) =>
        reduceBits(
          comm,
          "allreduce",
          alg.name,
          "float32",
          { name: "sum" },
          [[0x7f800001n, 0xffa00001n]],
          [0x7f800001n, 0xffa00001n],
        ),
    });
  }
  return out;
}

/**
 * A data-moving collective whose every element is a distinct NaN (signaling, quiet, negative,
 * payload from the rank and index) or -0: each output element must hold the bits of the input
 * element it came from. root 1 where the collective has one (the issue's broadcast from root 1).
 */
async function moveBits(
  comm: Comm,
  collective: string,
  algorithm: string,
  dtype: "float32" | "float64",
): Promise<string | undefined> {
  const count = 2;
  const n = comm.size;
  const root = n > 1 ? 1 : 0;
  const splits = Array.from({ length: n }, (_, s) => Array.from({ length: n }, (_, d) => (s + d) % 3));
  const rc = callOn(comm, collective, { count, root, dtype, splits: collective === "alltoallv" ? splits : undefined });
  const wide = dtype === "float64";
  /** The bits rank r puts at input index i. */
  const bits = (r: number, i: number): bigint => {
    const k = BigInt(r * 64 + i + 1);
    if (i % 5 === 4) return wide ? 0x8000000000000000n : 0x80000000n; // -0
    const sign = i % 2 ? (wide ? 0x8000000000000000n : 0x80000000n) : 0n;
    return wide ? sign | 0x7ff0000000000000n | k : sign | 0x7f800000n | k; // signaling NaNs with payload k
  };
  const b = allocate(comm, rc);
  await fill(b.input as View, dtype, (i) => bits(comm.rank, i));
  await invoke(comm, rc, algorithm, b);
  const outArr = await read(b.output as View);
  // Where each output element comes from: (source rank, source index).
  const from = (j: number): [number, number] | undefined => {
    switch (collective) {
      case "broadcast":
        return [root, j];
      case "gather":
        return comm.rank === root ? [Math.floor(j / count), j % count] : undefined;
      case "scatter":
        return [root, comm.rank * count + j];
      case "allgather":
        return [Math.floor(j / count), j % count];
      case "alltoall":
        return [Math.floor(j / count), comm.rank * count + (j % count)];
      case "alltoallv": {
        let k = j;
        for (let s = 0; s < n; s++) {
          const len = splits[s]?.[comm.rank] ?? 0;
          if (k < len) return [s, (splits[s] ?? []).slice(0, comm.rank).reduce((a, x) => a + x, 0) + k];
          k -= len;
        }
        return undefined;
      }
      default:
        return undefined;
    }
  };
  for (let j = 0; j < outArr.length; j++) {
    const src = from(j);
    if (!src) continue;
    const want = bits(src[0], src[1]);
    const got = bitsAt(dtype, outArr, j);
    if (got !== want)
      return `rank ${comm.rank}: output[${j}] = ${hex(got)}, want ${hex(want)} from rank ${src[0]}'s input[${src[1]}]`;
  }
  return undefined;
}

/** Every case, in a stable order. */
export function semanticsCases(): SemanticsCase[] {
  return [...nanMinMax(), ...signedZeroAndNaNBits(), ...floatAvg(), ...premulInts(), ...movementBits()];
}

/** Runs `c` on `comm` and turns a throw into the failure text. */
export async function runSemanticsCase(c: SemanticsCase, comm: Comm): Promise<string | undefined> {
  try {
    return await c.run(comm);
  } catch (e) {
    return `rank ${comm.rank}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
  }
}

/** Bits helpers for tests that must not rely on src/core for them. */
export const bits = { at: bitsAt, set: setBits, hex };
export { view };
