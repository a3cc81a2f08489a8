/** The registered allgather algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { allgatherBruck } from "./bruck.js";
import { allgatherGatherBroadcast } from "./gather_broadcast.js";
import { allgatherRecursiveDoubling } from "./recursive_doubling.js";
import { allgatherRing } from "./ring.js";

export const algorithms: readonly Algorithm[] = [
  allgatherRing,
  allgatherRecursiveDoubling,
  allgatherBruck,
  allgatherGatherBroadcast,
];
