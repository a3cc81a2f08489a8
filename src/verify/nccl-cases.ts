/**
 * The differential test on the nccl backend: one algorithm on device buffers through the front
 * API (the executor enqueues the whole schedule), NCCL's own collective (comm.builtin) on the
 * same inputs, and the sequential oracle (src/collectives/reference.ts); both outputs must equal
 * the oracle's bit for bit, and an out-of-place input must come back unchanged.
 *
 * Inputs are small integers (products of 1, 2 and -1 for prod; premulsum's scalar is 2), so
 * every order of reduction gives the same bits in every dtype, float16 and bfloat16 included, as
 * nccl-tests' -c inputs: any difference is a bug, not rounding. Every rank can rebuild every
 * rank's input from the case's seed, so each checks its own output against the oracle without
 * any extra communication.
 *
 * Cases come from the one case generator (property.ts caseArb, with the GPU's options), sampled
 * from a seed so every rank draws the same ones; dtypes cycle so float16 and bfloat16 come up in
 * every run of at least ten cases. NCCL has no bitwise reductions, so for band/bor/bxor only the
 * algorithm is checked.
 */

import fc from "fast-check";
import type { NcclBuiltin } from "../backends/nccl/builtin.js";
import { readDevice, writeDevice } from "../backends/nccl/index.js";
import { allocate, type Buffers, invoke } from "../collectives/dispatch.js";
import { reference } from "../collectives/reference.js";
import type { Comm } from "../comm.js";
import type { View } from "../core/buffer.js";
import { DTYPES, type DType, dtypeInfo, setElement, type TypedArray, toValues } from "../core/dtype.js";
import { opLabel } from "../core/op.js";
import { Rng } from "../core/random.js";
import type { Algorithm } from "../schedule/dsl.js";
import { makeCall, rankCall, specOf } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import { type Case, caseArb } from "./property.js";

const BITWISE = new Set(["band", "bor", "bxor"]);

export interface NcclCase extends CollectiveCall {
  readonly valueSeed: number;
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * The GPU's options for the one case arbitrary (property.ts caseArb): the whole world (no
 * subgroups), counts large enough for the kernels, and premulsum's scalar 2, which NCCL applies
 * exactly in every dtype (it converts the scalar to the dtype: 2.5 would be 2 on integers).
 */
const ENGINE_OPTIONS = { subgroups: false, counts: "large", premulScalars: () => [2] } as const;

/**
 * `runs` cases for `alg` at world size `size`, the same on every rank for the same seed: drawn
 * from caseArb, the generator the sim property tests and the MPI differential tests use, case i
 * from dtype i (cycling from a seeded start), so float16 and bfloat16 come up in every run of at
 * least as many cases as dtypes.
 */
export function ncclCases(
  alg: Algorithm,
  size: number,
  runs: number,
  seed: number,
  dtypes: readonly DType[] = DTYPES,
): NcclCase[] {
  const base = (seed ^ hash(`${alg.collective}/${alg.name}`)) >>> 0;
  const start = new Rng(base).int(dtypes.length);
  return Array.from({ length: runs }, (_, i) => {
    const dtype = dtypes[(start + i) % dtypes.length] as DType;
    const arb = caseArb(alg, { worldSize: size, dtypes: [dtype], ...ENGINE_OPTIONS });
    const [c] = fc.sample(arb, { seed: (base + i) | 0, numRuns: 1 }) as [Case];
    return { ...makeCall(c, alg), valueSeed: c.valueSeed };
  });
}

/** Small integers the op keeps exact in every dtype, for `rank`'s input of `len` elements. */
export function caseInput(c: NcclCase, rank: number, len: number): TypedArray {
  const rng = new Rng((c.valueSeed * 7919 + rank * 104729 + 1) >>> 0);
  const signed = !c.dtype.startsWith("uint");
  const arr = new (dtypeInfo(c.dtype).array)(len);
  for (let i = 0; i < len; i++) {
    let v: number;
    if (c.op.name === "prod") v = signed ? [1, 2, -1][rng.int(3)]! : 1 + rng.int(2);
    // Float avg pre-multiplies every input by 1/n (docs/semantics.md A2), which rounds: only ranks
    // 0 and 1 contribute non-zero values, and two terms add alike in every order.
    else if (c.op.name === "avg" && dtypeInfo(c.dtype).kind === "float") v = rank < 2 ? rng.int(9) - 4 : 0;
    else if (["band", "bor", "bxor", "min", "max"].includes(c.op.name)) v = signed ? rng.int(61) - 30 : rng.int(61);
    else v = signed ? rng.int(9) - 4 : rng.int(5);
    setElement(c.dtype, arr, i, v);
  }
  return arr;
}

