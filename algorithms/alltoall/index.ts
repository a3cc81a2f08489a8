/** The registered alltoall algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";

export const algorithms: readonly Algorithm[] = [];
