/**
 * Every algorithm cclab ships: the one list the registry (src/schedule/registry.ts) reads. Each
 * collective's folder has one file per algorithm; lib/ holds the routines several share,
 * topology/ the trees. Within a collective, the order is the one `cclab verify` lists them in.
 */
import type { Algorithm } from "../src/schedule/dsl.js";
import { bine as allgatherBine } from "./allgather/bine.js";
import { bruck as allgatherBruck } from "./allgather/bruck.js";
import { gatherBroadcast as allgatherGatherBroadcast } from "./allgather/gather_broadcast.js";
import { pat as allgatherPat } from "./allgather/pat.js";
import { recursiveDoubling as allgatherRecursiveDoubling } from "./allgather/recursive_doubling.js";
import { ring as allgatherRing } from "./allgather/ring.js";
import { binaryTreeAllreduce as allreduceBinaryTreeAllreduce } from "./allreduce/binary_tree.js";
import { bineBandwidth as allreduceBineBandwidth } from "./allreduce/bine_bandwidth.js";
import { bineLatency as allreduceBineLatency } from "./allreduce/bine_latency.js";
import { doubleBinaryTreeAllreduce as allreduceDoubleBinaryTreeAllreduce } from "./allreduce/double_binary_tree.js";
import { hierarchical as allreduceHierarchical } from "./allreduce/hierarchical.js";
import { rabenseifner as allreduceRabenseifner } from "./allreduce/rabenseifner.js";
import { recursiveDoubling as allreduceRecursiveDoubling } from "./allreduce/recursive_doubling.js";
import { reduceBroadcast as allreduceReduceBroadcast } from "./allreduce/reduce_broadcast.js";
import { ring as allreduceRing } from "./allreduce/ring.js";
import { segmentedRing as allreduceSegmentedRing } from "./allreduce/segmented_ring.js";
import { swingBandwidth as allreduceSwingBandwidth } from "./allreduce/swing_bandwidth.js";
import { swingLatency as allreduceSwingLatency } from "./allreduce/swing_latency.js";
import { bruck as alltoallBruck } from "./alltoall/bruck.js";
import { grouped as alltoallGrouped } from "./alltoall/grouped.js";
import { pairwise as alltoallPairwise } from "./alltoall/pairwise.js";
import { grouped as alltoallvGrouped } from "./alltoallv/grouped.js";
import { pairwise as alltoallvPairwise } from "./alltoallv/pairwise.js";
import { dissemination as barrierDissemination } from "./barrier/dissemination.js";
import { bine as broadcastBine } from "./broadcast/bine.js";
import { binomial as broadcastBinomial } from "./broadcast/binomial.js";
import { chain as broadcastChain } from "./broadcast/chain.js";
import { linear as broadcastLinear } from "./broadcast/linear.js";
import { scatterAllgather as broadcastScatterAllgather } from "./broadcast/scatter_allgather.js";
import { bine as gatherBine } from "./gather/bine.js";
import { binomial as gatherBinomial } from "./gather/binomial.js";
import { linear as gatherLinear } from "./gather/linear.js";
import { bine as reduceBine } from "./reduce/bine.js";
import { binomial as reduceBinomial } from "./reduce/binomial.js";
import { linear as reduceLinear } from "./reduce/linear.js";
import { rabenseifner as reduceRabenseifner } from "./reduce/rabenseifner.js";
import { bine as reducescatterBine } from "./reducescatter/bine.js";
import { pat as reducescatterPat } from "./reducescatter/pat.js";
import { recursiveHalving as reducescatterRecursiveHalving } from "./reducescatter/recursive_halving.js";
import { reduceScatter as reducescatterReduceScatter } from "./reducescatter/reduce_scatter.js";
import { ring as reducescatterRing } from "./reducescatter/ring.js";
import { bine as scatterBine } from "./scatter/bine.js";
import { binomial as scatterBinomial } from "./scatter/binomial.js";
import { linear as scatterLinear } from "./scatter/linear.js";

export const builtinAlgorithms: readonly Algorithm[] = [
  // broadcast
  broadcastLinear,
  broadcastBinomial,
  broadcastChain,
  broadcastScatterAllgather,
  broadcastBine,
  // reduce
  reduceLinear,
  reduceBinomial,
  reduceRabenseifner,
  reduceBine,
  // gather
  gatherLinear,
  gatherBinomial,
  gatherBine,
  // scatter
  scatterLinear,
  scatterBinomial,
  scatterBine,
  // allgather
  allgatherRing,
  allgatherRecursiveDoubling,
  allgatherBruck,
  allgatherPat,
  allgatherGatherBroadcast,
  allgatherBine,
  // reducescatter
  reducescatterRing,
  reducescatterRecursiveHalving,
  reducescatterPat,
  reducescatterReduceScatter,
  reducescatterBine,
  // allreduce
  allreduceRing,
  allreduceSegmentedRing,
  allreduceDoubleBinaryTreeAllreduce,
  allreduceBinaryTreeAllreduce,
  allreduceRecursiveDoubling,
  allreduceRabenseifner,
  allreduceReduceBroadcast,
  allreduceSwingLatency,
  allreduceSwingBandwidth,
  allreduceHierarchical,
  allreduceBineLatency,
  allreduceBineBandwidth,
  // alltoall
  alltoallPairwise,
  alltoallGrouped,
  alltoallBruck,
  // alltoallv
  alltoallvPairwise,
  alltoallvGrouped,
  // barrier
  barrierDissemination,
];
