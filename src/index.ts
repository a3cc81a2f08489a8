/** cclab's public API: core types, the point-to-point interface, the collectives, the specs, the schedule language and the tools behind the CLI. */
export * from "./collectives/api.js";
export { chooseAlgorithm, RULES } from "./collectives/auto.js";
export { allGatherObject, broadcastObject } from "./collectives/objects.js";
export { reference } from "./collectives/reference.js";
export type { CollectiveEvent, Comm, OpOptions, P2POp, Work } from "./comm.js";
export * from "./core/index.js";
export { init } from "./runtime/init.js";
export { type CheckReport, checkAlgorithm } from "./schedule/check.js";
export type { Algorithm, Cost, Formula, LocalOp, Memory, Region, Schedule, Step, Transfer } from "./schedule/dsl.js";
/** The schedule language (send, recv, copy, reduce, step, partition, ...): `build.send(...)`, or import from "cclab/dsl". */
export * as build from "./schedule/dsl.js";
export { defineAlgorithm } from "./schedule/dsl.js";
export { execute } from "./schedule/executor.js";
export { explain, explainCall } from "./schedule/explain.js";
export { compile, type Plan, type PlanOp } from "./schedule/plan.js";
export { algorithmsOf, allAlgorithms, findAlgorithm, registerAlgorithm } from "./schedule/registry.js";
export { type SimOptions, spawn } from "./sim/index.js";
export { COLLECTIVES, type Collective, makeCall, rankCall, SPECS, specOf } from "./specs/index.js";
export type * from "./specs/types.js";
export { Trace, type TraceEvent } from "./trace.js";
