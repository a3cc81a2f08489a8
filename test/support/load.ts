/**
 * Time bounds under load, for every test that bounds a time to verdict (a job's end, a timeout
 * firing, a refusal): the bound is what an idle machine needs; on a loaded one (CI's 2 cores
 * shared with the suite's other files, or a developer's) it grows with the 1-minute load per
 * core, at most 4 times, so a slow verdict is still caught and a hang still fails.
 * May touch: nothing (reads the load average; the factor is src/tools/load.ts's).
 */
import os from "node:os";
import { loadFactor } from "../../src/tools/load.js";

export function boundUnderLoad(boundS: number, load = os.loadavg()[0] ?? 0, cores = os.cpus().length) {
  const factor = loadFactor(load, cores);
  return {
    bound: boundS * factor,
    why: factor > 1 ? ` (${boundS} s × ${factor.toFixed(2)} for a load of ${load.toFixed(1)} on ${cores} cores)` : "",
  };
}

/** A bound (any unit) grown for the load now. */
export const underLoad = (bound: number): number => boundUnderLoad(bound).bound;
