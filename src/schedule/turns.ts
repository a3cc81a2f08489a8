/**
 * Step 2 of the proof by rotation (rotation.ts): every rank's steps are rank 0's turned. Each
 * rank's steps are generated (plan.ts's planSteps, the compiler's front end) and compared, step
 * by step, with rank 0's: peers moved on by r, regions by their buffer's turn, none wrapping
 * round its buffer's end, except a local operation over whole buffers that all turn alike.
 */

import { rankCall } from "../specs/index.js";
import type { CollectiveCall, Layout } from "../specs/types.js";
import { type Algorithm, type BufferName, type LocalOp, type Region, regionText, type Step } from "./dsl.js";
import { labelOf } from "./lint.js";
import { type Plan, type PlanFrame, planSteps } from "./plan.js";

/**
 * How far each buffer of rank r turns: r times `by`, modulo the buffer's size. Scratch below
 * `scaled` (the prologue's scaled copy of the input) turns as the input; the algorithm's own
 * scratch above it does not turn.
 */
export interface Turn {
  readonly n: number;
  readonly by: Readonly<Record<BufferName, number>>;
  readonly size: Readonly<Record<BufferName, number>>;
  readonly scaled: number;
}

/** The ring of elements region x turns in: its size and rank 1's turn (0: it does not turn). */
function span(x: Region, t: Turn): { readonly size: number; readonly by: number } {
  if (x.buf !== "scratch") return { size: t.size[x.buf], by: t.by[x.buf] };
  if (x.offset + x.count <= t.scaled) return { size: t.scaled, by: t.by.input };
  // Straddling the scaled copy's end: no turn keeps it whole unless the input turns by nothing.
  return { size: t.size.scratch, by: x.offset >= t.scaled || t.by.input === 0 ? 0 : Number.NaN };
}

/** Why some rank of [from, to) has steps that are not rank 0's turned, or undefined where all are. */
export function checkTurns(
  alg: Algorithm,
  call: CollectiveCall,
  plan: Plan,
  t: Turn,
  from: number,
  to: number,
): string | undefined {
  const steps0 = plan.steps;
  const shared0 = [...plan.shared].join(",");
  const code = encode(steps0);
  const moved = new Float64Array(3);
  for (let r = from; r < to; r++) {
    // How far each buffer moves on rank r (input, output, the scaled copy in scratch), once a rank.
    moved[0] = t.size.input > 0 ? (t.by.input * r) % t.size.input : 0;
    moved[1] = t.size.output > 0 ? (t.by.output * r) % t.size.output : 0;
    moved[2] = t.scaled > 0 ? (t.by.input * r) % t.scaled : 0;
    const frame = {} as PlanFrame;
    let s = 0;
    for (const st of planSteps(alg, rankCall(call, r), frame)) {
      const a = steps0[s];
      if (a === undefined) return `rank ${r} has more steps than rank 0's ${steps0.length}`;
      const d = sameAt(code, s, st, r, t, moved) ? undefined : differs(a, st, r, t);
      if (d) return `rank ${r}, step ${s} ('${labelOf(st)}') is not rank 0's step ${s} turned by ${r}: ${d}`;
      const label = labelOf(st);
      if (label.length === 0) return `rank ${r}, step ${s} has no label`;
      s++;
    }
    if (s !== steps0.length) return `rank ${r} has ${s} steps, rank 0 ${steps0.length}`;
    if (!sameLayout(frame.layout, plan.layout, plan.call.inPlace) || frame.scratch !== plan.scratch)
      return `rank ${r}'s buffers differ from rank 0's`;
    if (frame.call.inPlace !== plan.call.inPlace || frame.scheduled.inPlace !== plan.scheduled.inPlace)
      return `rank ${r} runs ${frame.call.inPlace ? "in" : "out of"} place, rank 0 not`;
    if ([...frame.shared].join(",") !== shared0) return `rank ${r}'s prologue differs from rank 0's`;
  }
  return undefined;
}

/**
 * Rank 0's steps as numbers, read in order for every other rank: as objects they outgrow the
 * processor's caches past a few thousand ranks (32,766 steps at 16,384), and comparing each
 * rank's steps with them then waited on memory. Step s starts at at[s]: its transfer and local
 * counts, then per transfer kind (0 send, 1 recv), peer, channel, region; per local kind (0
 * copy, 1 reduce, 2 scale), then dst, src, with (buffer -1 where none); a region is buffer (0
 * input, 1 output, 2 scratch), offset, count.
 */
