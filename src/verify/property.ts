/**
 * Property tests of one algorithm on the sim backend: fast-check chooses the group size, count,
 * dtype, op, root, in/out of place, a subgroup of non-contiguous ranks, the send semantics and
 * the interleaving seed; the algorithm's output must equal the sequential oracle's (and an
 * out-of-place input must come back unchanged). Shared by the vitest suite and `cclab verify`.
 *
 * Comparison is by bytes against the oracle, which applies docs/semantics.md: inputs (values.ts)
 * include NaNs with payloads, ±0, ±Inf, subnormals and extremes in every dtype, chosen so that
 * every order of reduction gives the same bits; every rank of an all-reduce must also end with
 * the same bytes as every other.
 *
 * The differential tests on real backends draw their cases from this same arbitrary with a fixed
 * `worldSize` (the process count the launcher started): MPI's (mpi-cases.ts) as they are, filled
 * with the same `caseValues`; NCCL's (nccl-cases.ts) with the GPU's options (ENGINE below: no
 * subgroups, counts large enough for its kernels, premulsum's scalar 2), filled with small
 * integers NCCL's own kernels add alike.
 */
import fc from "fast-check";
import { allocate, invoke } from "../collectives/dispatch.js";
import { reference } from "../collectives/reference.js";
import type { Comm } from "../comm.js";
import { isHostBuffer, type View } from "../core/buffer.js";
import { DTYPES, type DType, dtypeInfo, type TypedArray, toValues } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { opLabel, type ReduceOp } from "../core/op.js";
import { Rng } from "../core/random.js";
import type { Algorithm } from "../schedule/dsl.js";
import { SEMANTICS, type Semantics, spawn } from "../sim/index.js";
import { defaultSegment, rankCall, specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import { caseInput, describeDifference, premulScalars } from "./values.js";

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
  /** Whether a case may run on a subgroup of the world (default true). */
  readonly subgroups?: boolean;
  /** The dtypes to draw from (default every dtype). */
  readonly dtypes?: readonly DType[];
  /**
   * Counts up to 3n+5 (default; past 17 ranks, counts that fill every chunk), or also 64..263
   * and 2048..4095 ('large', for an engine whose kernels should be exercised); large counts, and
   * half the small ones, then use the algorithm's default segment instead of a named one of 1..9
   * elements.
   */
  readonly counts?: "small" | "large";
  /** premulsum's scalars per dtype (default values.ts premulScalars). */
  readonly premulScalars?: (dtype: DType) => readonly number[];
}

/** The fast-check arbitrary of cases for one algorithm. */
export function caseArb(alg: Algorithm, options: ArbOptions = {}): fc.Arbitrary<Case> {
  const maxSize = options.maxSize ?? 17;
  const world = options.worldSize;
  const domain = alg.domain;
  const subgroups = options.subgroups ?? true;
  const domainSizes =
    domain?.sizes.filter((n) => world === undefined || n === world || (subgroups && n <= world)) ?? [];
  if (domain && domainSizes.length === 0) {
    throw new InvalidArgumentError(
      { op: "verify", arg: "world size" },
      `${alg.collective}/${alg.name} runs on ${domain.sizes.join(", ")} ranks only (${domain.why}); launch that many`,
    );
  }
  const sizeArb = domain
    ? fc.constantFrom(...domainSizes)
    : world === undefined
      ? fc.oneof(
          { weight: 6, arbitrary: fc.integer({ min: 1, max: Math.min(8, maxSize) }) },
          { weight: 3, arbitrary: fc.integer({ min: 1, max: maxSize }) },
        )
      : world > 1 && subgroups
        ? fc.oneof(
            { weight: 3, arbitrary: fc.constant(world) },
            { weight: 1, arbitrary: fc.integer({ min: 1, max: world - 1 }) },
          )
        : fc.constant(world);
  return sizeArb.chain((size) => {
    const spec = specOf(alg.collective);
    const rooted = spec.rooted;
    const reducing = spec.reducing;
    const inPlaceOk = spec.inPlace && alg.inPlace !== false;
    return fc
      .record({
        count: domain
          ? fc.integer({ min: 0, max: 4 }).map((k) => k * (domain.countMultiple ?? 1))
          : size > LARGE
            ? largeCounts(size, options.counts === "large")
            : fc.oneof(
                fc.constant(0),
                fc.integer({ min: 0, max: size - 1 }),
                fc.integer({ min: 0, max: 3 * size + 5 }),
                ...(options.counts === "large"
                  ? [fc.integer({ min: 64, max: 263 }), fc.integer({ min: 2048, max: 4095 })]
                  : []),
              ),
        dtype: fc.constantFrom(...(options.dtypes ?? DTYPES)),
        opIndex: fc.nat(),
        premul: fc.boolean(),
        root: domain?.roots ? fc.constantFrom(...domain.roots) : fc.integer({ min: 0, max: size - 1 }),
        inPlace: inPlaceOk ? fc.boolean() : fc.constant(false),
        semantics: fc.constantFrom(...SEMANTICS),
        seed: fc.integer({ min: 1, max: 1_000_000 }),
        chaos: fc.boolean(),
        segment: fc.integer({ min: 1, max: 9 }),
        namedSegment: fc.boolean(),
        extra:
          world !== undefined
            ? fc.constant(world - size)
            : !subgroups
              ? fc.constant(0)
              : fc.oneof(
                  { weight: 3, arbitrary: fc.constant(0) },
                  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
                ),
        memberSeed: fc.nat(),
        // A size × size matrix only where the collective takes one, past LARGE: at thousands of
        // ranks drawing (and shrinking) millions of unused entries ran verify out of memory.
        // (Up to LARGE it is drawn anyway, so that earlier seeds replay the same cases.)
        splits:
          spec.splits || size <= LARGE
            ? fc.array(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: size, maxLength: size }), {
                minLength: size,
                maxLength: size,
              })
            : fc.constant(undefined),
        valueSeed: fc.nat(),
      })
      .map((r): Case => {
        const ops = dtypeInfo(r.dtype).kind === "float" ? FLOAT_OPS : INT_OPS;
        const op: ReduceOp = !reducing
          ? { name: "sum" }
          : r.premul && r.opIndex % 5 === 0
            ? { name: "premulsum", scalar: pick((options.premulScalars ?? premulScalars)(r.dtype), r.opIndex) }
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
          dtype: spec.data ? r.dtype : spec.defaultDtype,
          op,
          root: rooted ? r.root : 0,
          inPlace: r.inPlace,
          semantics: r.semantics,
          seed: r.seed,
          chaos: r.chaos,
          segment:
            options.counts === "large" && (r.count >= 64 || !r.namedSegment) ? defaultSegment(r.dtype, alg) : r.segment,
          splits: spec.splits ? (r.splits as number[][]) : undefined,
          valueSeed: r.valueSeed,
        };
      });
  });
}

