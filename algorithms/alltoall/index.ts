/** The registered alltoall algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { bruckAlltoall } from "./bruck.js";
import { groupedAlltoall } from "./grouped.js";
import { pairwiseAlltoall } from "./pairwise.js";

export const algorithms: readonly Algorithm[] = [pairwiseAlltoall, groupedAlltoall, bruckAlltoall];
