/**
 * `cclab model --machine FILE`: the alpha-beta parameters a machine file (`cclab calibrate`)
 * gives, less those given as flags; a note when the ranks outnumber the cores it was measured on.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { readMachineFile } from "../model/calibrate.js";
import type { ModelParams } from "../schedule/model.js";

/**
 * The machine file's alpha, beta, gamma, copy and costs by size. A flag given wins: --beta given,
 * the file's beta by size goes too (likewise --gamma), so the flag is what the model uses.
 */
export function machineOptions(
  file: string,
  o: { topology?: unknown },
  given: readonly string[],
  n: number,
): Partial<Pick<ModelParams, "alpha" | "beta" | "gamma" | "copy" | "bySize">> {
  if (o.topology !== undefined)
    throw new InvalidArgumentError(
      { op: "model", arg: "--machine" },
      "sets the alpha-beta model's parameters; with --topology the links' flags (--link, --latency ...) set the network's",
    );
  const m = readMachineFile(file);
  const scalars = (["alpha", "beta", "gamma"] as const).filter((k) => !given.includes(k)).map((k) => [k, m[k]]);
  const bySize = m.bySize?.map((q) =>
    Object.fromEntries(Object.entries(q).filter(([k]) => k === "bytes" || !given.includes(k))),
  ) as ModelParams["bySize"];
  const cores = m.measured?.cores;
  if (cores !== undefined && n > cores)
    process.stderr.write(
      `note: ${n} ranks on the ${cores} cores ${file} was measured on: ranks share cores, which the alpha-beta model does not charge (docs/simulators.md, "The model against real runs")\n`,
    );
  return { ...Object.fromEntries(scalars), copy: m.copy, bySize };
}
