/**
 * The language algorithms are written in. An algorithm never calls send and never touches data:
 * it returns a *schedule*, a sequence of steps over symbolic regions ('input', 'output', scratch
 * it allocates), so one schedule runs on sim, MPI and stream-ordered on a GPU, and can be proved
 * (check.ts), explained (explain.ts) and modelled (model.ts) without running it.
 *
 * A step is a group of transfers posted together (ncclGroupStart/End) plus local copies and
 * reductions. Steps give *program order*; execution is dataflow: each operation waits only for
 * the earlier operations whose memory it reads or overwrites (read-after-write, write-after-read,
 * write-after-write on overlapping regions) and, per peer and channel, sends and receives are
 * posted in program order. So independent work overlaps without being asked to: a tree's down
 * phase for segment k runs while segment k+1 is still going up. `parallel` runs sub-schedules
 * on their own channels so their messages never wait on each other's order.
 *
 * What every algorithm of a collective shares is not written in it (src/schedule/plan.ts):
 * count 0 (nothing to do), one rank (the input is the result), avg and premulsum scaling, and,
 * for algorithms marked `form: "in-place"`, the out-of-place copy of the input into the output.
 */
import { invariant } from "../core/assert.js";
import type { RankCall, Shape, ShapeFamily } from "../specs/types.js";

export type BufferName = "input" | "output" | "scratch";

export interface Region {
  readonly buf: BufferName;
  /** In elements. */
  readonly offset: number;
  readonly count: number;
}

export interface Transfer {
  readonly kind: "send" | "recv";
  /** Rank in the communicator the collective runs on. */
  readonly peer: number;
  readonly region: Region;
  /**
   * Messages between two ranks match in posting order per channel (MSCCL's channels, NCCL's
   * connections); default 0. `parallel` gives each sub-schedule its own.
   */
  readonly channel?: number;
}

export type LocalOp =
  | { readonly kind: "copy"; readonly dst: Region; readonly src: Region }
  /** dst <- (with ?? dst) (op) src, element-wise (NCCL's reduce and reduceCopy). */
  | { readonly kind: "reduce"; readonly dst: Region; readonly src: Region; readonly with?: Region }
  /** dst <- src · mul / div: the prologue's and epilogue's scaling for premulsum and avg (plan.ts). */
  | { readonly kind: "scale"; readonly dst: Region; readonly src: Region; readonly mul: number; readonly div: number };

export interface Step {
  /** What the step does, in NCCL's primitive verbs where they fit: 'recvReduceSend chunk 2'. */
  readonly label: string;
  /** Posted together as one group. */
  readonly transfers: readonly Transfer[];
  /** After the transfers in program order; each waits only for what it reads and writes. */
  readonly local: readonly LocalOp[];
}

export type Schedule = Iterable<Step>;

/** The memory an algorithm's schedule works on, for one rank. */
export interface Memory {
  /** The whole input and output of this rank, as the collective's spec lays them out. */
  readonly input: Region;
  readonly output: Region;
  /** A fresh scratch region of `count` elements; the plan sizes scratch from what is asked. */
  scratch(count: number): Region;
}

/** A cost formula: its text for headers and docs, and its value for n ranks. */
export interface Formula {
  readonly text: string;
  value(n: number, count: number, segment: number): number;
}

export interface Cost {
  /** Communication steps (steps with a transfer), the most any rank takes. */
  readonly steps: Formula;
  /** Elements sent, the most any rank sends. */
  readonly sent: Formula;
  /**
   * Where the formulas are exact (e.g. counts divisible by n, n a power of two); elsewhere the
   * checker holds the schedule to them as upper bounds. Default: exact everywhere.
   */
  exact?(n: number, count: number, segment: number): boolean;
}

/**
 * Where an algorithm's schedule is defined, for the few that are not defined for every call: an
 * imported MSCCL program (src/msccl) is written for one group size, whole chunks and, rooted, one
 * root. The plan refuses calls outside it (naming `why`); the checker's matrix and the property
 * tests draw their calls from it.
 */
