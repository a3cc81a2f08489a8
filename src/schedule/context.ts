/**
 * Building a ScheduleContext from a call's arguments, and materialising one rank's schedule
 * with its regions validated. Shared by the executor, the checker and explain, so an
 * algorithm sees the same context whichever of them runs it.
 */
import type { DType } from "../core/dtype.js";
import type { ReduceOp } from "../core/op.js";
import { layout } from "./layout.js";
import type { Algorithm, BufferName, Region, ScheduleContext, Step } from "./types.js";

export interface CallArgs {
  readonly size: number;
  readonly count: number;
  readonly root?: number;
  readonly inPlace?: boolean;
  readonly dtype?: DType;
  readonly op?: ReduceOp;
  /** Pipelining unit in elements; default DEFAULT_SEGMENT_BYTES worth of the dtype. */
  readonly segment?: number;
  /** alltoallv only: sendCounts[src][dst], elements rank src sends to rank dst. */
  readonly sendCounts?: readonly (readonly number[])[];
}

/** NCCL pipelines in chunks of this order (its default chunk size is 128 KiB for trees). */
export const DEFAULT_SEGMENT_BYTES = 128 * 1024;

export function contextFor(alg: Algorithm, args: CallArgs, rank: number): ScheduleContext {
  const dtype = args.dtype ?? (alg.collective === "barrier" ? "uint8" : "float32");
  const bytes = dtypeBytes(dtype);
  return {
    collective: alg.collective,
    rank,
    size: args.size,
    count: args.count,
    root: args.root ?? 0,
    inPlace: (args.inPlace ?? false) && alg.inPlace !== false,
    dtype,
    op: args.op ?? { name: "sum" },
    segment: Math.max(1, args.segment ?? Math.floor(DEFAULT_SEGMENT_BYTES / bytes)),
    sendCounts: args.sendCounts?.[rank],
    recvCounts: args.sendCounts?.map((row) => row[rank] ?? 0),
  };
}

function dtypeBytes(d: DType): number {
  return d === "int8" || d === "uint8" ? 1 : d === "float16" || d === "bfloat16" ? 2 : d.endsWith("64") ? 8 : 4;
}

/** Buffer sizes of one rank: input/output from the layout, scratch from the algorithm. */
export function bufferSizes(alg: Algorithm, ctx: ScheduleContext): Record<BufferName, number> {
  const l = layout(ctx);
  return { input: l.inputCount, output: l.outputCount, scratch: alg.scratch?.(ctx) ?? 0 };
}

export const SHORT: Record<BufferName, string> = { input: "in", output: "out", scratch: "tmp" };

export function regionText(r: Region): string {
  const b = SHORT[r.buf];
  if (r.count === 1) return `${b}[${r.offset}]`;
  return `${b}[${r.offset}:${r.offset + r.count}]`;
}

export class ScheduleError extends Error {
  override name = "ScheduleError";
}

/**
 * Runs the algorithm's generator for one rank and checks every region against the buffer
 * sizes and every peer against the size; errors name the algorithm, rank, step and region.
 */
export function materialize(alg: Algorithm, ctx: ScheduleContext, where: string): Step[] {
  const sizes = bufferSizes(alg, ctx);
  const steps: Step[] = [];
  const at = (i: number, s: Step) => `${where}, rank ${ctx.rank}, step ${i} ('${s.label}')`;
  const checkRegion = (r: Region, i: number, s: Step, what: string) => {
    const ok =
      (r.buf === "input" || r.buf === "output" || r.buf === "scratch") &&
      Number.isInteger(r.offset) &&
      Number.isInteger(r.count) &&
      r.offset >= 0 &&
      r.count >= 0 &&
      r.offset + r.count <= sizes[r.buf];
    if (!ok) {
      throw new ScheduleError(
        `${at(i, s)}: ${what} region ${regionText(r)} is outside ${r.buf} (${sizes[r.buf] ?? "?"} elements)`,
      );
    }
  };
  let i = 0;
  for (const s of alg.schedule(ctx)) {
    for (const t of s.transfers) {
      if (!Number.isInteger(t.peer) || t.peer < 0 || t.peer >= ctx.size) {
        throw new ScheduleError(`${at(i, s)}: ${t.kind} peer ${t.peer} is not a rank of ${ctx.size}`);
      }
      checkRegion(t.region, i, s, t.kind);
    }
    for (const l of s.local) {
      checkRegion(l.dst, i, s, `${l.kind} destination`);
      checkRegion(l.src, i, s, `${l.kind} source`);
      if (l.dst.count !== l.src.count) {
        throw new ScheduleError(
          `${at(i, s)}: ${l.kind} ${regionText(l.dst)} <- ${regionText(l.src)} has different counts`,
        );
      }
    }
    steps.push(s);
    i++;
    if (i > 1_000_000)
      throw new ScheduleError(`${where}, rank ${ctx.rank}: more than a million steps; endless schedule?`);
  }
  return steps;
}
