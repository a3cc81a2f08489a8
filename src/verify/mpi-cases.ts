/**
 * One differential case on the mpi backend: the hand-rolled algorithm through the front API and
 * MPI's own collective (comm.builtin) run on the same inputs in the same processes, and every
 * rank's output must agree. Cases come from src/verify/property.ts (caseArb with the world size
 * fixed at mpirun's -np), inputs from its caseValues; every rank draws the same case from the
 * same seed, runs it on a fresh communicator (MPI_Comm_split, so a broken case's stray messages
 * cannot reach the next), and all ranks agree on the verdict with a built-in allreduce.
 *
 * The oracle per collective (in place where MPI has an in-place form and the case is in place):
 *
 * | collective    | MPI's built-in                                                          |
 * |---------------|-------------------------------------------------------------------------|
 * | broadcast     | MPI_Bcast (root: its input copied into its output first)                |
 * | reduce        | MPI_Reduce                                                              |
 * | gather        | MPI_Gather                                                              |
 * | scatter       | MPI_Scatter                                                             |
 * | allgather     | MPI_Allgather                                                           |
 * | reducescatter | MPI_Reduce_scatter_block: cclab's count is per rank (input count·n), so |
 * |               | it fits every count, 0 and count < n included; no reference.ts needed  |
 * | allreduce     | MPI_Allreduce                                                           |
 * | alltoall      | MPI_Alltoall                                                            |
 * | alltoallv     | MPI_Alltoallv (counts from the case's split matrix, packed displs)     |
 * | barrier       | none: it must return on every rank, and no rank may leave before the   |
 * |               | last one entered (wall-clock stamps; one rank enters 15 ms late)       |
 *
 * avg and premulsum go through MpiEngine's scaling around MPI_SUM (see src/backends/mpi/builtin.ts).
 *
 * Where MPI's built-in reduction does not compute docs/semantics.md (builtinNotOracle says why:
 * int8/uint8 sums, float32/float64 min/max with NaN), the case compares with the sequential
 * oracle instead, on every rank's inputs rebuilt from the case.
 *
 * Inputs (verify/values.ts) carry special values in every dtype, exact in every order of
 * reduction. Comparison: data movement and the sequential oracle by bytes; MPI's reductions by
 * value (NaN equals NaN: MPI's NaN bits are the CPU's), exact except that a non-integer float
 * result may differ by FLOAT_TOLERANCE: |got − want| ≤ 2·ε·max(1, |want|), ε the dtype's machine
 * epsilon (2^-52, 2^-23, 2^-10, 2^-7 for float64, float32, float16, bfloat16).
 */
import { hostname } from "node:os";
import type { MpiComm } from "../backends/mpi/comm.js";
import { allocate, invoke } from "../collectives/dispatch.js";
import { reference } from "../collectives/reference.js";
import { tensor, type View, view, zeros } from "../core/buffer.js";
import { type DType, type TypedArray, toValues } from "../core/dtype.js";
import type { Algorithm } from "../schedule/dsl.js";
import { rankCall, specOf } from "../specs/index.js";
import type { RankCall } from "../specs/types.js";
import { type Case, caseValues, fmt, hostArray, same } from "./property.js";
import { describeDifference, firstDifference, showElement } from "./values.js";

/** Machine epsilon per float dtype; the tolerance is 2·ε relative (absolute below 1). */
export const FLOAT_EPSILON: Readonly<Partial<Record<DType, number>>> = {
  float64: 2 ** -52,
  float32: 2 ** -23,
  float16: 2 ** -10,
  bfloat16: 2 ** -7,
};
export const FLOAT_TOLERANCE = "|got - want| <= 2·eps·max(1, |want|) for non-integer float results, else exact";

/** Whether got matches want: exact, except non-integer float results within 2·ε relative. */
export function agrees(dtype: DType, got: number | bigint | undefined, want: number | bigint | undefined): boolean {
  if (same(got, want)) return true;
  const eps = FLOAT_EPSILON[dtype];
  if (eps === undefined || typeof got !== "number" || typeof want !== "number") return false;
  if (Number.isInteger(want) || !Number.isFinite(want)) return false;
  return Math.abs(got - want) <= 2 * eps * Math.max(1, Math.abs(want));
}

