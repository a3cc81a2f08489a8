/** cclab's public API: core types, the point-to-point interface, the collectives, the specs, the schedule language and the tools behind the CLI. */

/** Device memory (the nccl backend): torch's tensor.cuda() and tensor.cpu(). */
export { readDevice, toDevice, toHost, writeDevice } from "./backends/nccl/index.js";
export { type OutputFormat, type TraceOutput, writeTrace } from "./cli/trace-output.js";
export {
  allGather,
  allReduce,
  allToAll,
  allToAllv,
  type Buf,
  barrier,
  broadcast,
  type CollectiveOptions,
  chooseFor,
  gather,
  planFor,
  planStats,
  type ReduceOptions,
  type RootOptions,
  reduce,
  reduceScatter,
  runCollective,
  type SplitOptions,
  scatter,
} from "./collectives/api.js";
export { chooseAlgorithm, RULES } from "./collectives/auto.js";
export { allGatherObject, broadcastObject } from "./collectives/objects.js";
export { onMachine, topologyOf, useTopology } from "./collectives/plans.js";
export { reference } from "./collectives/reference.js";
export type { CollectiveEvent, Comm, OpOptions, P2POp, Work } from "./comm.js";
export * from "./core/index.js";
export { finalize, type InitOptions, init } from "./runtime/init.js";
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
export { type DeadlockRecord, Trace, type TraceEvent, type TraceKind } from "./trace.js";
/** Recording a run: wrap a comm, then draw or export its events (the pictures below, writeTrace for any format). */
export { mergeTraces, type TracingOptions, withTracing } from "./tracing.js";
export {
  deadlockDot,
  deadlockSvg,
  htmlPage,
  lineChartSvg,
  type TraceSvgOptions,
  traceSvg,
  traceTable,
} from "./viz/index.js";
export { type PerfettoOptions, toPerfetto } from "./viz/perfetto.js";
