/** The registered reduce algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { binomial } from "./binomial.js";
import { linear } from "./linear.js";
import { rabenseifner } from "./rabenseifner.js";

export const algorithms: readonly Algorithm[] = [linear, binomial, rabenseifner];