export interface Domain {
  /** The group sizes it is written for. */
  readonly sizes: readonly number[];
  /** Counts are multiples of this (default 1). */
  readonly countMultiple?: number;
  /** Rooted collectives: the roots it is written for (default every rank). */
  readonly roots?: readonly number[];
  /** What it is, for messages: 'an MSCCL program for 8 GPUs, 16 chunks per loop'. */
  readonly why: string;
}

/** Why a call is outside an algorithm's domain, or undefined where it is inside (or has none). */
export function outsideDomain(
  alg: Algorithm,
  c: { readonly size: number; readonly count: number; readonly root: number },
): string | undefined {
  const d = alg.domain;
  if (!d) return undefined;
  const m = d.countMultiple ?? 1;
  if (!d.sizes.includes(c.size)) return `n = ${c.size} is outside it: ${d.why} (n = ${d.sizes.join(", ")})`;
  if (c.count % m !== 0) return `count ${c.count} is outside it: ${d.why} (counts are multiples of ${m})`;
  if (d.roots && !d.roots.includes(c.root))
    return `root ${c.root} is outside it: ${d.why} (root ${d.roots.join(", ")})`;
  return undefined;
}

export interface Algorithm {
  /** The collective's spec name: 'allreduce'. */
  readonly collective: string;
  /** Unique within its collective: 'ring', 'double_binary_tree'. */
  readonly name: string;
  /** One line: what it does. */
  readonly summary: string;
  /** Where it applies and where it is weak. */
  readonly limits: string;
  /** Where it comes from: 'MPICH allreduce_intra_ring; NCCL ring'. */
  readonly source: string;
  readonly cost: Cost;
  /**
   * 'in-place': the schedule is written for the in-place call; out of place, the plan first
   * copies the input to where the in-place layout puts it and runs the schedule in place.
   */
  readonly form?: "in-place";
  /** False where the algorithm has no in-place form. Default true. */
  readonly inPlace?: boolean;
  /**
   * Why ranks may end an all-reduce with different floating-point bits, where they may (docs/
   * semantics.md A3: every other algorithm gives every rank the same bytes, and a test holds
   * both: that the others agree, and that one declaring this really differs).
   */
  readonly ranksDiffer?: string;
  /**
   * The pipelining segment, in bytes, for a call that names none (default NCCL's 128 KiB; the one
   * rule is defaultSegment in src/specs/index.ts, applied by makeCall): an algorithm that pipelines best at
   * another size says so, with its source.
   */
  readonly segmentBytes?: number;
  /** Where the schedule is defined, if not for every call (imported MSCCL programs). */
  readonly domain?: Domain;
  /**
   * The machine shapes the schedule reads from `c.shape` (`--topology`): a call with a shape of
   * one of these families hands it over; every other call (and every algorithm without this
   * field) sees the flat rank line. `required`: the schedule refuses a call without one.
   */
  readonly topology?: TopologyUse;
  /** The steps of one rank's part. Must be a pure function of its arguments. */
  schedule(c: RankCall, mem: Memory): Schedule;
  /** Source file, set by the registry for user-loaded algorithms. */
  readonly file?: string;
}

/** What an algorithm reads of the machine's shape (Algorithm.topology). */
export interface TopologyUse {
  readonly families: readonly ShapeFamily[];
  readonly required?: boolean;
  /** The cost on a machine of that shape, where it differs from `cost` (formulas of its rank count). */
  cost?(shape: Shape): Cost;
}

/** An algorithm, as its file declares it. */
export function defineAlgorithm(a: Algorithm): Algorithm {
  return a;
}

/** A formula: `f("2(n-1)", (n) => 2 * (n - 1))`. */
export const f = (text: string, value: (n: number, count: number, segment: number) => number): Formula => ({
  text,
  value,
});

// ---- building steps ----

export const region = (buf: BufferName, offset: number, count: number): Region => ({ buf, offset, count });
export const send = (peer: number, r: Region): Transfer => ({ kind: "send", peer, region: r });
export const recv = (peer: number, r: Region): Transfer => ({ kind: "recv", peer, region: r });
export const copy = (dst: Region, src: Region): LocalOp => ({ kind: "copy", dst, src });
/**
 * dst <- dst (op) src; with a third region, dst <- a (op) src (NCCL's recvReduceCopy without a
 * copy). A third region that is dst itself is the two-region form.
 */
