/**
 * `cclab export goal|chakra <collective> --algorithm A -n N --bytes S -o OUT`: a schedule as the
 * input of other simulators (src/export): GOAL for LogGOPSim and ATLAHS (htsim, ns-3), Chakra
 * execution traces for ASTRA-sim. Like the MSCCL export, it reads what it wrote back and refuses
 * to leave a file that is not the same schedule (docs/simulators.md).
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { AlgorithmFileError, InvalidArgumentError } from "../core/errors.js";
import { parseChakra, toChakra } from "../export/chakra.js";
import { parseGoal, toGoal } from "../export/goal.js";
import { checkMatching, exportCall, type Program, programDiff, programOf } from "../export/program.js";
import type { Algorithm } from "../schedule/dsl.js";
import { specOf } from "../specs/index.js";
import { bytesText } from "../viz/svg.js";
import { printJson } from "./options.js";

export const TRACE_FORMATS = ["goal", "chakra"] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];

export interface TraceExportOptions {
  readonly nranks: number;
  readonly bytes: number;
  readonly root: number;
  readonly segment?: number;
  readonly gamma: number;
  readonly output: string;
  readonly json?: boolean;
}

/** The files a Chakra export writes: `<prefix>.<rank>.et`, as ASTRA-sim names them. */
export function chakraFiles(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, r) => `${prefix}.${r}.et`);
}

export function exportTrace(fmt: TraceFormat, alg: Algorithm, o: TraceExportOptions): void {
  const op = `export ${fmt}`;
  const spec = specOf(alg.collective, { op });
  if (o.root >= o.nranks) {
    throw new InvalidArgumentError({ op, arg: "--root" }, `must be a rank in [0, ${o.nranks}), got ${o.root}`);
  }
  const { call, size } = exportCall(alg, o.nranks, o.bytes, { root: o.root, segment: o.segment });
  const program = programOf(alg, call, { gamma: o.gamma });
  checkMatching(program, `${alg.collective}/${alg.name}`);
  const parent = dirname(o.output);
  if (!isDirectory(parent)) {
    throw new InvalidArgumentError({ op, arg: "-o" }, `${parent} is not a directory; create it first`);
  }
  let files: string[];
  let back: Program;
  if (fmt === "goal") {
    const header = [
      `cclab ${alg.collective}/${alg.name}, ${o.nranks} ranks, ${bytesText(size)} (nccl-tests' bytes; ${call.count} x ${call.dtype}${spec.perRank ? " per rank" : ""}), segment ${call.segment} elements`,
      `sizes in bytes; calc in ns: reductions at gamma ${o.gamma} us/B, copies 0; tags number the messages between each pair of ranks`,
    ];
    writeFileSync(o.output, toGoal(program, header));
    files = [o.output];
    back = parseGoal(readFileSync(o.output, "utf8"), o.output);
  } else {
    files = chakraFiles(o.output, o.nranks);
    for (let r = 0; r < o.nranks; r++) writeFileSync(files[r] as string, toChakra(program, r));
    const ranks = files.map((f, r) => {
      const t = parseChakra(readFileSync(f), f, r);
      if (t.nranks !== o.nranks)
        throw new AlgorithmFileError(`${f}: its metadata says ${t.nranks} ranks, not ${o.nranks}`);
      return t.ops;
    });
    back = { ...program, ranks };
  }
  checkMatching(back, files.length === 1 ? (files[0] as string) : `${o.output}.*.et`);
  const diff = programDiff(program, back, fmt === "goal" ? o.output : `${basename(o.output)}.*.et`, fmt !== "goal");
  if (diff) throw new AlgorithmFileError(`the written file is not the schedule: ${diff}`);
  let messages = 0;
  let operations = 0;
  for (const ops of program.ranks) {
    operations += ops.length;
    for (const x of ops) if (x.kind === "send") messages++;
  }
  if (o.json) {
    printJson({
      format: fmt,
      collective: alg.collective,
      algorithm: alg.name,
      nranks: o.nranks,
      bytes: o.bytes,
      size,
      count: call.count,
      segment: call.segment,
      gamma: o.gamma,
      files,
      operations,
      messages,
      sameSchedule: true,
    });
    return;
  }
  const where = fmt === "goal" ? o.output : `${files[0]} .. ${files[files.length - 1]}`;
  console.log(
    `${where}: ${alg.collective}/${alg.name} on ${o.nranks} ranks, ${bytesText(size)} (nccl-tests' bytes), ${operations} operations, ${messages} messages; read back: the same schedule`,
  );
  console.log(
    fmt === "goal"
      ? `next: txt2bin -i ${o.output} -o ${basename(o.output)}.bin && LogGOPSim -f ${basename(o.output)}.bin (docs/simulators.md)`
      : `next: ASTRA-sim --workload-configuration=${o.output}, or "all-reduce-implementation-custom": ["${o.output}"] in its system configuration (docs/simulators.md)`,
  );
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
