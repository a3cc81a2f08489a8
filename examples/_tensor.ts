/**
 * Small row-major helpers for the examples: build 1-D/2-D host tensors, move column blocks in and
 * out of contiguous order (the seeds' torch.cat/torch.split along dim 1), and print values the way
 * torch, numpy and Python print them, so each example's output reads like its seed's.
 */
import { type DType, type HostBuffer, tensor, zeros } from "../src/index.js";

/** [n] or [rows, cols]. */
export type Shape = readonly number[];

const numel = (shape: Shape) => shape.reduce((a, b) => a * b, 1);

/** A tensor of `shape` whose element (i, j) (or i, for 1-D) is f(i, j). */
export function fromFn(dtype: DType, shape: Shape, f: (i: number, j: number) => number): HostBuffer {
  const cols = shape.length === 2 ? shape[1]! : 1;
  const values = Array.from({ length: numel(shape) }, (_, k) => f(Math.floor(k / cols), k % cols));
  return tensor(dtype, isBig(dtype) ? values.map((v) => BigInt(v)) : values);
}

/** torch.full(shape, value). */
export function full(dtype: DType, shape: Shape, value: number): HostBuffer {
  return fromFn(dtype, shape, () => value);
}

/** torch.arange(n) + start. */
export function arange(dtype: DType, n: number, start = 0): HostBuffer {
  return fromFn(dtype, [n], (i) => start + i);
}

function isBig(dtype: DType): boolean {
  return dtype === "int64" || dtype === "uint64";
}

/** The elements as numbers (the examples' values are small). */
export function nums(b: HostBuffer): number[] {
  return b.values().map(Number);
}

/** Writes `values` into `b` (the examples' local arithmetic: tensor * 2, exp(x - max), ...). */
export function setNums(b: HostBuffer, values: readonly number[]): void {
  for (let i = 0; i < values.length; i++) {
    (b.data as unknown as (number | bigint)[])[i] = isBig(b.dtype) ? BigInt(values[i]!) : values[i]!;
  }
}

/** Elements [offset, offset + count) as their own tensor (a copy, as .contiguous() gives). */
export function slice(b: HostBuffer, offset: number, count: number): HostBuffer {
  return tensor(b.dtype, b.values(offset, count));
}

/** torch.cat(list, dim=0) for flat tensors. */
export function cat(list: readonly HostBuffer[]): HostBuffer {
  const out = zeros(
    list[0]!.dtype,
    list.reduce((a, t) => a + t.count, 0),
  );
  let at = 0;
  for (const t of list) {
    (out.data as unknown as { set(a: ArrayLike<unknown>, o: number): void }).set(t.data, at);
    at += t.count;
  }
  return out;
}

/**
 * `k` row-major blocks of rows x cols each, stored one after another (what gather/all-gather
 * deliver), laid side by side: torch.cat(blocks, dim=1), a rows x (k*cols) tensor.
 */
export function catDim1(stacked: HostBuffer, k: number, rows: number, cols: number): HostBuffer {
  const v = nums(stacked);
  return fromFn(
    stacked.dtype,
    [rows, k * cols],
    (i, j) => v[Math.floor(j / cols) * rows * cols + i * cols + (j % cols)]!,
  );
}

/**
 * The inverse: a rows x cols tensor split along dim 1 into `k` column blocks, each made
 * contiguous and stored one after another, so a collective can move block b as elements
 * [b*rows*(cols/k), ...). torch.split(t, cols/k, dim=1) followed by .contiguous().
 */
export function splitDim1(t: HostBuffer, rows: number, cols: number, k: number): HostBuffer {
  const w = cols / k;
  const v = nums(t);
  return fromFn(t.dtype, [k * rows * w], (n) => {
    const b = Math.floor(n / (rows * w));
    const i = Math.floor((n % (rows * w)) / w);
    return v[i * cols + b * w + (n % w)]!;
  });
}

// ---- printing ----

/** Each element as torch writes it: ints as is, whole floats as "6.", others with 4 decimals. */
function torchElems(b: HostBuffer): string[] {
  const vs = nums(b);
  if (!b.dtype.startsWith("float") && b.dtype !== "bfloat16") return pad(vs.map(String));
  const whole = vs.every((x) => Number.isInteger(x));
  const s = vs.map((x) => (whole ? `${x}.` : x.toFixed(4)));
  return pad(s);
}

/** numpy pads whole floats the same way ("[ 0.  1. 10.]"), with spaces between elements. */
function numpyElems(b: HostBuffer): string[] {
  const vs = nums(b);
  if (!b.dtype.startsWith("float")) return pad(vs.map(String));
  const whole = vs.every((x) => Number.isInteger(x));
  return pad(vs.map((x) => (whole ? `${x}.` : String(Math.fround(x)))));
}

function pad(s: string[]): string[] {
  const w = Math.max(0, ...s.map((x) => x.length));
  return s.map((x) => x.padStart(w));
}

function rowsOf<T>(xs: T[], shape: Shape): T[][] {
  const cols = shape.length === 2 ? shape[1]! : xs.length;
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += cols) out.push(xs.slice(i, i + cols));
  return out;
}

/** print(t) in torch: tensor([1., 2.]), tensor([[0., 0.],\n        [1., 1.]]), tensor(5.) for a 0-d shape []. */
export function torchStr(b: HostBuffer, shape: Shape = [b.count]): string {
  const s = torchElems(b);
  if (shape.length === 0) return `tensor(${s[0]!.trim()})`;
  if (shape.length === 1) return `tensor([${s.join(", ")}])`;
  return `tensor([${rowsOf(s, shape)
    .map((r) => `[${r.join(", ")}]`)
    .join(",\n        ")}])`;
}

/** print(t.cpu().numpy()): [0. 1.] or [[0. 1.]\n [2. 3.]]. */
export function numpyStr(b: HostBuffer, shape: Shape = [b.count]): string {
  const s = numpyElems(b);
  if (shape.length === 1) return `[${s.join(" ")}]`;
  return `[${rowsOf(s, shape)
    .map((r) => `[${r.join(" ")}]`)
    .join("\n ")}]`;
}

/** print(t.tolist()): Python floats ("2.0") or ints, nested for 2-D. */
export function listStr(b: HostBuffer, shape: Shape = [b.count]): string {
  const float = b.dtype.startsWith("float");
  const s = nums(b).map((x) => (float && Number.isInteger(x) ? `${x}.0` : String(x)));
  if (shape.length === 1) return `[${s.join(", ")}]`;
  return `[${rowsOf(s, shape)
    .map((r) => `[${r.join(", ")}]`)
    .join(", ")}]`;
}

/** torch.Size([4, 5]). */
export function sizeStr(shape: Shape): string {
  return `torch.Size([${shape.join(", ")}])`;
}

/** Python's repr for the objects the seeds pass around: 'foo', 12, {1: 2}, [..], None. */
export function pyRepr(x: unknown): string {
  if (x === null || x === undefined) return "None";
  if (typeof x === "string") return `'${x}'`;
  if (typeof x === "boolean") return x ? "True" : "False";
  if (Array.isArray(x)) return `[${x.map(pyRepr).join(", ")}]`;
  if (x instanceof Map) return `{${[...x].map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
  if (typeof x === "object") {
    return `{${Object.entries(x)
      .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
      .join(", ")}}`;
  }
  return String(x);
}
