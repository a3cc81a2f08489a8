/** cclab's public API: core types, the point-to-point interface, the collectives, and the tools behind the CLI. */
export * from "./collectives/api.js";
export { chooseAlgorithm, RULES } from "./collectives/auto.js";
export { reference } from "./collectives/reference.js";
export type { Comm, OpOptions, P2POp, Work } from "./comm.js";
export * from "./core/index.js";
export { algorithmsOf, allAlgorithms, findAlgorithm, registerAlgorithm } from "./registry.js";
export { init } from "./runtime/init.js";
export * as build from "./schedule/build.js";
export { type CheckReport, checkAlgorithm } from "./schedule/check.js";
export { execute } from "./schedule/executor.js";
export { explain } from "./schedule/explain.js";
export type * from "./schedule/types.js";
export { type SimOptions, spawn } from "./sim/index.js";
export { Trace, type TraceEvent } from "./trace.js";