export function describeNcclCase(alg: Algorithm, size: number, c: NcclCase): string {
  return [
    `${alg.collective}/${alg.name}`,
    `n=${size}`,
    `count=${c.count}`,
    c.dtype,
    opLabel(c.op),
    specOf(alg.collective).rooted ? `root=${c.root}` : "",
    c.inPlace ? "in place" : "out of place",
    `segment=${c.segment}`,
    c.splits ? `splits=${JSON.stringify(c.splits)}` : "",
  ]
    .filter(Boolean)
    .join(", ");
}

const same = (a: number | bigint | undefined, b: number | bigint | undefined) =>
  a === b || (typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b));
const fmt = (xs: (number | bigint)[]) => `[${xs.slice(0, 16).map(String).join(", ")}${xs.length > 16 ? ", ..." : ""}]`;

function compare(what: string, dtype: DType, got: TypedArray, want: TypedArray): string | undefined {
  const g = toValues(dtype, got);
  const w = toValues(dtype, want);
  const bad = w.findIndex((v, i) => !same(v, g[i]));
  if (bad < 0 && g.length === w.length) return undefined;
  return `${what}: output[${bad}] = ${String(g[bad])}, the oracle says ${String(w[bad])} (got ${fmt(g)}, expected ${fmt(w)})`;
}

async function fillInput(b: Buffers, c: NcclCase, rank: number): Promise<TypedArray> {
  const input = b.input as View;
  const data = caseInput(c, rank, input.count);
  await writeDevice(input, data);
  return data;
}

export interface CaseResult {
  /** Differences of the algorithm from the oracle, of NCCL from the oracle ('' where none). */
  readonly failures: string[];
  /** Whether NCCL's own collective was run (not for bitwise ops). */
  readonly builtinChecked: boolean;
}

/**
 * Runs one case on this rank: the algorithm through `comm` (guarded or not), NCCL's builtin
 * through `builtin`, both against the oracle. Every rank of the communicator calls it with the
 * same case.
 */
export async function runNcclCase(comm: Comm, builtin: NcclBuiltin, alg: Algorithm, c: NcclCase): Promise<CaseResult> {
  const n = comm.size;
  const rank = comm.rank;
  const spec = specOf(c.collective);
  const rc = rankCall(c, rank);
  const failures: string[] = [];
  const inputs = Array.from({ length: n }, (_, r) => caseInput(c, r, spec.layout(rankCall(c, r)).inputCount));
  const want = reference(c, inputs)[rank] as TypedArray;

  // The algorithm.
  const b = allocate(comm, rc);
  const before = await fillInput(b, c, rank);
  await invoke(comm, rc, alg, b);
  const got = await readDevice(b.output as View);
  const diff = compare(`cclab ${alg.name}`, c.dtype, got, want);
  if (diff) failures.push(diff);
  const aliased = c.inPlace && !(spec.rooted && rank !== c.root);
  if (!aliased && spec.data) {
    const after = await readDevice(b.input as View);
    const changed = compare(`cclab ${alg.name} input (out of place, must not change)`, c.dtype, after, before);
    if (changed) failures.push(changed);
  }

  // NCCL's own.
  const builtinChecked = !BITWISE.has(c.op.name);
  if (builtinChecked) {
    const nb = allocate(comm, rc);
    await fillInput(nb, c, rank);
    await spec.builtin.run(builtin.spec, { call: rc, input: nb.input, output: nb.output });
    const ngot = await readDevice(nb.output as View);
    const ndiff = compare("NCCL builtin", c.dtype, ngot, want);
    if (ndiff) failures.push(ndiff);
  }
  for (const buf of [...b.memory]) (buf as { free?: () => void }).free?.();
  return { failures, builtinChecked };
}

export interface AlgorithmResult {
  readonly collective: string;
  readonly algorithm: string;
  readonly size: number;
  readonly cases: number;
  readonly builtinCases: number;
  readonly failures: string[];
}

/** Every case of one algorithm on this rank; failures name the case and how to replay it. */
export async function runNcclAlgorithm(
  comm: Comm,
  builtin: NcclBuiltin,
  alg: Algorithm,
  runs: number,
  seed: number,
  dtypes?: readonly DType[],
): Promise<AlgorithmResult> {
  const cases = ncclCases(alg, comm.size, runs, seed, dtypes);
  const failures: string[] = [];
  let builtinCases = 0;
  for (const c of cases) {
    const r = await runNcclCase(comm, builtin, alg, c);
    if (r.builtinChecked) builtinCases++;
    for (const f of r.failures) failures.push(`${describeNcclCase(alg, comm.size, c)}: rank ${comm.rank}: ${f}`);
  }
  return {
    collective: alg.collective,
    algorithm: alg.name,
    size: comm.size,
    cases: cases.length,
    builtinCases,
    failures,
  };
}
