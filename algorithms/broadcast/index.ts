/** The registered broadcast algorithms, in the order `cclab verify` lists them. */
import { bine } from "./bine.js";
import { binomial } from "./binomial.js";
import { chain } from "./chain.js";
import { linear } from "./linear.js";
import { scatterAllgather } from "./scatter_allgather.js";

export const algorithms = [linear, binomial, chain, scatterAllgather, bine];
