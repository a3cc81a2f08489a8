/**
 * Device memory of one process's GPU (nccl backend): a DataBuffer over a device pointer. It
 * makes no CUDA call itself: its memory goes back through its device (NcclDevice.release,
 * stream-ordered) when freed or garbage collected. Only NcclComm and the helpers in index.ts use it.
 */
import type { DataBuffer } from "../../core/buffer.js";
import { type DType, dtypeInfo } from "../../core/dtype.js";
import type { DevicePtr, NativeNccl } from "../../native/types.js";

/**
 * What a DeviceBuffer needs of its device (NcclDevice is the one): its index, the engine and
 * stream to copy on, a wait for its queued work, and where memory goes back. An interface here,
 * so buffer.ts and device.ts do not import each other.
 */
export interface DeviceMemory {
  readonly index: number;
  readonly native: NativeNccl;
  readonly stream: number;
  release(ptr: DevicePtr): void;
  idle(what: string, timeoutMs?: number): Promise<void>;
}

/** Device memory of one process's GPU (nccl backend), allocated by NcclDevice.alloc. */
export class DeviceBuffer implements DataBuffer {
  readonly location: string;
  private freed = false;
  constructor(
    readonly dtype: DType,
    readonly count: number,
    readonly ptr: DevicePtr,
    readonly device: DeviceMemory,
  ) {
    this.location = `cuda:${device.index}`;
    if (ptr !== 0n) registry.register(this, { device, ptr }, this);
  }
  get byteLength(): number {
    return this.count * dtypeInfo(this.dtype).bytes;
  }
  /** Gives the memory back now (stream-ordered); otherwise it goes when the buffer is garbage collected. */
  free(): void {
    if (this.freed) return;
    this.freed = true;
    registry.unregister(this);
    this.device.release(this.ptr);
  }
}

export function isDeviceBuffer(b: DataBuffer): b is DeviceBuffer {
  return b instanceof DeviceBuffer;
}

const registry = new FinalizationRegistry<{ device: DeviceMemory; ptr: DevicePtr }>(({ device, ptr }) =>
  device.release(ptr),
);