interface Encoded {
  readonly at: Int32Array;
  readonly v: Float64Array;
}

const BUF: Readonly<Record<string, number>> = { input: 0, output: 1, scratch: 2 };

function encode(steps: readonly Step[]): Encoded {
  const v: number[] = [];
  const at = new Int32Array(steps.length);
  const region = (x: Region | undefined) => {
    if (x) v.push(BUF[x.buf] ?? -2, x.offset, x.count);
    else v.push(-1, 0, 0);
  };
  steps.forEach((st, s) => {
    at[s] = v.length;
    v.push(st.transfers.length, st.local.length);
    for (const x of st.transfers) {
      v.push(x.kind === "send" ? 0 : 1, x.peer, x.channel ?? 0);
      region(x.region);
    }
    for (const x of st.local) {
      v.push(x.kind === "copy" ? 0 : x.kind === "reduce" ? 1 : 2);
      region(x.dst);
      region(x.src);
      region(x.kind === "reduce" ? x.with : undefined);
    }
  });
  return { at, v: Float64Array.from(v) };
}

/**
 * Rank r's step y is rank 0's step s turned, region for region, none wrapping (differs() then
 * decides, and words, anything else: a scaling's factors, whole buffers turned alike).
 */
function sameAt(e: Encoded, s: number, y: Step, r: number, t: Turn, moved: Float64Array): boolean {
  const v = e.v;
  let k = e.at[s] as number;
  const tr = y.transfers;
  const lo = y.local;
  if (v[k] !== tr.length || v[k + 1] !== lo.length) return false;
  k += 2;
  for (let i = 0; i < tr.length; i++, k += 6) {
    const x = tr[i] as Step["transfers"][number];
    // Peers and ranks are below n: one subtraction is the remainder.
    const peer = (v[k + 1] as number) + r;
    if (v[k] !== (x.kind === "send" ? 0 : 1) || x.peer !== (peer >= t.n ? peer - t.n : peer)) return false;
    if ((x.channel ?? 0) !== v[k + 2] || !regionAt(v, k + 3, x.region, t, moved)) return false;
  }
  for (let i = 0; i < lo.length; i++, k += 10) {
    const x = lo[i] as LocalOp;
    if (x.kind === "scale" || v[k] !== (x.kind === "copy" ? 0 : 1)) return false;
    if (!regionAt(v, k + 1, x.dst, t, moved) || !regionAt(v, k + 4, x.src, t, moved)) return false;
    const w = x.kind === "reduce" ? x.with : undefined;
    if (w === undefined ? v[k + 7] !== -1 : !regionAt(v, k + 7, w, t, moved)) return false;
  }
  return true;
}

/** y is the region encoded at v[k..k+2] turned as `moved` says (turned(), on the numbers). */
function regionAt(v: Float64Array, k: number, y: Region, t: Turn, moved: Float64Array): boolean {
  const buf = v[k] as number;
  const off = v[k + 1] as number;
  const count = v[k + 2] as number;
  if (BUF[y.buf] !== buf || y.count !== count) return false;
  if (count === 0) return Number.isInteger(y.offset) && y.offset >= 0 && y.offset <= t.size[y.buf];
  let size: number;
  let d: number;
  if (buf === 0) {
    size = t.size.input;
    d = moved[0] as number;
  } else if (buf === 1) {
    size = t.size.output;
    d = moved[1] as number;
  } else {
    if (off + count > t.size.scratch) return false;
    if (off + count > t.scaled) return off >= t.scaled || t.by.input === 0 ? y.offset === off : false;
    size = t.scaled;
    d = moved[2] as number;
  }
  if (d === 0) return y.offset === off;
  // off < size and d < size: one subtraction is the remainder.
  const to = off + d >= size ? off + d - size : off + d;
  return to + count <= size && y.offset === to;
}

/** The same buffers (and, in place, the same aliasing: out of place it is not used). */
const sameLayout = (a: Layout, b: Layout, inPlace: boolean): boolean =>
  a.inputCount === b.inputCount &&
  a.outputCount === b.outputCount &&
  (!inPlace || (a.alias?.kind === b.alias?.kind && a.alias?.offset === b.alias?.offset));

