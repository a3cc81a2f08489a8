/** The registered allreduce algorithms, in the order `cclab verify` lists them. */
import { binaryTreeAllreduce } from "./binary_tree.js";
import { bineBandwidth } from "./bine_bandwidth.js";
import { bineLatency } from "./bine_latency.js";
import { doubleBinaryTreeAllreduce } from "./double_binary_tree.js";
import { hierarchical } from "./hierarchical.js";
import { rabenseifner } from "./rabenseifner.js";
import { recursiveDoubling } from "./recursive_doubling.js";
import { reduceBroadcast } from "./reduce_broadcast.js";
import { ring } from "./ring.js";
import { segmentedRing } from "./segmented_ring.js";
import { swingBandwidth } from "./swing_bandwidth.js";
import { swingLatency } from "./swing_latency.js";

export const algorithms = [
  ring,
  segmentedRing,
  doubleBinaryTreeAllreduce,
  binaryTreeAllreduce,
  recursiveDoubling,
  rabenseifner,
  reduceBroadcast,
  swingLatency,
  swingBandwidth,
  hierarchical,
  bineLatency,
  bineBandwidth,
];
