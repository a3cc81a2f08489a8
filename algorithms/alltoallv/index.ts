/** The registered alltoallv algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { groupedAlltoallv } from "./grouped.js";
import { pairwiseAlltoallv } from "./pairwise.js";

export const algorithms: readonly Algorithm[] = [pairwiseAlltoallv, groupedAlltoallv];
