/** The registered reducescatter algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { reducescatterRecursiveHalving } from "./recursive_halving.js";
import { reducescatterReduceScatter } from "./reduce_scatter.js";
import { reducescatterRing } from "./ring.js";

export const algorithms: readonly Algorithm[] = [
  reducescatterRing,
  reducescatterRecursiveHalving,
  reducescatterReduceScatter,
];
