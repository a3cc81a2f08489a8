/**
 * What `cclab model` and `cclab bench --backend sim` are asked when they model a network
 * (`--topology` and the link flags, parsed once in src/cli/network-options.ts): the request, the
 * machine it builds for n ranks (topology and placement), and one call timed on it.
 */
import { algBandwidth, busBandwidth, shapeOf } from "../bench/metrics.js";
import type { DType } from "../core/dtype.js";
import type { Algorithm } from "../schedule/dsl.js";
import { type Collective, makeCall } from "../specs/index.js";
import type { CollectiveCall } from "../specs/types.js";
import {
  describeTopology,
  type Engine,
  type NetworkParams,
  type NetworkResult,
  networkTime,
  type Placement,
  parseTopology,
  placeRanks,
  type Topology,
} from "./network/index.js";
import type { NetworkRequest } from "./request.js";

export type { NetworkRequest } from "./request.js";

/** The request built for n ranks. */
export interface Machine {
  readonly request: NetworkRequest;
  readonly topology: Topology;
  readonly placement: Placement;
  readonly engine: Engine;
  readonly description: readonly string[];
}

/** Builds the topology for n ranks and places them (errors name --topology or --placement). */
export function machineFor(request: NetworkRequest, n: number): Machine {
  const topology = parseTopology(request.topology, n, request.links);
  const placement = placeRanks(topology, n, request.placement);
  return { request, topology, placement, engine: request.engine ?? "auto", description: describeTopology(topology) };
}

/** One call of `alg` on the machine, gamma µs per byte reduced. */
export function timeOnMachine(
  alg: Algorithm,
  call: CollectiveCall,
  m: Machine,
  gamma = 0,
  onProgress?: NetworkParams["onProgress"],
): NetworkResult {
  return networkTime(alg, call, {
    topology: m.topology,
    placement: m.placement,
    gamma,
    engine: m.engine,
    ...(m.request.threads !== undefined ? { threads: m.request.threads } : {}),
    ...(m.request.solveBudget !== undefined ? { solveWork: m.request.solveBudget } : {}),
    ...(onProgress ? { onProgress } : {}),
  });
}

/** algbw and busbw in GB/s (1e9 bytes per second): nccl-tests' definitions, as cclab bench (spec.busFactor). */
export function bandwidths(
  collective: Collective,
  n: number,
  size: number,
  us: number,
): { algbw: number; busbw: number } {
  return { algbw: algBandwidth(size, us), busbw: busBandwidth(collective, n, size, us) };
}

/**
 * The call the front API would make for S bytes on n ranks, S as nccl-tests (and cclab bench,
 * shapeOf) mean it: the element count S / s, per rank S / (n·s) for the per-rank collectives
 * (allgather, reducescatter, ...), rounded down; `size` is the bytes that count moves.
 */
export function callOf(
  alg: Algorithm,
  n: number,
  bytes: number,
  o: { dtype: DType; root?: number; segment?: number },
): { call: CollectiveCall; size: number } {
  const { count, size } = shapeOf(alg.collective as Collective, n, bytes, o.dtype);
  return {
    call: makeCall(
      { collective: alg.collective, size: n, count, root: o.root ?? 0, dtype: o.dtype, segment: o.segment },
      alg,
    ),
    size,
  };
}
