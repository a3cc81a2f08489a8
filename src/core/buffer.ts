/**
 * Buffers and views. A DataBuffer is typed memory somewhere (host, or a device in the nccl
 * backend); a View is (buffer, offset, count) in elements. Nothing here assumes host memory:
 * only HostBuffer exposes `data`, and only backends that own host memory read it.
 */
import { type DType, dtypeInfo, fromValues, type TypedArray, toValues } from "./dtype.js";
import { InvalidArgumentError } from "./errors.js";

export interface DataBuffer {
  readonly dtype: DType;
  /** Length in elements. */
  readonly count: number;
  /** 'host', or a device such as 'cuda:0'. */
  readonly location: string;
}

export interface View {
  readonly buffer: DataBuffer;
  /** Offset in elements from the buffer's start. */
  readonly offset: number;
  readonly count: number;
}

/**
 * What a transfer or a collective takes as data (torch takes a tensor): a typed array of a cclab
 * dtype (a Float32Array is float32; wrapped, no copy), a cclab buffer, or a view of one.
 */
export type Buf = DataBuffer | View | TypedArray;

/** Host memory: the TypedArray matching the dtype (raw bits for float16/bfloat16). */
export class HostBuffer implements DataBuffer {
  readonly location = "host";
  readonly count: number;
  readonly data: TypedArray;
  constructor(
    readonly dtype: DType,
    countOrData: number | TypedArray,
  ) {
    if (typeof countOrData === "number") {
      this.data = new (dtypeInfo(dtype).array)(countOrData);
    } else {
      if (!(countOrData instanceof dtypeInfo(dtype).array)) {
        throw new InvalidArgumentError(
          { op: "HostBuffer", arg: "data" },
          `a ${dtype} buffer needs a ${dtypeInfo(dtype).array.name}, got ${countOrData.constructor.name}`,
        );
      }
      this.data = countOrData;
    }
    this.count = this.data.length;
  }
  /** The elements as numbers (bigints for 64-bit integers), half types decoded. */
  values(offset = 0, count = this.count - offset): (number | bigint)[] {
    return toValues(this.dtype, this.data, offset, count);
  }
}

export function isHostBuffer(b: DataBuffer): b is HostBuffer {
  return b instanceof HostBuffer;
}

/** A host buffer holding `values`, e.g. tensor('float32', [1, 2, 3]) (torch.tensor). */
export function tensor(dtype: DType, values: ArrayLike<number | bigint>): HostBuffer {
  return new HostBuffer(dtype, fromValues(dtype, values));
}

/** A zero-filled host buffer (torch.zeros). */
export function zeros(dtype: DType, count: number): HostBuffer {
  return new HostBuffer(dtype, count);
}

export function isView(x: unknown): x is View {
  return typeof x === "object" && x !== null && "buffer" in x && "offset" in x && "count" in x;
}

/** A view of `buffer` (or of another view), bounds-checked. */
export function view(of: DataBuffer | View, offset = 0, count?: number): View {
  const base = isView(of) ? of : { buffer: of, offset: 0, count: of.count };
  const n = count ?? base.count - offset;
  if (!Number.isInteger(offset) || !Number.isInteger(n) || offset < 0 || n < 0 || offset + n > base.count) {
    throw new InvalidArgumentError(
      { op: "view", arg: "offset/count" },
      `view [${offset}, ${offset + n}) is outside its base of ${base.count} elements`,
    );
  }
  return { buffer: base.buffer, offset: base.offset + offset, count: n };
}

/** Accepts a buffer or a view where the public API takes either. */
export function asView(x: DataBuffer | View): View {
  return isView(x) ? x : view(x);
}

export function viewBytes(v: View): number {
  return v.count * dtypeInfo(v.buffer.dtype).bytes;
}

/** True when two views are the same elements of the same buffer. */
export function sameView(a: View, b: View): boolean {
  return a.buffer === b.buffer && a.offset === b.offset && a.count === b.count;
}

/** True when two views share any element of the same buffer. */
export function overlaps(a: View, b: View): boolean {
  return (
    a.buffer === b.buffer &&
    a.count > 0 &&
    b.count > 0 &&
    a.offset < b.offset + b.count &&
    b.offset < a.offset + a.count
  );
}
