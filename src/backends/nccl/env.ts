/**
 * More ranks than GPUs on a node. NCCL refuses two ranks of one communicator on the same GPU
 * ("Duplicate GPU detected", ncclInvalidUsage) because it identifies a GPU by (host hash, bus
 * id). Giving every rank its own NCCL_HOSTID makes each rank look like a separate node, so ranks
 * sharing a GPU pass that check and talk through NCCL's network transport, here sockets on the
 * loopback interface (NCCL_SOCKET_IFNAME=lo). Slow, and for testing only: it lets one GPU run
 * world sizes 2..N. Variables the user already set are never overridden.
 *
 * The launcher (src/runtime/launch.ts) asks for this per rank; initNccl applies the same to its
 * own process when some other launcher started it.
 */
import { hostname } from "node:os";

export interface SharedGpuInput {
  readonly rank: number;
  /** Ranks of this job on this node. */
  readonly localSize: number;
  /** Ranks of the whole job. */
  readonly size: number;
  /** GPUs this node's processes see (CUDA_VISIBLE_DEVICES applied). */
  readonly deviceCount: number;
  readonly env?: NodeJS.ProcessEnv;
}

export interface SharedGpuEnv {
  /** Variables to set for this rank (empty where each rank has its own GPU). */
  readonly vars: Record<string, string>;
  /** The warning to print once per job (undefined where nothing is shared). */
  readonly warning?: string;
}

export function sharedGpuEnv(o: SharedGpuInput): SharedGpuEnv {
  const env = o.env ?? process.env;
  if (o.deviceCount <= 0 || o.localSize <= o.deviceCount) return { vars: {} };
  const vars: Record<string, string> = {};
  if (!env.NCCL_HOSTID) vars.NCCL_HOSTID = `${hostname()}-cclab-rank${o.rank}`;
  // Loopback carries the traffic only where the whole job is on this node.
  if (!env.NCCL_SOCKET_IFNAME && o.localSize === o.size) vars.NCCL_SOCKET_IFNAME = "lo";
  if (!env.NCCL_IB_DISABLE && o.localSize === o.size) vars.NCCL_IB_DISABLE = "1";
  const warning =
    `cclab: ${o.localSize} ranks share ${o.deviceCount} GPU${o.deviceCount === 1 ? "" : "s"} on this node: ` +
    "each rank gets its own NCCL_HOSTID so NCCL treats it as a separate node and moves data over sockets" +
    (o.localSize === o.size ? " on loopback (NCCL_SOCKET_IFNAME=lo)" : "") +
    "; correct but slow, for testing only (timings mean nothing)";
  return { vars, warning };
}
