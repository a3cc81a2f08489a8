/**
 * The GPU checks as plain functions, so vitest (npm run test:gpu) and a bare machine without
 * vitest (test/gpu/run.ts, see docs/gpu.md) run the same thing:
 *
 * - p2p: test/gpu/p2p.ts under cclab run --backend nccl at each world size (ranks beyond the
 *   GPUs share them through per-rank NCCL_HOSTID), the timeout case included;
 * - semantics: test/gpu/semantics.ts the same way, issue 15's cases of docs/semantics.md with
 *   the CUDA kernels doing the local reductions;
 * - differential: every algorithm against NCCL's builtin and the oracle at each world size, all
 *   dtypes (float16 and bfloat16 included), with NCCL_ALGO=Ring for every collective and
 *   NCCL_ALGO=Tree for all-reduce (Tree implements nothing else; NCCL refuses it elsewhere).
 */
import { fileURLToPath } from "node:url";
import { type LaunchResult, launch } from "../../src/runtime/launch.js";
import { type NcclRunResult, ncclSizes, runNcclDifferential } from "../../src/verify/nccl.js";

export const P2P_PROGRAM = fileURLToPath(new URL("./p2p.ts", import.meta.url));
export const SEMANTICS_PROGRAM = fileURLToPath(new URL("./semantics.ts", import.meta.url));

export function gpuSizes(devices: number): number[] {
  return ncclSizes(devices);
}

export interface P2PRun {
  readonly result: LaunchResult;
  readonly output: string;
}

export async function runP2P(n: number, echo: (l: string) => void = () => {}): Promise<P2PRun> {
  return runProgram(n, P2P_PROGRAM, ["timeout"], echo);
}

/** docs/semantics.md's cases (test/support/semantics-cases.ts) of size n on n GPUs: every line "ok ...", n "done" lines. */
export async function runSemantics(n: number, echo: (l: string) => void = () => {}): Promise<P2PRun> {
  return runProgram(n, SEMANTICS_PROGRAM, [], echo);
}

async function runProgram(n: number, program: string, args: string[], echo: (l: string) => void): Promise<P2PRun> {
  let output = "";
  const take = (t: string) => {
    output += t;
    for (const l of t.split("\n")) if (l) echo(l);
  };
  const result = await launch({
    nprocs: n,
    backend: "nccl",
    program,
    args,
    timeoutMs: 120_000,
    stdout: take,
    stderr: take,
  });
  return { result, output };
}

export const RING_AND_TREE: readonly { readonly algo: string; readonly collective?: string }[] = [
  { algo: "Ring" },
  { algo: "Tree", collective: "allreduce" },
];

export async function runDifferential(
  n: number,
  algo: { algo: string; collective?: string },
  runs: number,
  seed: number,
  echo: (l: string) => void = () => {},
): Promise<NcclRunResult> {
  return runNcclDifferential({
    sizes: [n],
    runs,
    seed,
    collective: algo.collective,
    ncclAlgos: [algo.algo],
    echo,
  });
}
