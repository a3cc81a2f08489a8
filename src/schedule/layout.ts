/**
 * The buffers each collective takes on each rank, in NCCL's terms, and how they alias in place.
 * The executor, the checker, the reference oracle and the front API all read this one table.
 *
 * | collective    | input (elements)        | output (elements)        | in place                        |
 * |---------------|-------------------------|--------------------------|---------------------------------|
 * | broadcast     | count at root, else 0   | count                    | root: input is output           |
 * | reduce        | count                   | count at root, else 0    | root: output is input           |
 * | gather        | count                   | count·n at root, else 0  | root: input = output[root·count]|
 * | scatter       | count·n at root, else 0 | count                    | root: output = input[root·count]|
 * | allgather     | count                   | count·n                  | input = output[rank·count]      |
 * | reducescatter | count·n                 | count                    | output = input[rank·count]      |
 * | allreduce     | count                   | count                    | output is input                 |
 * | alltoall      | count·n                 | count·n                  | output is input                 |
 * | alltoallv     | Σ sendCounts            | Σ recvCounts             | none                            |
 * | barrier       | 0                       | 0                        | none                            |
 */
import type { Collective } from "./types.js";

export interface LayoutArgs {
  readonly collective: Collective;
  readonly rank: number;
  readonly size: number;
  readonly count: number;
  readonly root: number;
  readonly sendCounts?: readonly number[];
  readonly recvCounts?: readonly number[];
}

export interface Layout {
  readonly inputCount: number;
  readonly outputCount: number;
  /**
   * In place: 'same' (input and output are one region), 'input-in-output' (input is
   * output[offset..]), 'output-in-input' (output is input[offset..]); undefined where this
   * rank's buffers do not alias in place (non-roots of rooted collectives, alltoallv).
   */
  readonly alias?: { readonly kind: "same" | "input-in-output" | "output-in-input"; readonly offset: number };
}

const sum = (xs: readonly number[] | undefined): number => (xs ?? []).reduce((a, b) => a + b, 0);

/** Which collectives have a root. */
export const ROOTED: ReadonlySet<Collective> = new Set(["broadcast", "reduce", "gather", "scatter"]);
/** Which collectives combine data with a reduce op. */
export const REDUCING: ReadonlySet<Collective> = new Set(["reduce", "reducescatter", "allreduce"]);
/** Collectives that support in-place calls. */
export const HAS_IN_PLACE: ReadonlySet<Collective> = new Set([
  "broadcast",
  "reduce",
  "gather",
  "scatter",
  "allgather",
  "reducescatter",
  "allreduce",
  "alltoall",
]);

export function layout(a: LayoutArgs): Layout {
  const { count: c, size: n, rank, root } = a;
  const isRoot = rank === root;
  switch (a.collective) {
    case "broadcast":
      return { inputCount: isRoot ? c : 0, outputCount: c, alias: isRoot ? { kind: "same", offset: 0 } : undefined };
    case "reduce":
      return { inputCount: c, outputCount: isRoot ? c : 0, alias: isRoot ? { kind: "same", offset: 0 } : undefined };
    case "gather":
      return {
        inputCount: c,
        outputCount: isRoot ? c * n : 0,
        alias: isRoot ? { kind: "input-in-output", offset: root * c } : undefined,
      };
    case "scatter":
      return {
        inputCount: isRoot ? c * n : 0,
        outputCount: c,
        alias: isRoot ? { kind: "output-in-input", offset: root * c } : undefined,
      };
    case "allgather":
      return { inputCount: c, outputCount: c * n, alias: { kind: "input-in-output", offset: rank * c } };
    case "reducescatter":
      return { inputCount: c * n, outputCount: c, alias: { kind: "output-in-input", offset: rank * c } };
    case "allreduce":
      return { inputCount: c, outputCount: c, alias: { kind: "same", offset: 0 } };
    case "alltoall":
      return { inputCount: c * n, outputCount: c * n, alias: { kind: "same", offset: 0 } };
    case "alltoallv":
      return { inputCount: sum(a.sendCounts), outputCount: sum(a.recvCounts) };
    case "barrier":
      return { inputCount: 0, outputCount: 0 };
  }
}
