/**
 * Every error cclab raises. Messages name the rank, the operation and the argument
 * (or the peer and step) so a failure in a 64-rank run points at one place.
 */

export interface ErrorSite {
  /** Rank (in the communicator the call was made on) that raised the error; omitted before a rank exists. */
  readonly rank?: number;
  /** Public operation, e.g. 'allReduce', 'send', 'spawn'. */
  readonly op: string;
  /** Argument at fault, e.g. 'count', 'peer', 'options.root'. */
  readonly arg?: string;
}

function where(site: ErrorSite): string {
  const parts: string[] = [];
  if (site.rank !== undefined) parts.push(`rank ${site.rank}`);
  parts.push(site.op);
  if (site.arg !== undefined) parts.push(`argument '${site.arg}'`);
  return parts.join(": ");
}

export class CclabError extends Error {
  override name = "CclabError";
}

/** A caller passed something invalid at the public boundary. */
export class InvalidArgumentError extends CclabError {
  override name = "InvalidArgumentError";
  constructor(
    readonly site: ErrorSite,
    detail: string,
  ) {
    super(`${where(site)}: ${detail}`);
  }
}

/** A send and the receive it matched disagree on size or dtype (NCCL would hang or corrupt). */
export class MismatchError extends CclabError {
  override name = "MismatchError";
}

/** No rank can progress; the message explains the wait-for graph. */
export class DeadlockError extends CclabError {
  override name = "DeadlockError";
  constructor(
    message: string,
    /** Every blocked operation, one line each. */
    readonly blocked: readonly BlockedOp[],
    /** The wait-for cycle, as world ranks in order, if there is one. */
    readonly cycle: readonly number[],
  ) {
    super(message);
  }
}

export interface BlockedOp {
  readonly rank: number;
  readonly kind: "send" | "recv";
  readonly peer: number;
  readonly count: number;
  readonly dtype: string;
  readonly label?: string;
}

/** An operation was cut short because the communicator was aborted (another rank failed, a timeout). */
export class AbortError extends CclabError {
  override name = "AbortError";
}

/** A blocking operation ran past its timeout. */
export class TimeoutError extends CclabError {
  override name = "TimeoutError";
}

/** A rank's function threw; wraps the original error and names the rank. */
export class RankError extends CclabError {
  override name = "RankError";
  constructor(
    readonly rank: number,
    override readonly cause: unknown,
  ) {
    const msg = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`rank ${rank} failed: ${msg}`);
  }
}

/** An engine (MPI, NCCL, CUDA) reported an error; carries the engine's own code and message. */
export class EngineError extends CclabError {
  override name = "EngineError";
  constructor(
    readonly engine: string,
    readonly code: number,
    readonly engineMessage: string,
    context: string,
  ) {
    super(`${context}: ${engine} error ${code}: ${engineMessage}`);
  }
}

/**
 * An algorithm file is malformed or wrong (an MSCCL XML program: bad XML, a send with no
 * matching receive, a missing dependency, a result that is not the collective); the message
 * names the file, the GPU, the threadblock and the step.
 */
export class AlgorithmFileError extends CclabError {
  override name = "AlgorithmFileError";
}

/** A backend or engine is not available on this machine; the message says how to get it. */
export class UnavailableError extends CclabError {
  override name = "UnavailableError";
}