const errText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/**
 * MPI's own collective on `input` (this rank's input values), laid out like the case (in place
 * where the case is); returns where MPI put this rank's result.
 */
async function builtinOutput(comm: MpiComm, c: RankCall, input: TypedArray): Promise<View> {
  const b = allocate(comm, c);
  hostArray(b.input as View).set(input as never);
  const x = { call: c, input: b.input, output: b.output };
  await specOf(c.collective).builtin.run(comm.builtin.spec, x);
  return b.output as View;
}

/**
 * Why MPI's built-in cannot serve as the oracle for case c, or undefined where it can. Then the
 * case compares with the sequential oracle (semantics.md rules named in the reason).
 */
export function builtinNotOracle(c: Case): string | undefined {
  if (!specOf(c.collective).reducing) return undefined;
  const sum = c.op.name === "sum" || c.op.name === "avg" || c.op.name === "premulsum";
  if (sum && (c.dtype === "int8" || c.dtype === "uint8")) {
    return "Open MPI's AVX op component saturates int8/uint8 sums in vector lanes and wraps them in the scalar tail (open-mpi/ompi#8045, closed wontfix), where semantics.md I1 wraps";
  }
  if ((c.op.name === "min" || c.op.name === "max") && (c.dtype === "float32" || c.dtype === "float64")) {
    return "MPI_MIN/MPI_MAX keep or drop a NaN operand by its position, where semantics.md F3 ignores NaN and orders -0 below +0";
  }
  return undefined;
}

/** The sequential oracle's output for this rank, from every member's input rebuilt from the case. */
function oracleOutput(comm: MpiComm, c: Case): TypedArray {
  const spec = specOf(c.collective);
  const inputs = Array.from({ length: comm.size }, (_, r) => caseValues(c, r, spec.layout(rankCall(c, r)).inputCount));
  return reference(c, inputs)[comm.rank] as TypedArray;
}

/** This rank's verdict on a data-moving case: undefined when it agrees with MPI's built-in. */
async function dataCase(comm: MpiComm, alg: Algorithm, c: Case): Promise<string | undefined> {
  const rc = rankCall(c, comm.rank);
  const b = allocate(comm, rc);
  const inArr = hostArray(b.input as View);
  inArr.set(caseValues(c, comm.rank, inArr.length) as never);
  const saved = inArr.slice() as TypedArray;
  await invoke(comm, rc, alg, b);
  const out = hostArray(b.output as View);
  const where = `rank ${comm.rank} (world ${comm.worldRanks[comm.rank]})`;
  const why = builtinNotOracle(c);
  if (why) {
    const d = describeDifference(c.dtype, out, oracleOutput(comm, c), "output", "the sequential oracle gives");
    if (d) return `${where}: ${d} (compared with the oracle, not MPI: ${why})`;
  } else {
    const mpiOut = hostArray(await builtinOutput(comm, rc, saved));
    const got = toValues(c.dtype, out);
    const want = toValues(c.dtype, mpiOut);
    const bad = specOf(c.collective).reducing
      ? want.findIndex((v, i) => !agrees(c.dtype, got[i], v))
      : firstDifference(c.dtype, out, mpiOut);
    if (bad >= 0 || got.length !== want.length) {
      const at = bad >= 0 ? bad : Math.min(got.length, want.length);
      return `${where}: output[${at}] = ${showElement(c.dtype, out, at)}, MPI's built-in gives ${showElement(c.dtype, mpiOut, at)} (output ${fmt(got)}, MPI ${fmt(want)})`;
    }
  }
  const aliased = b.memory.length === 1 && !(specOf(c.collective).rooted && comm.rank !== c.root);
  const changed = aliased ? undefined : describeDifference(c.dtype, inArr, saved, "input", "was");
  if (changed) return `${where}: the input buffer changed, ${changed}; out of place it must not`;
  return undefined;
}