export const reduce = (dst: Region, src: Region, a?: Region): LocalOp =>
  a && !sameRegion(a, dst) ? { kind: "reduce", dst, src, with: a } : { kind: "reduce", dst, src };
export const step = (label: string, transfers: readonly Transfer[], local: readonly LocalOp[] = []): Step => ({
  label,
  transfers,
  local,
});

// ---- NCCL's fused steps ----

/**
 * NCCL's primitives name what one step does with the data passing through a rank
 * (src/device/prims_simple.h): recvReduceSend, recvCopySend, directRecv. These verbs build such a
 * step and its label is the verb and `detail` ('recvReduceSend chunk 2'). Parts a rank has no use
 * for at a step (a leaf has no child to receive from; a short chunk has no segment left to send)
 * are passed as undefined and left out; the verb then names what remains, so the label never
 * claims a transfer the step does not make: without its send a recvReduceSend is a recvReduce,
 * without its receive a send; a recvCopySend that only receives, into the caller's buffer, is a
 * directRecv. The transfers keep the order given. A step of a pipeline receives piece k and sends
 * piece k-1, the one finished at the step before, so `detail` names the piece it is about.
 */
type Part<T> = T | undefined;

function verbStep(
  verb: "recvReduceSend" | "recvCopySend",
  detail: string,
  parts: readonly Part<Transfer>[],
  local: readonly LocalOp[],
): Step {
  const transfers = parts.filter((t): t is Transfer => t !== undefined);
  const recvs = transfers.filter((t) => t.kind === "recv");
  const sends = recvs.length < transfers.length;
  let name: string;
  if (recvs.length === 0) name = "send";
  else if (verb === "recvReduceSend") name = sends ? "recvReduceSend" : "recvReduce";
  else if (sends) name = "recvCopySend";
  else name = recvs.every((t) => t.region.buf !== "scratch") ? "directRecv" : "recv";
  return { label: `${name} ${detail}`, transfers, local };
}

/**
 * Receive pieces (from one peer, or from each child of a tree), reduce each into this rank's
 * partial result, and send on the partial result finished at the step before. Every reduction
 * reduces a region this step receives.
 */
export function recvReduceSend(
  detail: string,
  transfers: readonly Part<Transfer>[],
  reductions: readonly Part<LocalOp>[],
): Step {
  const local = reductions.filter((l): l is LocalOp => l !== undefined);
  for (const l of local) {
    invariant(
      l.kind === "reduce" && transfers.some((t) => t?.kind === "recv" && sameRegion(t.region, l.src)),
      () => `recvReduceSend ${detail}: ${l.kind} of ${regionText(l.src)} reduces nothing this step receives`,
    );
  }
  return verbStep("recvReduceSend", detail, transfers, local);
}

/** Receive a piece where it belongs and forward the one received at the step before, with no local work. */
export function recvCopySend(detail: string, transfers: readonly Part<Transfer>[]): Step {
  return verbStep("recvCopySend", detail, transfers, []);
}

/** Receive straight into the caller's input or output, no scratch in between (NCCL's directRecv). */
export function directRecv(detail: string, from: Transfer): Step {
  invariant(
    from.kind === "recv" && from.region.buf !== "scratch",
    () => `directRecv ${detail}: ${from.kind} of ${regionText(from.region)} is not a receive into the caller's buffer`,
  );
  return { label: `directRecv ${detail}`, transfers: [from], local: [] };
}

/** The sub-region [offset, offset+count) of r. */
export const sub = (r: Region, offset: number, count: number): Region => {
  invariant(offset >= 0 && count >= 0 && offset + count <= r.count, () => `sub [${offset}, +${count}) of ${r.count}`);
  return { buf: r.buf, offset: r.offset + offset, count };
};

