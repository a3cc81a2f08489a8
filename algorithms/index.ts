/**
 * Every algorithm cclab ships, by collective. Each collective's folder has one file per algorithm
 * and an index listing them; lib/ holds the routines several share, topology/ the rings and trees.
 */
import type { Algorithm } from "../src/schedule/dsl.js";
import { algorithms as allgather } from "./allgather/index.js";
import { algorithms as allreduce } from "./allreduce/index.js";
import { algorithms as alltoall } from "./alltoall/index.js";
import { algorithms as alltoallv } from "./alltoallv/index.js";
import { algorithms as barrier } from "./barrier/index.js";
import { algorithms as broadcast } from "./broadcast/index.js";
import { algorithms as gather } from "./gather/index.js";
import { algorithms as reduce } from "./reduce/index.js";
import { algorithms as reducescatter } from "./reducescatter/index.js";
import { algorithms as scatter } from "./scatter/index.js";

export const builtinAlgorithms: readonly Algorithm[] = [
  ...broadcast,
  ...reduce,
  ...gather,
  ...scatter,
  ...allgather,
  ...reducescatter,
  ...allreduce,
  ...alltoall,
  ...alltoallv,
  ...barrier,
];
