/**
 * More ranks than GPUs on a node. NCCL refuses two ranks of one communicator on the same GPU of
 * one host: up to 2.29 with "Duplicate GPU detected : rank a and rank b both on CUDA device x"
 * (same host hash and bus id); 2.30.3/2.30.4 with "Multiple ranks detected using the same GPU on
 * this node" and 2.30.7 with "Multiple Ranks are using the same GPU/Partition" (same host hash
 * and GPU; both ncclInvalidUsage, both naming NCCL_MULTI_RANK_GPU_ENABLE). Two ways past it:
 *
 * - "multirank": NCCL 2.30's own switch, NCCL_MULTI_RANK_GPU_ENABLE=1 (experimental; NCCL's
 *   documentation says the default configuration runs up to 2 ranks per GPU, so it is used only
 *   there). NCCL picks its transports itself.
 * - "hostid" (any NCCL, and > 2 ranks per GPU): every rank gets its own NCCL_HOSTID, which
 *   replaces the host hash, so each rank looks like a separate node; ranks sharing a GPU pass the
 *   check and talk through NCCL's network transport, here sockets on the loopback interface
 *   (NCCL_SOCKET_IFNAME=lo). Slow, and for testing only.
 *
 * Both were read from NCCL's sources (init.cc, graph/topo.cc, misc/utils.cc of v2.28.9 to
 * v2.30.7); which ones were seen to work on a GPU is recorded in docs/gpu.md.
 * CCLAB_NCCL_SHARED_GPU=hostid|multirank forces one; variables the user already set are never
 * overridden (their own NCCL_HOSTID or NCCL_MULTI_RANK_GPU_ENABLE also picks that path).
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
  /** ncclGetVersion's code of the NCCL that will run (e.g. 23007); undefined where unknown. */
  readonly ncclVersion?: number;
  readonly env?: NodeJS.ProcessEnv;
}

export type SharedGpuPath = "hostid" | "multirank";

export interface SharedGpuEnv {
  /** Variables to set for this rank (empty where each rank has its own GPU). */
  readonly vars: Record<string, string>;
  /** Which way past NCCL's check (undefined where nothing is shared). */
  readonly path?: SharedGpuPath;
  /** The warning to print once per job (undefined where nothing is shared). */
  readonly warning?: string;
}

/** The first NCCL with NCCL_MULTI_RANK_GPU_ENABLE (ncclGetVersion's code of 2.30.0). */
export const NCCL_MULTI_RANK_VERSION = 23000;
/** Ranks per GPU NCCL documents NCCL_MULTI_RANK_GPU_ENABLE for with its default configuration. */
export const NCCL_MULTI_RANK_MAX = 2;

/** NCCL's messages when it refuses ranks sharing a GPU (every version above). */
const SHARED_GPU_REFUSAL = /Duplicate GPU detected|using the same GPU/i;

/** What to do about NCCL's refusal of ranks sharing a GPU, where `text` (NCCL's message) is one; else ''. */
export function sharedGpuHint(text: string): string {
  if (!SHARED_GPU_REFUSAL.test(text)) return "";
  return (
    "; ranks of this communicator share a GPU: cclab run handles that (per-rank NCCL_HOSTID, or" +
    ` NCCL_MULTI_RANK_GPU_ENABLE=1 on NCCL 2.30+ with at most ${NCCL_MULTI_RANK_MAX} ranks per GPU); under another` +
    " launcher set LOCAL_WORLD_SIZE so initNccl knows how many ranks share this node's GPUs" +
    " (docs/gpu.md, 'More ranks than GPUs')"
  );
}

function choosePath(o: SharedGpuInput, env: NodeJS.ProcessEnv, perGpu: number): SharedGpuPath {
  const forced = env.CCLAB_NCCL_SHARED_GPU;
  if (forced !== undefined && forced !== "") {
    if (forced !== "hostid" && forced !== "multirank") {
      throw new Error(`CCLAB_NCCL_SHARED_GPU: expected 'hostid' or 'multirank', got '${forced}'`);
    }
    return forced;
  }
  if (env.NCCL_HOSTID) return "hostid";
  if (env.NCCL_MULTI_RANK_GPU_ENABLE === "1") return "multirank";
  const official = (o.ncclVersion ?? 0) >= NCCL_MULTI_RANK_VERSION && perGpu <= NCCL_MULTI_RANK_MAX;
  return official ? "multirank" : "hostid";
}

export function sharedGpuEnv(o: SharedGpuInput): SharedGpuEnv {
  const env = o.env ?? process.env;
  if (o.deviceCount <= 0 || o.localSize <= o.deviceCount) return { vars: {} };
  const perGpu = Math.ceil(o.localSize / o.deviceCount);
  const path = choosePath(o, env, perGpu);
  const vars: Record<string, string> = {};
  const gpus = `${o.deviceCount} GPU${o.deviceCount === 1 ? "" : "s"}`;
  if (path === "multirank") {
    if (!env.NCCL_MULTI_RANK_GPU_ENABLE) vars.NCCL_MULTI_RANK_GPU_ENABLE = "1";
    const warning =
      `cclab: ${o.localSize} ranks share ${gpus} on this node: NCCL_MULTI_RANK_GPU_ENABLE=1 (NCCL 2.30+, ` +
      `documented for up to ${NCCL_MULTI_RANK_MAX} ranks per GPU; experimental in NCCL); for testing only (timings are of ranks sharing a GPU)`;
    return { vars, path, warning };
  }
  if (!env.NCCL_HOSTID) vars.NCCL_HOSTID = `${hostname()}-cclab-rank${o.rank}`;
  // Loopback carries the traffic only where the whole job is on this node.
  if (!env.NCCL_SOCKET_IFNAME && o.localSize === o.size) vars.NCCL_SOCKET_IFNAME = "lo";
  if (!env.NCCL_IB_DISABLE && o.localSize === o.size) vars.NCCL_IB_DISABLE = "1";
  const warning =
    `cclab: ${o.localSize} ranks share ${gpus} on this node: ` +
    "each rank gets its own NCCL_HOSTID so NCCL treats it as a separate node and moves data over sockets" +
    (o.localSize === o.size ? " on loopback (NCCL_SOCKET_IFNAME=lo)" : "") +
    "; correct but slow, for testing only (timings mean nothing)";
  return { vars, path, warning };
}
