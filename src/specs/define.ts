/** defineSpec: a collective's record with the common defaults filled in (see types.ts). */
import type { DType } from "../core/dtype.js";
import type { Block, CollectiveSpec } from "./types.js";

type Defaults = "counted" | "inPlace" | "defaultDtype" | "data";
export type SpecInput<N extends string> = Omit<CollectiveSpec, Defaults | "name"> & {
  readonly name: N;
  /** Default true. */
  readonly counted?: boolean;
  /** Default true. */
  readonly inPlace?: boolean;
  /** Default true. */
  readonly data?: boolean;
  /** Default float32. */
  readonly defaultDtype?: DType;
};

export function defineSpec<N extends string>(s: SpecInput<N>): CollectiveSpec & { readonly name: N } {
  return { counted: true, inPlace: true, data: true, defaultDtype: "float32", ...s };
}

/** n blocks of `count` output elements, block r defined by `what(r)`: gathers and all-to-alls. */
export function blocks(
  n: number,
  count: number,
  what: (r: number) => { readonly rank: number; readonly index: number },
): Block[] {
  return Array.from({ length: n }, (_, r) => ({ at: r * count, count, ...what(r) }));
}
