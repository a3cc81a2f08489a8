/**
 * The nccl backend's entry points: ncclAvailable() (and why not, with how to get it),
 * initNccl() (this process's rank of an NCCL communicator, unique id through the rendezvous
 * store, as torch's ProcessGroupNCCL), the host <-> device helpers, and what a launcher sets per
 * rank when ranks share GPUs. See docs/gpu.md.
 *
 * Three things must hold for it to run, and ncclDiagnose() checks each: the native addon was
 * compiled with CUDA (CMake found nvcc), libnccl.so.2 loads (src/native/nccl.ts lists where it
 * looks), and the CUDA runtime sees a device.
 */
import { readdirSync } from "node:fs";
import type { Comm } from "../../comm.js";
import { type DataBuffer, HostBuffer, isHostBuffer, isView, type View, view } from "../../core/buffer.js";
import { dtypeInfo, type TypedArray } from "../../core/dtype.js";
import { InvalidArgumentError, UnavailableError } from "../../core/errors.js";
import type { KVStore } from "../../kvstore.js";
import { loadNative, toEngineError } from "../../native/load.js";
import { loadNcclLibrary } from "../../native/nccl.js";
import { buildCommand } from "../../native/root.js";
import type { NativeNccl, NcclLibrary } from "../../native/types.js";
import { type DeviceBuffer, isDeviceBuffer } from "./buffer.js";
import { createComm, type NcclComm, type NcclProcess } from "./comm.js";
import { NcclDevice } from "./device.js";
import { sharedGpuEnv } from "./env.js";

export { NonMemberComm } from "../../nonmember.js";
export { DeviceBuffer, isDeviceBuffer } from "./buffer.js";
export { NCCL_BUILTINS, type NcclBuiltin, NcclEngine, ncclBuiltin } from "./builtin.js";
export { NcclComm, type NcclProcess } from "./comm.js";
export { NcclDevice } from "./device.js";
export { type SharedGpuPath, sharedGpuEnv } from "./env.js";

export const NCCL_HINTS = {
  addon: `build the native addon: ${buildCommand()} (needs cmake, make or ninja, and a C++ compiler)`,
  cuda:
    "install the CUDA toolkit so CMake finds nvcc (put /usr/local/cuda/bin on PATH, or set CUDACXX), " +
    `then ${buildCommand()}; see docs/gpu.md`,
  nccl:
    "pip install nvidia-nccl-cu13 (or nvidia-nccl-cu12; PyTorch's CUDA wheels bring it), or install libnccl2 " +
    "from NVIDIA's CUDA repository, or point CCLAB_NCCL_LIBRARY at a libnccl.so.2",
  device:
    "run on a machine with an NVIDIA GPU and its driver (nvidia-smi lists the GPUs; CUDA_VISIBLE_DEVICES must not hide them)",
} as const;

export type NcclAvailability = { ok: true } | { ok: false; reason: string; hint: string };

export interface NcclProblem {
  readonly what: "addon" | "cuda" | "nccl" | "device";
  readonly reason: string;
  readonly hint: string;
}

export interface NcclDiagnosis {
  readonly ok: boolean;
  /** Every reason the backend cannot run here, in the order they would be fixed. */
  readonly problems: readonly NcclProblem[];
  readonly addonPath?: string;
  /** The addon was compiled with CUDA. */
  readonly cuda: boolean;
  readonly library?: NcclLibrary;
  /** CUDA devices visible (0 where unknown or none). */
  readonly devices: number;
  /** cudaDriverGetVersion (0: no driver). */
  readonly driverVersion: number;
}

function nativeNccl(): { nccl: NativeNccl; path: string } | NcclProblem {
  const l = loadNative();
  if (!l.ok) return { what: "addon", reason: l.reason, hint: NCCL_HINTS.addon };
  if (!l.addon.nccl) {
    return {
      what: "addon",
      reason: `the native addon (${l.path}) predates the nccl engine (no native/nccl.cc in it)`,
      hint: NCCL_HINTS.addon,
    };
  }
  return { nccl: l.addon.nccl, path: l.path };
}