const pick = <T>(xs: readonly T[], k: number): T => xs[k % xs.length] as T;

/** Past this many ranks the counts are chosen to fill every chunk (the default sizes, 1..17, keep theirs). */
const LARGE = 17;

/**
 * Counts for n > LARGE ranks: mostly k·n + r with r in 1..n-1 (every one of n chunks holds data,
 * and n does not divide the count), sometimes a multiple of n, and less often the edge counts 0
 * and below n (chunks left empty). Small counts at n = 300 leave most chunks empty, so a step
 * that moves one of them is never exercised.
 */
function largeCounts(n: number, large: boolean): fc.Arbitrary<number> {
  const k = fc.integer({ min: 1, max: large ? 8 : 3 });
  return fc.oneof(
    { weight: 6, arbitrary: fc.tuple(k, fc.integer({ min: 1, max: n - 1 })).map(([q, r]) => q * n + r) },
    { weight: 1, arbitrary: k.map((q) => q * n) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: n - 1 }) },
  );
}

/**
 * Rank `rank`'s `len` input elements for case c of a `collective` (values.ts: special values in
 * every dtype, exact in every order of reduction).
 */
export function caseValues(c: CollectiveCall & { readonly valueSeed: number }, rank: number, len: number): TypedArray {
  return caseInput({ ...c, reducing: specOf(c.collective).reducing }, rank, len);
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
  readonly out: TypedArray;
  readonly inputAfter: TypedArray;
  readonly inputBefore: TypedArray;
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
    inArr.set(caseValues(c, comm.rank, inArr.length) as never);
    inputs[comm.rank] = inArr.slice() as TypedArray;
    await invoke(comm, rc, alg, b);
    return {
      out: hostArray(b.output as View).slice() as TypedArray,
      inputBefore: inputs[comm.rank] as TypedArray,
      inputAfter: inArr,
    };
  };
  const results = await spawn(c.worldSize, run, { semantics: c.semantics, seed: c.seed, chaos: c.chaos });
  const group = results.filter((r): r is RankResult => r !== undefined);
  const want = reference(c, inputs);
  return compareRanks(c, group, want);
}

/**
 * The verdict on one case, by bytes: every rank's output equals the oracle's (docs/semantics.md),
 * every rank of an all-reduce holds the same bytes as rank 0 (A3), and an out-of-place input is
 * unchanged (M1).
 */
function compareRanks(c: Case, group: readonly RankResult[], want: TypedArray[]): string | undefined {
  const show = (a: TypedArray) => fmt(toValues(c.dtype, a));
  for (let r = 0; r < c.size; r++) {
    const g = group[r] as RankResult;
    if (specOf(c.collective).replicated && r > 0) {
      const d = describeDifference(c.dtype, g.out, (group[0] as RankResult).out, "output", "rank 0 has");
      if (d) return `rank ${r} ${d}: every rank of an all-reduce must end with the same bits (semantics.md A3)`;
    }
    const d = describeDifference(c.dtype, g.out, want[r] as TypedArray, "output", "the oracle says");
    if (d) return `rank ${r} ${d} (output ${show(g.out)}, expected ${show(want[r] as TypedArray)})`;
    const aliased = c.inPlace && !(specOf(c.collective).rooted && r !== c.root);
    const changed = aliased ? undefined : describeDifference(c.dtype, g.inputAfter, g.inputBefore, "input", "was");
    if (changed) return `rank ${r}: the input buffer changed, ${changed}; out of place it must not`;
  }
  return undefined;
}

/** Equal values (NaN equals NaN): the exact comparison the property tests use. */
export const same = (a: number | bigint | undefined, b: number | bigint | undefined) =>
  a === b || (typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b));
/** The first 24 values of an array, for messages. */
export const fmt = (xs: (number | bigint)[]) =>
  `[${xs.slice(0, 24).map(String).join(", ")}${xs.length > 24 ? ", ..." : ""}]`;
