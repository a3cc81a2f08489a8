/** The registered alltoall algorithms, in the order `cclab verify` lists them. */
import { bruck } from "./bruck.js";
import { grouped } from "./grouped.js";
import { pairwise } from "./pairwise.js";

export const algorithms = [pairwise, grouped, bruck];