/** A 32-bit FNV-1a hash of this host's name: wall-clock stamps only compare on one host. */
function hostHash(): number {
  let h = 0x811c9dc5;
  for (const ch of hostname()) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return h;
}

export const BARRIER_LATE_MS = 15;

/**
 * Barrier: the hand-rolled one must return on every rank, and no rank may leave before the last
 * one entered. One rank (chosen by the case) enters BARRIER_LATE_MS late; every rank stamps
 * Date.now() (CLOCK_REALTIME, one clock for every process on a host) on entry and exit, and the
 * stamps are all-gathered with the built-in: max(entry) <= min(exit) must hold. Across hosts the
 * clocks are not comparable, so there the check is only that it returns.
 */
async function barrierCase(comm: MpiComm, alg: Algorithm, c: Case): Promise<string | undefined> {
  const late = c.valueSeed % comm.size;
  if (comm.rank === late) await new Promise((r) => setTimeout(r, BARRIER_LATE_MS));
  const entered = Date.now();
  const rc = rankCall(c, comm.rank);
  await invoke(comm, rc, alg, allocate(comm, rc));
  const left = Date.now();
  const all = zeros("float64", 3 * comm.size);
  comm.builtin.allgather(view(tensor("float64", [entered, left, hostHash()])), view(all), 3);
  const data = all.data as Float64Array;
  const stamps = Array.from({ length: comm.size }, (_, r) => Array.from(data.subarray(3 * r, 3 * r + 3)));
  if (stamps.some((s) => s[2] !== stamps[0]?.[2])) return undefined;
  const lastIn = Math.max(...stamps.map((s) => s[0] as number));
  const firstOut = Math.min(...stamps.map((s) => s[1] as number));
  if (firstOut < lastIn) {
    const who = stamps.findIndex((s) => s[1] === firstOut);
    const last = stamps.findIndex((s) => s[0] === lastIn);
    return `rank ${who} left the barrier at ${firstOut} ms, before rank ${last} entered it at ${lastIn} ms (rank ${late} entered ${BARRIER_LATE_MS} ms late)`;
  }
  return undefined;
}

/**
 * Every rank agrees on the verdict: the lowest failing world rank (by a built-in MIN allreduce)
 * broadcasts its message, so every rank returns the same string and fast-check shrinks the same
 * way everywhere.
 */
function agree(world: MpiComm, local: string | undefined): string | undefined {
  const first = zeros("int32", 1);
  world.builtin.allreduce(view(tensor("int32", [local === undefined ? world.size : world.rank])), view(first), "min");
  const who = first.data[0] as number;
  if (who === world.size) return undefined;
  const bytes = who === world.rank ? new TextEncoder().encode(local) : undefined;
  const len = tensor("int32", [bytes?.length ?? 0]);
  world.builtin.bcast(view(len), who);
  const msg = zeros("uint8", len.data[0] as number);
  if (bytes) (msg.data as Uint8Array).set(bytes);
  world.builtin.bcast(view(msg), who);
  return new TextDecoder().decode(msg.data as Uint8Array);
}

/**
 * Runs case c of `alg` on `world` (every rank of it calls this with the same case) and returns
 * the agreed difference, or undefined when every member's output equals MPI's built-in.
 */
export async function runMpiCase(world: MpiComm, alg: Algorithm, c: Case): Promise<string | undefined> {
  const members = c.members ?? Array.from({ length: world.size }, (_, i) => i);
  const comm = await world.split(members);
  let local: string | undefined;
  try {
    if (comm.rank >= 0) {
      const mc = comm as MpiComm;
      local = specOf(c.collective).data ? await dataCase(mc, alg, c) : await barrierCase(mc, alg, c);
    }
  } catch (e) {
    local = `rank ${comm.rank} (world ${world.rank}): ${errText(e)}`;
  }
  const verdict = agree(world, local);
  comm.destroy();
  return verdict;
}
