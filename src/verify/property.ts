/**
 * Property tests of one algorithm on the sim backend: fast-check chooses the group size, count,
 * dtype, op, root, in/out of place, a subgroup of non-contiguous ranks, the send semantics and
 * the interleaving seed; the algorithm's output must equal the sequential oracle's (and an
 * out-of-place input must come back unchanged). Shared by the vitest suite and `cclab verify`.
 *
 * Comparison is exact: inputs are small integers and premulsum's scalar a power of two, so every
 * order of reduction gives the same bits (for float16/bfloat16 too), as nccl-tests' -c inputs.
 *
 * The differential tests on real backends (src/backends/mpi/differential.ts) draw their cases
 * from the same arbitrary with a fixed `worldSize` (the process count the launcher started) and
 * fill inputs with the same `caseValues`.
 */
import fc from "fast-check";
import { allocate, invoke } from "../collectives/dispatch.js";
import { reference } from "../collectives/reference.js";
import type { Comm } from "../comm.js";
import { isHostBuffer, type View } from "../core/buffer.js";
import { DTYPES, type DType, dtypeInfo, setElement, type TypedArray, toValues } from "../core/dtype.js";
import { opLabel, type ReduceOp } from "../core/op.js";
import { Rng } from "../core/random.js";
import type { Algorithm } from "../schedule/dsl.js";
import { SEMANTICS, type Semantics, spawn } from "../sim/index.js";
import { rankCall, specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";

/** One property-test case: the call, and where and how it runs. */
export interface Case extends CollectiveCall {
  /** World ranks of the subgroup the collective runs on, or undefined for the whole world. */
  readonly members?: readonly number[];
  readonly worldSize: number;
  readonly semantics: Semantics;
  readonly seed: number;
  readonly chaos: boolean;
  readonly valueSeed: number;
}

const INT_OPS: ReduceOp[] = ["sum", "prod", "min", "max", "avg", "band", "bor", "bxor"].map(
  (name) => ({ name }) as ReduceOp,
);
const FLOAT_OPS: ReduceOp[] = ["sum", "prod", "min", "max", "avg"].map((name) => ({ name }) as ReduceOp);

export interface ArbOptions {
  readonly maxSize?: number;
  /**
   * A fixed world of this many ranks (mpi, nccl: the launcher chose the process count). The
   * collective then runs on the whole world or, less often, on a subgroup of 1..worldSize-1 of
   * its ranks; maxSize is ignored. Without it (sim) the world is size plus 0..3 idle ranks.
   */
  readonly worldSize?: number;
}

/** The fast-check arbitrary of cases for one algorithm. */
export function caseArb(alg: Algorithm, options: ArbOptions = {}): fc.Arbitrary<Case> {
  const maxSize = options.maxSize ?? 17;
  const world = options.worldSize;
  const sizeArb =
    world === undefined
      ? fc.oneof(
          { weight: 6, arbitrary: fc.integer({ min: 1, max: Math.min(8, maxSize) }) },
          { weight: 3, arbitrary: fc.integer({ min: 1, max: maxSize }) },
        )
      : world > 1
        ? fc.oneof(
            { weight: 3, arbitrary: fc.constant(world) },
            { weight: 1, arbitrary: fc.integer({ min: 1, max: world - 1 }) },
          )
        : fc.constant(1);
  return sizeArb.chain((size) => {
    const spec = specOf(alg.collective);
    const rooted = spec.rooted;
    const reducing = spec.reducing;
    const inPlaceOk = spec.inPlace && alg.inPlace !== false;
    return fc
      .record({
        count: fc.oneof(
          fc.constant(0),
          fc.integer({ min: 0, max: size - 1 }),
          fc.integer({ min: 0, max: 3 * size + 5 }),
        ),
        dtype: fc.constantFrom(...DTYPES),
        opIndex: fc.nat(),
        premul: fc.boolean(),
        root: fc.integer({ min: 0, max: size - 1 }),
        inPlace: inPlaceOk ? fc.boolean() : fc.constant(false),
        semantics: fc.constantFrom(...SEMANTICS),
        seed: fc.integer({ min: 1, max: 1_000_000 }),
        chaos: fc.boolean(),
        segment: fc.integer({ min: 1, max: 9 }),
        extra:
          world !== undefined
            ? fc.constant(world - size)
            : fc.oneof(
                { weight: 3, arbitrary: fc.constant(0) },
                { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
              ),
        memberSeed: fc.nat(),
        splits: fc.array(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: size, maxLength: size }), {
          minLength: size,
          maxLength: size,
        }),
        valueSeed: fc.nat(),
      })
      .map((r): Case => {
        const ops = dtypeInfo(r.dtype).kind === "float" ? FLOAT_OPS : INT_OPS;
        const op: ReduceOp = !reducing
          ? { name: "sum" }
          : r.premul && r.opIndex % 5 === 0
            ? { name: "premulsum", scalar: 2 }
            : (ops[r.opIndex % ops.length] as ReduceOp);
        const worldSize = size + r.extra;
        const members =
          r.extra > 0 ? new Rng(r.memberSeed + 1).shuffle([...Array(worldSize).keys()]).slice(0, size) : undefined;
        return {
          collective: spec.name,
          size,
          members: members?.sort((a, b) => a - b),
          worldSize,
          count: spec.counted ? r.count : 0,
          // No data (the barrier): its own dtype.
          dtype: spec.counted || spec.name === "alltoallv" ? r.dtype : spec.defaultDtype,
          op,
          root: rooted ? r.root : 0,
          inPlace: r.inPlace,
          semantics: r.semantics,
          seed: r.seed,
          chaos: r.chaos,
          segment: r.segment,
          splits: spec.name === "alltoallv" ? r.splits : undefined,
          valueSeed: r.valueSeed,
        };
      });
  });
}

