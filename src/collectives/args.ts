/**
 * The front API's argument checks, made once at the public boundary with messages naming the
 * rank, the operation and the argument: buffers (typed arrays wrap without a copy), sizes,
 * dtypes, roots, ops and membership.
 */
import { checkView } from "../checks.js";
import type { Comm } from "../comm.js";
import { asView, type DataBuffer, HostBuffer, isView, type View } from "../core/buffer.js";
import type { DType, TypedArray } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { checkOpFitsDType, parseOp, type ReduceOp } from "../core/op.js";

/** What the front API takes as a buffer: a typed array, a cclab buffer, or a view of one. */
export type Buf = DataBuffer | View | TypedArray;

export const site = (comm: Comm, op: string, arg?: string) => ({ rank: comm.rank, op, arg });

const ARRAY_DTYPES: ReadonlyMap<unknown, DType> = new Map<unknown, DType>([
  [Float32Array, "float32"],
  [Float64Array, "float64"],
  [Int8Array, "int8"],
  [Uint8Array, "uint8"],
  [Int32Array, "int32"],
  [Uint32Array, "uint32"],
  [BigInt64Array, "int64"],
  [BigUint64Array, "uint64"],
]);

/** A buffer argument as a view, checked: a typed array wraps (no copy), a buffer or view is bounds-checked. */
export function viewArg(comm: Comm, name: string, arg: string, b: unknown): View {
  if (ArrayBuffer.isView(b) && !(b instanceof DataView)) {
    const dtype = ARRAY_DTYPES.get(b.constructor);
    if (!dtype) {
      const why =
        b instanceof Uint16Array
          ? "a Uint16Array could hold float16 or bfloat16 bits: wrap it as new HostBuffer('float16', array) or tensor('bfloat16', values)"
          : `${b.constructor.name} has no cclab dtype`;
      throw new InvalidArgumentError(site(comm, name, arg), why);
    }
    return checkView(comm.rank, asView(new HostBuffer(dtype, b as TypedArray)), name, arg);
  }
  if (isView(b)) return checkView(comm.rank, b, name, arg);
  const isBuffer = typeof b === "object" && b !== null && "dtype" in b && "count" in b && "location" in b;
  if (!isBuffer) {
    throw new InvalidArgumentError(
      site(comm, name, arg),
      `expected a typed array (Float32Array, Int32Array, ...), a cclab buffer or a view, got ${describe(b)}`,
    );
  }
  return checkView(comm.rank, asView(b as DataBuffer), name, arg);
}

function describe(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x === "object") return x.constructor?.name ?? "object";
  return `${typeof x} ${JSON.stringify(x)}`;
}

export function checkMember(comm: Comm, name: string): void {
  if (comm.rank < 0) {
    throw new InvalidArgumentError(
      { op: name, arg: "comm" },
      `this process is not a member of the group (world ranks ${comm.worldRanks.join(", ")})`,
    );
  }
}

export function checkRoot(comm: Comm, name: string, root: unknown): number {
  const r = root ?? 0;
  if (typeof r !== "number" || !Number.isInteger(r) || r < 0 || r >= comm.size) {
    throw new InvalidArgumentError(
      site(comm, name, "options.root"),
      `root must be an integer rank in [0, ${comm.size}), got ${typeof r === "string" ? JSON.stringify(r) : String(r)}`,
    );
  }
  return r;
}

/** `b` as a view of exactly `want` elements, of `dtype` (the dtype of the call's `against` buffer). */
export function sizedArg(
  comm: Comm,
  name: string,
  arg: string,
  b: unknown,
  want: number,
  dtype: DType,
  against = "input",
): View {
  if (b === undefined) throw new InvalidArgumentError(site(comm, name, arg), `is required here (${want} elements)`);
  const v = viewArg(comm, name, arg, b);
  if (v.count !== want)
    throw new InvalidArgumentError(site(comm, name, arg), `must have ${want} elements, has ${v.count}`);
  if (v.buffer.dtype !== dtype) {
    throw new InvalidArgumentError(
      site(comm, name, arg),
      `dtype ${v.buffer.dtype} differs from the ${against}'s ${dtype}`,
    );
  }
  return v;
}

/** options.op as a ReduceOp that fits the dtype ('SUM' and 'sum' alike). */
export function opFor(comm: Comm, name: string, options: { readonly op?: ReduceOp | string }, dtype: DType): ReduceOp {
  const raw = options.op ?? "sum";
  const op = parseOp(typeof raw === "string" ? raw.toLowerCase() : raw, site(comm, name, "options.op"));
  checkOpFitsDType(op, dtype, site(comm, name, "options.op"));
  return op;
}
