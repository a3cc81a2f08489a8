/**
 * `cclab model --nccl-tuner FILE`: NCCL's algorithms of a collective swept over sizes on the
 * machine, the fastest per size range written as NCCL's example tuner plugin's CSV
 * (src/model/tuner.ts). Split from model.ts, which parses the command and calls this.
 */
import { sizeSweep } from "../bench/metrics.js";
import { InvalidArgumentError } from "../core/errors.js";
import { machineFor, type NetworkRequest } from "../model/machine.js";
import { NCCL_ALGORITHMS, tunerCsv, tunerRows } from "../model/tuner.js";
import type { ModelParams } from "../schedule/model.js";
import { findAlgorithm } from "../schedule/registry.js";
import { bytesText } from "../viz/svg.js";
import { type GridOptions, reportGrid, runGrid } from "./model-network.js";
import { printJson } from "./options.js";
import { writeOutputFile } from "./output-files.js";

/** What --nccl-tuner reads of the command's options. */
export interface TunerFlags {
  readonly algorithm?: string;
  readonly algorithmFile?: string;
  readonly algorithms?: string;
  readonly json?: boolean;
  readonly nranks: number;
  readonly progress?: boolean;
  /** The alpha-beta model's parameters (used without --topology). */
  readonly params: ModelParams;
}

/**
 * --nccl-tuner FILE: NCCL's algorithms of the collective swept over sizes on the machine, the
 * fastest per size range written as the example tuner plugin's CSV (src/model/tuner.ts).
 */
export function ncclTuner(
  file: string,
  o: TunerFlags,
  c: Omit<GridOptions, "over" | "ns" | "sizes" | "progress" | "params"> & {
    ns?: number[];
    bytesSweep?: number[];
  },
): void {
  const pairs = NCCL_ALGORITHMS[c.collective];
  if (!pairs) {
    throw new InvalidArgumentError(
      { op: "model", arg: "--nccl-tuner" },
      `NCCL's tuner plugin chooses among algorithms cclab models for ${Object.keys(NCCL_ALGORITHMS).join(", ")}, not ${c.collective}`,
    );
  }
  for (const [flag, v] of [
    ["--algorithm", o.algorithm],
    ["--algorithms", o.algorithms],
    ["--algorithm-file", o.algorithmFile],
    ["--sweep-n", c.ns],
  ] as const) {
    if (v !== undefined) {
      throw new InvalidArgumentError(
        { op: "model", arg: flag },
        `does not go with --nccl-tuner: it compares NCCL's own algorithms (${Object.entries(pairs)
          .map(([nccl, ours]) => `${nccl} = ${ours}`)
          .join(", ")}) over sizes at one n`,
      );
    }
  }
  const algs = Object.values(pairs).map((name) => findAlgorithm(c.collective, name, { op: "model" }));
  const g: GridOptions = {
    ...c,
    over: "bytes",
    ns: [o.nranks],
    sizes: c.bytesSweep ?? sizeSweep(1024, 256 * 1024 ** 2, 2),
    params: c.network ? undefined : o.params,
    progress: o.progress !== false,
  };
  const r = runGrid(algs, g);
  const dims = { nNodes: c.network ? nodesOf(c.network, o.nranks) : -1, nRanks: o.nranks };
  const rows = tunerRows(c.collective, r, dims);
  const where = c.network ? `--topology ${c.network.topology}` : "the alpha-beta model";
  writeOutputFile(
    "model",
    "--nccl-tuner",
    file,
    tunerCsv(rows, [
      `NCCL tuner plugin configuration (NVIDIA/nccl ext-tuner/example; NCCL_TUNER_CONFIG_FILE=${file})`,
      `written by cclab model ${c.collective} -n ${o.nranks} on ${where}: the fastest modelled algorithm per size range`,
      ...(r.topology ?? []),
      `algorithms: ${Object.entries(pairs)
        .map(([nccl, ours]) => `${nccl} = cclab ${ours}`)
        .join(", ")}; proto and channels are not modelled: simple and -1 (NCCL's choice)`,
      `nNodes: ${dims.nNodes === -1 ? "-1 (any: the topology has no nodes of several GPUs)" : `${dims.nNodes}`}`,
    ]),
  );
  if (o.json) {
    printJson({ collective: c.collective, nranks: o.nranks, output: file, tuner: rows, sweep: r });
    return;
  }
  reportGrid(r, { ...g, output: undefined });
  for (const x of rows)
    console.log(
      `${x.coll} ${x.minBytes}..${x.maxBytes} bytes (${bytesText(x.minBytes)} to ${bytesText(x.maxBytes)}): ${x.algo} (cclab ${x.algorithm})`,
    );
  console.log(`wrote ${file}: ${rows.length} lines for NCCL's example tuner plugin`);
}

/** NCCL's nNodes: the rail system's nodes the ranks sit on; every other family one GPU per host. */
function nodesOf(request: NetworkRequest, n: number): number {
  const m = machineFor(request, n);
  if (m.topology.family === "file") return -1;
  if (m.topology.family !== "rail") return n;
  return new Set(Array.from(m.placement, (h) => m.topology.group(h))).size;
}