/**
 * Rank `rank`'s `len` input elements for case c: small integers the op keeps exact in every
 * dtype (products of 1, 2 and -1 never lose bits; sums of up to 64 values in [-4, 4] fit float16).
 */
export function caseValues(c: Case, rank: number, len: number): number[] {
  const rng = new Rng(c.valueSeed * 7919 + rank * 104729 + 1);
  const signed = !c.dtype.startsWith("uint");
  const out: number[] = [];
  for (let i = 0; i < len; i++) {
    if (c.op.name === "prod") out.push(signed ? ([1, 2, -1][rng.int(3)] ?? 1) : 1 + rng.int(2));
    else if (["band", "bor", "bxor", "min", "max"].includes(c.op.name))
      out.push(signed ? rng.int(61) - 30 : rng.int(61));
    else out.push(signed ? rng.int(9) - 4 : rng.int(5));
  }
  return out;
}

export function fill(arr: TypedArray, dtype: DType, vals: number[]): void {
  for (let i = 0; i < vals.length; i++) setElement(dtype, arr, i, vals[i] as number);
}

export function hostArray(v: View): TypedArray {
  if (!isHostBuffer(v.buffer)) throw new Error("property tests need host memory");
  return v.buffer.data.subarray(v.offset, v.offset + v.count) as TypedArray;
}

/**
 * A short description of the case, for failure messages and replay. `backend` other than sim
 * leaves out what only the simulator uses (send semantics, interleaving seed, chaos).
 */
export function describeCase(alg: Algorithm, c: Case, options: { backend?: string } = {}): string {
  const sim = (options.backend ?? "sim") === "sim";
  const parts = [
    `${alg.collective}/${alg.name}`,
    `n=${c.size}`,
    `count=${c.count}`,
    c.dtype,
    opLabel(c.op),
    `root=${c.root}`,
    c.inPlace ? "in place" : "out of place",
    sim ? `semantics=${c.semantics}` : "",
    sim ? `seed=${c.seed}` : "",
    sim && c.chaos ? "chaos" : "",
    `segment=${c.segment}`,
    c.members ? `subgroup ${JSON.stringify(c.members)} of ${c.worldSize}` : "",
    c.splits ? `splits=${JSON.stringify(c.splits)}` : "",
  ];
  return parts.filter(Boolean).join(", ");
}

interface RankResult {
  readonly out: (number | bigint)[];
  readonly inputAfter: (number | bigint)[];
  readonly inputBefore: (number | bigint)[];
}

/** Runs one case; resolves with undefined when the output equals the oracle's, else with the difference. */
export async function runCase(alg: Algorithm, c: Case): Promise<string | undefined> {
  const inputs: TypedArray[] = [];
  const run = async (world: Comm): Promise<RankResult | undefined> => {
    const comm = c.members ? await world.split(c.members) : world;
    if (comm.rank < 0) return undefined;
    const rc = rankCall(c, comm.rank);
    const b = allocate(comm, rc);
    const inArr = hostArray(b.input as View);
    fill(inArr, c.dtype, caseValues(c, comm.rank, inArr.length));
    inputs[comm.rank] = inArr.slice() as TypedArray;
    const before = toValues(c.dtype, inArr);
    await invoke(comm, rc, alg.name, b);
    return {
      out: toValues(c.dtype, hostArray(b.output as View)),
      inputBefore: before,
      inputAfter: toValues(c.dtype, inArr),
    };
  };
  const results = await spawn(c.worldSize, run, { semantics: c.semantics, seed: c.seed, chaos: c.chaos });
  const group = results.filter((r): r is RankResult => r !== undefined);
  const want = reference(c, inputs);
  for (let r = 0; r < c.size; r++) {
    const got = (group[r] as RankResult).out;
    const exp = toValues(c.dtype, want[r] as TypedArray);
    const bad = exp.findIndex((v, i) => !same(v, got[i]));
    if (bad >= 0 || got.length !== exp.length) {
      return `rank ${r} output[${bad}] = ${String(got[bad])}, the oracle says ${String(exp[bad])} (output ${fmt(got)}, expected ${fmt(exp)})`;
    }
    const g = group[r] as RankResult;
    const aliased = c.inPlace && !(specOf(c.collective).rooted && r !== c.root);
    if (!aliased && g.inputAfter.some((v, i) => !same(v, g.inputBefore[i]))) {
      return `rank ${r}: the input buffer changed (${fmt(g.inputBefore)} -> ${fmt(g.inputAfter)}); out of place it must not`;
    }
  }
  return undefined;
}

/** Equal values (NaN equals NaN): the exact comparison the property tests use. */
export const same = (a: number | bigint | undefined, b: number | bigint | undefined) =>
  a === b || (typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b));
/** The first 24 values of an array, for messages. */
export const fmt = (xs: (number | bigint)[]) =>
  `[${xs.slice(0, 24).map(String).join(", ")}${xs.length > 24 ? ", ..." : ""}]`;
