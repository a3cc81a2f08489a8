/**
 * The cost models of schedules: the alpha-beta model (single calls and sweeps over the group
 * size), and the network model's front (machine.ts: --topology built for n ranks; sweeps over N
 * or sizes with several algorithms; NCCL's tuner CSV). The network model itself is network/.
 */
export { betaFromGBps, formulaTime, type ModelParams, type ModelResult, modelTime } from "../schedule/model.js";
export { bandwidths, callOf, type Machine, machineFor, type NetworkRequest, timeOnMachine } from "./machine.js";
export {
  type Crossover,
  crossoversOf,
  type GridRow,
  type GridSweep,
  type GridSweepOptions,
  gridChart,
  gridSweep,
  type PointResult,
  powersOfTwo,
  type SweepOptions,
  type SweepResult,
  type SweepRow,
  sweep,
  sweepChart,
} from "./sweep.js";
export { NCCL_ALGORITHMS, TUNER_MAX_BYTES, type TunerRow, tunerCsv, tunerRows } from "./tuner.js";
