/**
 * The program `cclab verify --backend nccl` (and test/gpu) runs on every rank through cclab run:
 * main(comm, [optionsJson]) checks each selected algorithm on the differential cases of
 * differential.ts and prints one line per algorithm:
 *
 *   CCLAB_NCCL_RESULT {"rank":0,"collective":"allreduce","algorithm":"ring","size":4,...,"failures":[]}
 *
 * which the parent collects. A failing case does not stop the run (every rank keeps issuing the
 * same collectives); an error (timeout, NCCL error) fails the rank and so the job. Under
 * `--topology` (cclab run gave the world comm its shape) every algorithm is bound to that shape.
 */

import { NcclComm } from "../backends/nccl/comm.js";
import { topologyOf } from "../collectives/plans.js";
import type { Comm } from "../comm.js";
import type { DType } from "../core/dtype.js";
import { findLayer } from "../layer.js";
import { allAlgorithms } from "../schedule/registry.js";
import { withShape } from "../schedule/shape.js";
import { loadAlgorithmFile } from "./load.js";
import { runNcclAlgorithm } from "./nccl-cases.js";

export interface WorkerOptions {
  readonly collective?: string;
  readonly algorithm?: string;
  readonly algorithmFile?: string;
  readonly runs: number;
  readonly seed: number;
  readonly dtypes?: readonly DType[];
}

export const RESULT_TAG = "CCLAB_NCCL_RESULT ";

export async function main(comm: Comm, args: string[]): Promise<void> {
  const o = JSON.parse(args[0] ?? "{}") as WorkerOptions;
  const nccl = findLayer(comm, (c): c is NcclComm => c instanceof NcclComm);
  if (!nccl) throw new Error(`verify-worker needs the nccl backend, got '${comm.backend}'`);
  const pool = o.algorithmFile ? await loadAlgorithmFile(o.algorithmFile) : allAlgorithms();
  const shape = topologyOf(comm);
  const algs = pool
    .filter((a) => (!o.collective || a.collective === o.collective) && (!o.algorithm || a.name === o.algorithm))
    .map((a) => (shape ? withShape(a, shape, { op: "verify", arg: "--topology" }) : a));
  for (const alg of algs) {
    const r = await runNcclAlgorithm(comm, nccl.builtin, alg, o.runs, o.seed, o.dtypes);
    process.stdout.write(`${RESULT_TAG}${JSON.stringify({ rank: comm.rank, ...r })}\n`);
  }
  await comm.synchronize();
}
