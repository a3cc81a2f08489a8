/**
 * How loaded this machine is, as a factor for a bound on a time to verdict: the 1-minute load
 * per core, at least 1 and at most 4. The tests and the docs checker grow their bounds by it
 * (CI's 2 cores are shared with the suite's other files), so a slow verdict is still caught and
 * a hang still fails.
 */
import { cpus, loadavg } from "node:os";

export function loadFactor(load = loadavg()[0] ?? 0, cores = cpus().length): number {
  return Math.min(4, Math.max(1, load / Math.max(1, cores)));
}
