/** The registered broadcast algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { binomial } from "./binomial.js";
import { chain } from "./chain.js";
import { linear } from "./linear.js";
import { scatterAllgather } from "./scatter_allgather.js";

export const algorithms: readonly Algorithm[] = [linear, binomial, chain, scatterAllgather];
