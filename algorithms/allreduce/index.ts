/** The registered allreduce algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { binaryTreeAllreduce } from "./binary_tree.js";
import { doubleBinaryTreeAllreduce } from "./double_binary_tree.js";
import { reduceBroadcastAllreduce } from "./reduce_broadcast.js";

export const algorithms: readonly Algorithm[] = [
  doubleBinaryTreeAllreduce,
  binaryTreeAllreduce,
  reduceBroadcastAllreduce,
];