/** 'out[2:4]', 'in[0]', 'tmp[3]': a region as explain and error messages show it. */
export function regionText(r: Region): string {
  const b = r.buf === "input" ? "in" : r.buf === "output" ? "out" : "tmp";
  return r.count === 1 ? `${b}[${r.offset}]` : `${b}[${r.offset}:${r.offset + r.count}]`;
}

export const sameRegion = (a: Region, b: Region): boolean =>
  a.buf === b.buf && a.offset === b.offset && a.count === b.count;

/** A per-rank partition (chunk) or pipelining unit (segment) of a region, relative to it. */
export interface Chunk {
  readonly offset: number;
  readonly count: number;
}

/** The last splits made (partition), by count and parts. */
const partitions = new Map<string, readonly Chunk[]>();
const PARTITIONS_KEPT = 16;

/**
 * Splits `count` elements into `parts` chunks, the first count % parts one element longer
 * (MPICH's convention), so any count works, 0 and count < parts included. Frozen and shared:
 * every rank's plan asks for the same split, and at 16,384 ranks making it afresh for each
 * (16,384 chunks apiece) was most of compiling a call's plans.
 */
export function partition(count: number, parts: number): readonly Chunk[] {
  const key = `${count}/${parts}`;
  let chunks = partitions.get(key);
  if (!chunks) {
    const base = Math.floor(count / parts);
    const extra = count % parts;
    const made: Chunk[] = [];
    let offset = 0;
    for (let i = 0; i < parts; i++) {
      const c = base + (i < extra ? 1 : 0);
      made.push(Object.freeze({ offset, count: c }));
      offset += c;
    }
    chunks = Object.freeze(made);
    if (partitions.size >= PARTITIONS_KEPT) partitions.delete(partitions.keys().next().value as string);
    partitions.set(key, chunks);
  }
  return chunks;
}

/** Splits `count` elements into segments of at most `segment` elements (at least one segment). */
export function segments(count: number, segment: number): Chunk[] {
  const out: Chunk[] = [];
  const s = Math.max(1, segment);
  for (let offset = 0; offset < count; offset += s) out.push({ offset, count: Math.min(s, count - offset) });
  if (out.length === 0) out.push({ offset: 0, count: 0 });
  return out;
}

/** The region of chunk `c` of r. */
export const chunkOf = (r: Region, c: Chunk): Region => sub(r, c.offset, c.count);

/** The range check every topology builder (ring, trees) makes on the rank it is asked about. */
export function checkRank(what: string, rank: number, size: number): void {
  invariant(
    Number.isInteger(size) && size >= 1 && Number.isInteger(rank) && rank >= 0 && rank < size,
    () => `${what}: rank ${rank} out of range for size ${size}`,
  );
}

/** vrank = (rank - root + size) % size: rotates ranks so the root is 0. */
export const vrankOf = (rank: number, root: number, size: number): number => (rank - root + size) % size;
export const rankOf = (vrank: number, root: number, size: number): number => (vrank + root) % size;

// ---- composing schedules ----

/** A sub-schedule in a subset of ranks: maps its (virtual) peers to real ranks. */
export function* mapPeers(schedule: Schedule, toRank: (vrank: number) => number): Schedule {
  for (const s of schedule) {
    yield { ...s, transfers: s.transfers.map((t) => ({ ...t, peer: toRank(t.peer) })) };
  }
}

/** Prefixes every step's label: 'tree 1: ' + 'directRecv seg 0 down'. */
export function* labelled(prefix: string, schedule: Schedule): Schedule {
  for (const s of schedule) yield { ...s, label: prefix + s.label };
}

/**
 * Runs schedules side by side: schedule i's messages travel on channel i + 1, so neither waits on
 * the other's message order, and dataflow overlaps them wherever their memory is disjoint. In
 * program order (and so for a stream-ordered engine, which runs steps one after another) they
 * come one after the other, which can never deadlock where each alone does not.
 */
export function* parallel(...schedules: Schedule[]): Schedule {
  for (const [i, s] of schedules.entries()) {
    for (const x of s) yield { ...x, transfers: x.transfers.map((t) => ({ ...t, channel: i + 1 })) };
  }
}
