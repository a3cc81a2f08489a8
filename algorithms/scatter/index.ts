/** The registered scatter algorithms, in the order `cclab verify` lists them. */
import { bine } from "./bine.js";
import { binomial } from "./binomial.js";
import { linear } from "./linear.js";

export const algorithms = [linear, binomial, bine];
