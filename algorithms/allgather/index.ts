/** The registered allgather algorithms, in the order `cclab verify` lists them. */
import { bine } from "./bine.js";
import { bruck } from "./bruck.js";
import { gatherBroadcast } from "./gather_broadcast.js";
import { pat } from "./pat.js";
import { recursiveDoubling } from "./recursive_doubling.js";
import { ring } from "./ring.js";

export const algorithms = [ring, recursiveDoubling, bruck, pat, gatherBroadcast, bine];
