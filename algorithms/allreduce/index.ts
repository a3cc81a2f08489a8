/** The registered allreduce algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { binaryTreeAllreduce } from "./binary_tree.js";
import { doubleBinaryTreeAllreduce } from "./double_binary_tree.js";
import { allreduceRabenseifner } from "./rabenseifner.js";
import { allreduceRecursiveDoubling } from "./recursive_doubling.js";
import { reduceBroadcastAllreduce } from "./reduce_broadcast.js";
import { allreduceRing } from "./ring.js";

export const algorithms: readonly Algorithm[] = [
  allreduceRing,
  doubleBinaryTreeAllreduce,
  binaryTreeAllreduce,
  allreduceRecursiveDoubling,
  allreduceRabenseifner,
  reduceBroadcastAllreduce,
];
