/**
 * What every verify driver shares (sim in run.ts, mpi.ts, nccl.ts): the options `cclab verify`
 * takes and the JSON report each prints with --json. Kept apart from run.ts so the engine
 * drivers, which run.ts loads only when asked, import it without importing run.ts back.
 */
import type { Shape } from "../specs/types.js";
import type { Machine } from "../tools/topology-shape.js";

export interface VerifyOptions {
  collective?: string;
  algorithm?: string;
  algorithmFile?: string;
  size: number;
  runs: number;
  seed?: number;
  backend: string;
  /** mpi/nccl: world sizes to run, e.g. '4' or '2,3' (default 2..5; or $CCLAB_MPI_NP). */
  np?: string;
  /** sim: the property tests' world sizes (default: drawn from 1..17), which the static proof covers too. */
  sizes?: readonly number[];
  /** sim: how long shrinking a failing property case may take (default run.ts SHRINK_SECONDS; 0: no shrinking). */
  shrinkSeconds?: number;
  /** sim: the heap one proof at 128 ranks or more may use, in MiB (`--proof-memory`; default proofs.ts PROOF_HEAP_MIB). */
  proofMemory?: number;
  /** Print a VerifyReport as JSON on stdout instead of the table. */
  json?: boolean;
  /** `--topology`: the machine every algorithm is bound to (src/schedule/shape.ts), at its rank count only. */
  shape?: Shape;
  /** mpi/nccl `--topology` and `--placement`: each rank binds every algorithm to the shape they give its world. */
  machine?: Machine;
}

/** `cclab verify --json`, on every backend: one result per algorithm. */
export interface VerifyReport {
  readonly tool: "cclab verify";
  readonly backend: string;
  readonly seed: number;
  readonly runs: number;
  readonly ok: boolean;
  readonly seconds: number;
  readonly results: readonly {
    readonly collective: string;
    readonly algorithm: string;
    /** World sizes it ran on (sim: the static proof's 1..--max-n and each -n). */
    readonly nranks: readonly number[];
    readonly cases: number;
    readonly ok: boolean;
    readonly failure?: string;
    readonly replay?: string;
  }[];
}

export function printReport(r: VerifyReport): void {
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
