/**
 * What a command asks of the network model (--topology with its link flags, --placement,
 * --engine, --threads, --solve-budget), as parsed once in src/cli/network-options.ts: a type only, so the bench's options
 * can carry it without importing the model.
 */
import type { Engine, LinkOptions } from "./network/index.js";

export interface NetworkRequest {
  readonly topology: string;
  readonly links: LinkOptions;
  readonly placement?: string;
  readonly engine?: Engine;
  /** --engine simgrid: time the one call on SimGrid instead (src/export/simgrid.ts); engine is then exact's reach. */
  readonly simgrid?: boolean;
  /** Threads solving the phases engine's distinct rounds at once (default: the machine's cores). */
  readonly threads?: number;
  /** The link crossings one call's rate solves may scan before it is refused (default SOLVE_WORK). */
  readonly solveBudget?: number;
}
