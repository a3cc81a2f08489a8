/**
 * A cclab program (main(comm)) that test/gpu runs on real GPUs with cclab run --backend nccl:
 * issue 15's cases (test/support/semantics-cases.ts, docs/semantics.md) of this world's size on
 * every rank, the device kernels (native/cuda_reduce.cu) doing the local reductions; "ok
 * <rank>/<size> <case>" or "FAIL <rank>/<size> <case>: <why>" per case, then "done".
 */
import { NcclComm } from "../../src/backends/nccl/index.js";
import type { Comm } from "../../src/comm.js";
import { findLayer } from "../../src/runtime/guard.js";
import { runSemanticsCase, semanticsCases } from "../support/semantics-cases.js";

export async function main(comm: Comm): Promise<void> {
  const nccl = findLayer(comm, (c): c is NcclComm => c instanceof NcclComm);
  if (!nccl) throw new Error(`test/gpu/semantics.ts needs the nccl backend, got '${comm.backend}'`);
  for (const c of semanticsCases().filter((x) => x.size === comm.size)) {
    const err = await runSemanticsCase(c, comm);
    await comm.synchronize();
    await nccl.builtin.barrier();
    console.log(err ? `FAIL ${comm.rank}/${comm.size} ${c.name}: ${err}` : `ok ${comm.rank}/${comm.size} ${c.name}`);
  }
  console.log(`done ${comm.rank}/${comm.size}`);
}
