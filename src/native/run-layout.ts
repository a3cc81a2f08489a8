/**
 * The plan runner's arrays that TypeScript fills and native/mpi.cc reads (runBind, runProgress),
 * slot by slot: `ctrl`, a call's numbers, and `desc`, one record of DESC.stride numbers per transfer
 * to post. src/backends/mpi/plan-run.ts writes them by these names; native/run_layout.h, which
 * mpi.cc reads them by, is generated from this file (`npx tsx src/tools/run-layout.ts`), and
 * test/run-layout.test.ts fails when the two differ.
 */

/** ctrl: Float64Array(CTRL.length). Memory m's bytes [lo, hi) are at memLo + 2m and memLo + 2m + 1. */
export const CTRL = {
  /** Requests already posted, tested again by this call. */
  count: 0,
  /** Transfers this call posts first (desc's first `posts` records). */
  posts: 1,
  /** Microseconds the call may wait for completions. */
  budgetUs: 2,
  /** 1: yield the CPU (sched_yield) between tests. */
  yieldCpu: 3,
  /** Microseconds to sleep between tests (0: none). */
  sleepUs: 4,
  /** Return once this many requests have completed. */
  minDone: 5,
  /** 1: return as soon as a request whose wake byte is set completes. */
  useWake: 6,
  /** Memory 0's lowest byte a post may touch; memory m's at memLo + 2m, its end at memLo + 2m + 1. */
  memLo: 7,
  /** Slots in all (three memories). */
  length: 13,
} as const;

/** desc: one record per transfer to post, DESC.stride numbers each. */
export const DESC = {
  /** DESC_SEND or DESC_RECV. */
  kind: 0,
  /** Which memory (0, 1, 2: the runProgress argument) holds the bytes. */
  mem: 1,
  /** Byte offset from the start of the memory's ArrayBuffer. */
  offset: 2,
  /** Bytes to send or receive. */
  bytes: 3,
  /** The peer's rank in the communicator. */
  peer: 4,
  /** The MPI tag (MPI_ANY_TAG for a receive that takes any). */
  tag: 5,
  stride: 6,
} as const;

export const DESC_SEND = 0;
export const DESC_RECV = 1;

/** native/run_layout.h: the same slots as C++ constants. */
export function runLayoutHeader(): string {
  const name = (group: string, key: string) => `k${group}${key[0]?.toUpperCase()}${key.slice(1)}`;
  const lines = [
    "// Generated from src/native/run-layout.ts by `npx tsx src/tools/run-layout.ts`; do not edit by hand",
    "// (test/run-layout.test.ts fails when this file and the TypeScript differ). The plan runner's",
    "// ctrl and desc slots: what src/backends/mpi/plan-run.ts writes and mpi.cc reads.",
    "#pragma once",
    "",
    "#include <cstddef>",
    "",
    "namespace cclab::run {",
    "",
    ...Object.entries(CTRL).map(([k, v]) => `constexpr size_t ${name("Ctrl", k)} = ${v};`),
    ...Object.entries(DESC).map(([k, v]) => `constexpr size_t ${name("Desc", k)} = ${v};`),
    `constexpr double kDescSend = ${DESC_SEND};`,
    `constexpr double kDescRecv = ${DESC_RECV};`,
    "",
    "}  // namespace cclab::run",
    "",
  ];
  return lines.join("\n");
}
