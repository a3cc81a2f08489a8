/**
 * cclab's public API as the playground carries it: what src/index.ts exports, less what needs
 * Node or a device (the mpi/nccl backends and device memory, init/finalize of a process job,
 * writing trace files). A program's `import ... from "../src/index.js"` (or "cclab") gets this.
 */
export * from "../../collectives/api.js";
export { chooseAlgorithm, RULES } from "../../collectives/auto.js";
export { allGatherObject, broadcastObject } from "../../collectives/objects.js";
export { reference } from "../../collectives/reference.js";
export type { CollectiveEvent, Comm, OpOptions, P2POp, Work } from "../../comm.js";
export * from "../../core/index.js";
export { type CheckReport, checkAlgorithm } from "../../schedule/check.js";
export type {
  Algorithm,
  Cost,
  Formula,
  LocalOp,
  Memory,
  Region,
  Schedule,
  Step,
  Transfer,
} from "../../schedule/dsl.js";
export * as build from "../../schedule/dsl.js";
export { defineAlgorithm } from "../../schedule/dsl.js";
export { execute } from "../../schedule/executor.js";
export { explain, explainCall } from "../../schedule/explain.js";
export { compile, type Plan, type PlanOp } from "../../schedule/plan.js";
export { algorithmsOf, allAlgorithms, findAlgorithm, registerAlgorithm } from "../../schedule/registry.js";
export { type SimOptions, spawn } from "../../sim/index.js";
export { COLLECTIVES, type Collective, makeCall, rankCall, SPECS, specOf } from "../../specs/index.js";
export { type DeadlockRecord, Trace, type TraceEvent, type TraceKind } from "../../trace.js";
export { withTracing } from "../../tracing.js";
export { deadlockDot, deadlockSvg, htmlPage, lineChartSvg, traceSvg, traceTable } from "../../viz/index.js";
export { toPerfetto } from "../../viz/perfetto.js";

const SIM_ONLY = "the playground runs main(comm) on simulated ranks only (no process job, no device)";

/** init() joins a multi-process job: not here. */
export function init(): never {
  throw new Error(`init(): ${SIM_ONLY}; write main(comm) and press Run`);
}

export function finalize(): never {
  throw new Error(`finalize(): ${SIM_ONLY}`);
}

export function toDevice(): never {
  throw new Error(`toDevice(): ${SIM_ONLY}`);
}

export const toHost = toDevice;
export const readDevice = toDevice;
export const writeDevice = toDevice;