/** The NVIDIA kernel driver lists each GPU here; what is known of GPUs where the addon cannot ask CUDA. */
export const NVIDIA_PROC_GPUS = "/proc/driver/nvidia/gpus";

function listedGpus(): number {
  try {
    return readdirSync(NVIDIA_PROC_GPUS).length;
  } catch {
    return 0;
  }
}

function cudaVersion(v: number): string {
  return v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : "none";
}

function noListedGpu(): NcclProblem {
  return {
    what: "device",
    reason: `no NVIDIA GPU: the NVIDIA driver lists none (${NVIDIA_PROC_GPUS} is absent or empty)`,
    hint: NCCL_HINTS.device,
  };
}

/** Everything that stands between this machine and the nccl backend (all of it, not just the first). */
export function ncclDiagnose(env: NodeJS.ProcessEnv = process.env, native?: NativeNccl): NcclDiagnosis {
  const n = native ? { nccl: native, path: "(given)" } : nativeNccl();
  if ("what" in n) {
    const devices = listedGpus();
    return { ok: false, problems: devices ? [n] : [n, noListedGpu()], cuda: false, devices, driverVersion: 0 };
  }
  const problems: NcclProblem[] = [];
  const nccl = n.nccl;
  if (!nccl.cuda) {
    problems.push({
      what: "cuda",
      reason: `the native addon (${n.path}) was built without CUDA (CMake found no CUDA toolkit, or CCLAB_NO_CUDA was set), so it has no GPU support`,
      hint: NCCL_HINTS.cuda,
    });
  }
  const lib = loadNcclLibrary(nccl, env);
  if (!lib.ok) problems.push({ what: "nccl", reason: lib.reason, hint: NCCL_HINTS.nccl });
  let devices = 0;
  const driverVersion = safe(() => nccl.driverVersion(), 0);
  if (!nccl.cuda) {
    // No CUDA runtime to ask: the driver's own list says whether there is a GPU at all.
    devices = listedGpus();
    if (devices === 0) problems.push(noListedGpu());
  } else {
    try {
      devices = nccl.deviceCount();
      if (devices === 0) throw new Error("cudaGetDeviceCount found 0 devices");
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      problems.push({
        what: "device",
        reason: `no GPU visible to CUDA: ${why} (CUDA driver: ${cudaVersion(driverVersion)}; runtime compiled in: ${cudaVersion(nccl.cudaRuntimeVersion)})`,
        hint: NCCL_HINTS.device,
      });
    }
  }
  return {
    ok: problems.length === 0,
    problems,
    addonPath: n.path,
    cuda: nccl.cuda,
    library: lib.ok ? lib : undefined,
    devices,
    driverVersion,
  };
}

/** Whether the nccl backend can run here, and if not why (every reason) and how to get it. */
export function ncclAvailable(): NcclAvailability {
  const d = ncclDiagnose();
  if (d.ok) return { ok: true };
  return {
    ok: false,
    reason: d.problems.map((p) => p.reason).join("\n"),
    hint: d.problems.map((p) => p.hint).join("\n"),
  };
}

export interface InitNcclOptions {
  readonly rank: number;
  readonly size: number;
  /** This rank's index on its node (picks the GPU: localRank % devices). Default: rank. */
  readonly localRank?: number;
  /** Ranks on this node. Default: $LOCAL_WORLD_SIZE, else size. */
  readonly localSize?: number;
  /** The rendezvous store; rank 0 publishes the unique id there. */
  readonly store: KVStore;
  /** Deadline of every wait, ms. Default: $CCLAB_TIMEOUT seconds, else 300 s. */
  readonly timeoutMs?: number;
  /** CUDA device to use. Default: $CCLAB_NCCL_DEVICE, else localRank % devices. */
  readonly device?: number;
  /** Store namespace of the world communicator. Default 'nccl/world'. */
  readonly key?: string;
  /** Blocking communicators. Default: $CCLAB_NCCL_BLOCKING, else only where NCCL lacks ncclCommInitRankConfig. */
  readonly blocking?: boolean;
  /** Called with the error after an asynchronous NCCL error or a timeout aborted the communicators. */
  readonly onAbort?: (e: Error) => void;
  /** A stand-in for the native binding (tests: test/support/nccl-fake.ts); skips the availability checks. */
  readonly native?: NativeNccl;
}

