/**
 * The all-reduce the hand-run tools of test/perf time on MPI (stalls, first-call, alloc,
 * per-rank): float32 sum of `bytes` on every rank of `comm`, its buffers made once, and calls of
 * it as bench makes them: an algorithm through invoke() (the front API's validation, plan cache
 * and fast path), or MPI_Allreduce on the same buffers.
 */
import type { MpiComm } from "../../src/backends/mpi/index.js";
import { allocate, invoker } from "../../src/collectives/dispatch.js";
import { findAlgorithm } from "../../src/schedule/registry.js";
import { makeCall, rankCall, specOf } from "../../src/specs/index.js";

export function allReduceCall(comm: MpiComm, bytes: number, tool: string) {
  const mine = rankCall(
    makeCall({ collective: "allreduce", size: comm.size, count: bytes / 4, dtype: "float32" }),
    comm.rank,
  );
  const bufs = allocate(comm, mine);
  return {
    /** One call of `algorithm` (a registered name), as bench calls it. */
    hand(algorithm: string): { readonly name: string; readonly run: () => Promise<void> } {
      const { name } = findAlgorithm("allreduce", algorithm, { op: tool });
      return { name, run: invoker(comm, mine, name, bufs) };
    },
    /** One MPI_Allreduce on the same buffers, as bench's built-in row. */
    builtin(): () => unknown {
      const x = { call: mine, input: bufs.input, output: bufs.output };
      return () => specOf("allreduce").builtin.run(comm.builtin.spec, x);
    },
  };
}
