/**
 * Host time per enqueued step on the nccl backend (issue 23's "< 10 µs" target), a cclab program:
 *   node src/cli/bin.js run -n 2 --backend nccl test/gpu/enqueue-cost.ts [calls, default 500]
 * For each algorithm, after a warm-up, times `calls` all-reduces of 1 KiB as JavaScript issues
 * them (a call's promise resolves once its steps are enqueued on the stream, not when they ran),
 * counts the NCCL groups they enqueued (one per step: ncclGroupStart .. ncclGroupEnd around its
 * sends and receives) by wrapping the addon's groupEnd, and prints the host µs per step and per
 * call, then the time until the device finished them. Rank 0 prints; every rank's figure is its own.
 */
import { NcclComm } from "../../src/backends/nccl/index.js";
import { allReduce } from "../../src/collectives/api.js";
import type { Comm } from "../../src/comm.js";
import { view } from "../../src/core/buffer.js";
import { findLayer } from "../../src/runtime/guard.js";

export async function main(comm: Comm, args: string[]): Promise<void> {
  const nccl = findLayer(comm, (c): c is NcclComm => c instanceof NcclComm);
  if (!nccl) throw new Error(`test/gpu/enqueue-cost.ts needs the nccl backend, got '${comm.backend}'`);
  const calls = Number(args[0] ?? 500);
  const native = nccl.device.native as { groupEnd: () => number };
  const groupEnd = native.groupEnd.bind(native);
  let groups = 0;
  native.groupEnd = () => {
    groups++;
    return groupEnd();
  };
  const buf = comm.alloc("float32", 256);
  for (const algorithm of ["ring", "double_binary_tree", "segmented_ring", "recursive_doubling"]) {
    for (let i = 0; i < 200; i++) await allReduce(comm, view(buf), { algorithm, op: "max" });
    await comm.synchronize();
    await nccl.builtin.barrier();
    groups = 0;
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await allReduce(comm, view(buf), { algorithm, op: "max" });
    const hostUs = (performance.now() - t0) * 1000;
    await comm.synchronize();
    const wallUs = (performance.now() - t0) * 1000;
    await nccl.builtin.barrier();
    if (groups === 0)
      throw new Error(`enqueue-cost: ${algorithm} enqueued no NCCL group (is groupEnd still the addon's?)`);
    if (comm.rank === 0) {
      console.log(
        `enqueue ${algorithm}: ${calls} calls of 1 KiB on ${comm.size} ranks, ${groups} steps: ` +
          `host ${(hostUs / groups).toFixed(2)} µs a step, ${(hostUs / calls).toFixed(1)} µs a call to enqueue; ` +
          `${(wallUs / calls).toFixed(1)} µs a call until done`,
      );
    }
  }
  native.groupEnd = groupEnd;
  console.log(`done ${comm.rank}/${comm.size}`);
}
