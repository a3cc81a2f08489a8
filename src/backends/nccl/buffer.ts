/**
 * Device memory of one process's GPU (nccl backend): a DataBuffer over a device pointer. It
 * makes no CUDA call itself: its memory goes back through its device (NcclDevice.release,
 * stream-ordered) when freed or garbage collected. Only NcclComm and the helpers in index.ts use it.
 */
import type { DataBuffer } from "../../core/buffer.js";
import { type DType, dtypeInfo } from "../../core/dtype.js";
import type { DevicePtr } from "../../native/types.js";
import type { NcclDevice } from "./device.js";

/** Device memory of one process's GPU (nccl backend), allocated by NcclDevice.alloc. */
export class DeviceBuffer implements DataBuffer {
  readonly location: string;
  private freed = false;
  constructor(
    readonly dtype: DType,
    readonly count: number,
    readonly ptr: DevicePtr,
    readonly device: NcclDevice,
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

const registry = new FinalizationRegistry<{ device: NcclDevice; ptr: DevicePtr }>(({ device, ptr }) =>
  device.release(ptr),
);