export function defaultTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const s = Number(env.CCLAB_TIMEOUT);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 300_000;
}

const truthy = (v: string | undefined) => /^(1|true|yes|on)$/i.test(v ?? "");

let processDevice: NcclDevice | undefined;

/** This process's rank of the world NCCL communicator (collective: every rank calls it). */
export async function initNccl(o: InitNcclOptions): Promise<NcclComm> {
  const env = process.env;
  if (!o?.store) {
    throw new InvalidArgumentError(
      { op: "initNccl", arg: "store" },
      "initNccl needs the rendezvous store: use init({ backend: 'nccl' }) or cclab run --backend nccl",
    );
  }
  const timeoutMs = o.timeoutMs ?? defaultTimeoutMs(env);
  let native = o.native;
  let library: NcclLibrary | undefined = native?.loaded() ?? undefined;
  let devices = 1;
  if (!native) {
    const d = ncclDiagnose(env);
    if (!d.ok) {
      const reason = d.problems.map((p) => p.reason).join("; ");
      const hint = d.problems.map((p) => p.hint).join("; ");
      throw new UnavailableError(`nccl backend unavailable: ${reason}; to get it: ${hint}`);
    }
    native = (nativeNccl() as { nccl: NativeNccl }).nccl;
    library = d.library;
    devices = d.devices;
  } else {
    devices = safe(() => native!.deviceCount(), 1);
  }
  const localRank = o.localRank ?? o.rank;
  const localSize = o.localSize ?? (Number(env.LOCAL_WORLD_SIZE) || o.size);
  const index = o.device ?? (env.CCLAB_NCCL_DEVICE ? Number(env.CCLAB_NCCL_DEVICE) : localRank % Math.max(1, devices));
  if (!o.native) {
    // Ranks sharing a GPU, started by something other than cclab run: apply its per-rank settings here.
    const shared = sharedGpuEnv({
      rank: o.rank,
      localSize,
      size: o.size,
      deviceCount: devices,
      ncclVersion: library?.version,
      env,
    });
    const fresh = Object.entries(shared.vars);
    for (const [k, v] of fresh) env[k] = v;
    if (fresh.length > 0 && o.rank === 0 && shared.warning) process.stderr.write(`${shared.warning}\n`);
  }
  let device: NcclDevice;
  if (o.native) {
    device = new NcclDevice({ native, index, timeoutMs, onAbort: o.onAbort });
  } else {
    if (!processDevice) {
      processDevice = new NcclDevice({ native, index, timeoutMs, onAbort: o.onAbort });
      const dev = processDevice;
      // A failing exit aborts at once; a clean one lets finalizing communicators finish.
      process.on("exit", (code) => dev.close(code !== 0));
    }
    device = processDevice;
    device.timeoutMs = timeoutMs;
    if (o.onAbort) device.onAbort = o.onAbort;
  }
  const blocking = o.blocking ?? (truthy(env.CCLAB_NCCL_BLOCKING) || !library?.optional.commInitRankConfig);
  const proc: NcclProcess = { device, store: o.store, worldRank: o.rank, blocking };
  return createComm(proc, {
    key: o.key ?? "nccl/world",
    rank: o.rank,
    size: o.size,
    worldRanks: Array.from({ length: o.size }, (_, i) => i),
  });
}

/**
 * For launchers (cclab run): the per-rank environment when a node runs more ranks than it has
 * GPUs (see env.ts), and the warning to print. Nothing where the backend cannot run here (the
 * ranks then fail with ncclAvailable's explanation).
 */
