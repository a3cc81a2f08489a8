/**
 * A cclab program (main(comm, args)) that test/gpu runs on real GPUs with cclab run --backend
 * nccl: every case of p2p-cases.ts on every rank, a barrier after each, "ok <rank>/<size> <case>"
 * per case; with the argument "timeout", last, the case that times out and aborts.
 */
import { NcclComm } from "../../src/backends/nccl/index.js";
import type { Comm } from "../../src/comm.js";
import { findLayer } from "../../src/runtime/guard.js";
import { P2P_CASES, TIMEOUT_CASE } from "./p2p-cases.js";

export async function main(comm: Comm, args: string[]): Promise<void> {
  const nccl = findLayer(comm, (c): c is NcclComm => c instanceof NcclComm);
  if (!nccl) throw new Error(`test/gpu/p2p.ts needs the nccl backend, got '${comm.backend}'`);
  for (const [name, fn] of P2P_CASES) {
    await fn(comm);
    await comm.synchronize();
    await nccl.builtin.barrier();
    console.log(`ok ${comm.rank}/${comm.size} ${name}`);
  }
  if (args.includes("timeout")) {
    const [name, fn] = TIMEOUT_CASE;
    await fn(comm, (ms) => {
      nccl.device.timeoutMs = ms;
    });
    console.log(`ok ${comm.rank}/${comm.size} ${name}`);
  }
  console.log(`done ${comm.rank}/${comm.size}`);
}