/** Rank 0's region x turned by r: where it must be on rank r (undefined where it wraps round its buffer). */
function turned(x: Region, r: number, t: Turn): number | undefined {
  // Only where sameAt (the numbers, every step of every rank) found a difference: span() once.
  const { size, by } = span(x, t);
  if (Number.isNaN(by)) return undefined;
  if (size === 0 || by === 0) return x.offset;
  const at = (x.offset + ((by * r) % size)) % size;
  return at + x.count <= size ? at : undefined;
}

/** Where the prologue put a scaled copy of the input in scratch, its size (else 0). */
export function scaledCopy(plan: Plan): number {
  const first = plan.shared.has(0) ? plan.steps[0]?.local[0] : undefined;
  return first?.kind === "scale" && first.dst.buf === "scratch" ? first.dst.count : 0;
}

/** y is x turned by r (an empty region anywhere in its buffer is any other). */
function sameTurned(x: Region, y: Region, r: number, t: Turn): boolean {
  if (x.buf !== y.buf || x.count !== y.count) return false;
  if (x.count === 0) return Number.isInteger(y.offset) && y.offset >= 0 && y.offset <= t.size[y.buf];
  if (x.buf === "scratch" && x.offset + x.count > t.size.scratch) return false;
  return turned(x, r, t) === y.offset;
}

/** What differs between rank 0's step a turned by r and rank r's step b. */
function differs(a: Step, b: Step, r: number, t: Turn): string | undefined {
  if (a.transfers.length !== b.transfers.length || a.local.length !== b.local.length)
    return `${b.transfers.length} transfers and ${b.local.length} local operations, rank 0 ${a.transfers.length} and ${a.local.length}`;
  for (let i = 0; i < a.transfers.length; i++) {
    const x = a.transfers[i] as (typeof a.transfers)[number];
    const y = b.transfers[i] as (typeof b.transfers)[number];
    if (
      x.kind !== y.kind ||
      (x.channel ?? 0) !== (y.channel ?? 0) ||
      y.peer !== (x.peer + r) % t.n ||
      !sameTurned(x.region, y.region, r, t)
    )
      return `${y.kind}(${y.peer}, ${regionText(y.region)}) where rank 0's ${x.kind}(${x.peer}, ${regionText(x.region)}) turned is ${x.kind}(${(x.peer + r) % t.n}, ${turnText(x.region, r, t)})`;
  }
  for (let i = 0; i < a.local.length; i++) {
    const x = a.local[i] as LocalOp;
    const y = b.local[i] as LocalOp;
    const same =
      x.kind === y.kind &&
      ((sameTurned(x.dst, y.dst, r, t) && sameTurned(x.src, y.src, r, t)) || wholeTurn(x, y, r, t)) &&
      (x.kind !== "reduce" ||
        y.kind !== "reduce" ||
        (x.with === undefined ? y.with === undefined : y.with !== undefined && sameTurned(x.with, y.with, r, t))) &&
      (x.kind !== "scale" || y.kind !== "scale" || (x.mul === y.mul && x.div === y.div));
    if (!same)
      return `${y.kind} into ${regionText(y.dst)} from ${regionText(y.src)} where rank 0's turned is ${x.kind} into ${turnText(x.dst, r, t)} from ${turnText(x.src, r, t)}`;
  }
  return undefined;
}

/**
 * A local operation on whole buffers that all turn alike (the prologue's copy of the input into
 * the output, an epilogue's scaling) turns onto itself element for element, though each region
 * wraps round its buffer: element e of every operand moves to e + the turn, in each.
 */
function wholeTurn(x: LocalOp, y: LocalOp, r: number, t: Turn): boolean {
  const regions = (o: LocalOp) => [o.dst, o.src, ...(o.kind === "reduce" && o.with ? [o.with] : [])];
  const a = regions(x);
  const b = regions(y);
  const whole = span(x.dst, t);
  const by = (whole.by * r) % Math.max(whole.size, 1);
  return (
    a.length === b.length &&
    a.every((g, k) => {
      const h = b[k] as Region;
      const sp = span(g, t);
      return (
        g.buf === h.buf &&
        g.offset === 0 &&
        h.offset === 0 &&
        g.count === whole.size &&
        h.count === whole.size &&
        sp.size === whole.size &&
        (sp.by * r) % Math.max(whole.size, 1) === by
      );
    })
  );
}

export const turnText = (x: Region, r: number, t: Turn): string => {
  const at = turned(x, r, t);
  return at === undefined ? `${regionText(x)} moved past the end of its buffer` : regionText({ ...x, offset: at });
};