export function ncclLaunchEnv(o: { nprocs: number; nnodes: number }): {
  perRank: (rank: number) => Record<string, string>;
  warning?: string;
} {
  const n = nativeNccl();
  if ("what" in n || !n.nccl.cuda) return { perRank: () => ({}) };
  const devices = safe(() => n.nccl.deviceCount(), 0);
  const lib = loadNcclLibrary(n.nccl);
  const base = { localSize: o.nprocs, size: o.nprocs * o.nnodes, deviceCount: devices };
  const ncclVersion = lib.ok ? lib.version : undefined;
  const first = sharedGpuEnv({ rank: 0, ...base, ncclVersion });
  return {
    perRank: (rank) => sharedGpuEnv({ rank, ...base, ncclVersion }).vars,
    warning: first.warning,
  };
}

// ---- host <-> device ----

function deviceView(v: View | DataBuffer, op: string): { v: View; b: DeviceBuffer } {
  const vv = isView(v) ? v : view(v);
  if (!isDeviceBuffer(vv.buffer)) {
    throw new InvalidArgumentError({ op, arg: "view" }, `expected device memory, got ${vv.buffer.location}`);
  }
  return { v: vv, b: vv.buffer };
}

function hostElements(src: TypedArray | HostBuffer | View, op: string): TypedArray {
  if (isView(src)) {
    if (!isHostBuffer(src.buffer)) throw new InvalidArgumentError({ op, arg: "src" }, "expected host memory");
    return src.buffer.data.subarray(src.offset, src.offset + src.count) as TypedArray;
  }
  return src instanceof HostBuffer ? src.data : src;
}

/** Copies host elements (a TypedArray of the view's dtype, a HostBuffer or a host View) into a device view. */
export async function writeDevice(dst: View | DataBuffer, src: TypedArray | HostBuffer | View): Promise<void> {
  const { v, b } = deviceView(dst, "writeDevice");
  const arr = hostElements(src, "writeDevice");
  const info = dtypeInfo(b.dtype);
  if (!(arr instanceof info.array) || arr.length !== v.count) {
    throw new InvalidArgumentError(
      { op: "writeDevice", arg: "src" },
      `need ${v.count} elements as a ${info.array.name}, got ${arr.length} in a ${arr.constructor.name}`,
    );
  }
  if (v.count === 0) return;
  const dev = b.device;
  const what = `write to ${b.location}`;
  await dev.idle(what);
  try {
    dev.native.memcpyHtoD(b.ptr, v.offset * info.bytes, arr, 0, v.count * info.bytes, dev.stream);
  } catch (e) {
    throw toEngineError(e, what);
  }
}

/** Waits for everything enqueued so far, then copies the view's elements to a new host TypedArray. */
export async function readDevice(src: View | DataBuffer): Promise<TypedArray> {
  const { v, b } = deviceView(src, "readDevice");
  const info = dtypeInfo(b.dtype);
  const out = new info.array(v.count);
  if (v.count === 0) return out;
  const dev = b.device;
  const what = `read from ${b.location}`;
  await dev.idle(what);
  try {
    dev.native.memcpyDtoH(out, 0, b.ptr, v.offset * info.bytes, v.count * info.bytes, dev.stream);
  } catch (e) {
    throw toEngineError(e, what);
  }
  return out;
}

/** A device copy of host data, allocated on `comm` (torch's tensor.cuda()). */
export async function toDevice(comm: Comm, src: HostBuffer): Promise<DataBuffer> {
  const b = comm.alloc(src.dtype, src.count);
  await writeDevice(view(b), src.data);
  return b;
}

/** A host copy of a device view (torch's tensor.cpu()). */
export async function toHost(src: View | DataBuffer): Promise<HostBuffer> {
  const { b } = deviceView(src, "toHost");
  return new HostBuffer(b.dtype, await readDevice(src));
}

function safe<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}
