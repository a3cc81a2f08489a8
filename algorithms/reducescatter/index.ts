/** The registered reducescatter algorithms, in the order `cclab verify` lists them. */
import { bine } from "./bine.js";
import { pat } from "./pat.js";
import { recursiveHalving } from "./recursive_halving.js";
import { reduceScatter } from "./reduce_scatter.js";
import { ring } from "./ring.js";

export const algorithms = [ring, recursiveHalving, pat, reduceScatter, bine];
