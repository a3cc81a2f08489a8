/** The registered alltoallv algorithms, in the order `cclab verify` lists them. */
import { grouped } from "./grouped.js";
import { pairwise } from "./pairwise.js";

export const algorithms = [pairwise, grouped];
