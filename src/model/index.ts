/** The alpha-beta cost model of schedules: single calls and sweeps over the group size. */
export { betaFromGBps, formulaTime, type ModelParams, type ModelResult, modelTime } from "../schedule/model.js";
export {
  type Crossover,
  powersOfTwo,
  type SweepOptions,
  type SweepResult,
  type SweepRow,
  sweep,
  sweepChart,
} from "./sweep.js";
