/**
 * MSCCL's IR (the XML that msccl-tools emits and msccl-executor-nccl / RCCL run), as data, with
 * what each step type does *as the executor runs it* (msccl-executor-nccl, src/device/
 * msccl_kernel.cu: the primitives get the step's srcbuf as their input pointer and dstbuf as
 * their output pointer, then srcoff/dstoff as offsets):
 *
 *   s     send src                         rrs   send (recv ⊕ src)       (nothing stored)
 *   r     recv into dst                    rrc   dst <- recv ⊕ src
 *   rcs   recv into dst, send it on        rrcs  dst <- recv ⊕ src, send it on
 *   cpy   dst <- src                       re    dst <- dst ⊕ src
 *   nop   nothing: carries a dependency for the next step
 *
 * The producer reads the operand fields of the receive-reduce steps differently: msccl-tools
 * (msccl/language/rank_dag.py) writes the *sender's* chunk as srcbuf/srcoff of rrc/rrs/rrcs and
 * means the local operand to be the destination, while the executor reduces with the local chunk
 * at srcbuf/srcoff. The two agree where the chunk sits at the same index on both GPUs (rings, all
 * pairs); cclab follows the executor. Likewise the dstbuf/dstoff of a send and the srcbuf/srcoff
 * of a receive name the remote chunk and the executor ignores them, so cclab does too.
 */

export type BufName = "i" | "o" | "s";

export const STEP_TYPES = ["s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"] as const;
export type StepType = (typeof STEP_TYPES)[number];

/** What a step type does on its GPU, as the executor runs it. */
export interface StepKind {
  readonly recv: boolean;
  readonly send: boolean;
  /** Reads srcbuf/srcoff (a send's data, a reduction's local operand, a copy's source). */
  readonly src: boolean;
  /** Writes dstbuf/dstoff. */
  readonly dst: boolean;
  readonly reduce: boolean;
  /** Where the executor's parser bounds-checks the offsets (msccl_parser.cc: checkSrc, checkDst). */
  readonly checked: { readonly src: boolean; readonly dst: boolean };
  /** NCCL's primitive, for explain's labels. */
  readonly verb: string;
}

const k = (
  recv: boolean,
  send: boolean,
  src: boolean,
  dst: boolean,
  reduce: boolean,
  checked: [boolean, boolean],
  verb: string,
): StepKind => ({ recv, send, src, dst, reduce, checked: { src: checked[0], dst: checked[1] }, verb });

export const KINDS: Record<StepType, StepKind> = {
  s: k(false, true, true, false, false, [true, false], "send"),
  r: k(true, false, false, true, false, [false, true], "recv"),
  rcs: k(true, true, false, true, false, [false, true], "recvCopySend"),
  rrs: k(true, true, true, false, true, [true, false], "recvReduceSend"),
  // The executor checks no offset of rrc; cclab checks both.
  rrc: k(true, false, true, true, true, [false, false], "recvReduceCopy"),
  rrcs: k(true, true, true, true, true, [true, true], "recvReduceCopySend"),
  cpy: k(false, false, true, true, false, [true, true], "copy"),
  re: k(false, false, true, true, true, [true, true], "reduce"),
  nop: k(false, false, false, false, false, [false, false], "nop"),
};

export interface MscclStep {
  /** The step's number in its threadblock (the executor counts them in document order). */
  readonly s: number;
  readonly type: StepType;
  readonly srcbuf: BufName;
  readonly srcoff: number;
  readonly dstbuf: BufName;
  readonly dstoff: number;
  /** Chunks. */
  readonly cnt: number;
  /** The threadblock and step this one waits for, or -1. */
  readonly depid: number;
  readonly deps: number;
  /** Whether another threadblock waits for this step (the executor then sets a flag after it). */
  readonly hasdep: boolean;
}

export interface MscclThreadblock {
  readonly id: number;
  /** Peers, or -1. */
  readonly send: number;
  readonly recv: number;
  readonly chan: number;
  readonly steps: readonly MscclStep[];
}

export interface MscclGpu {
  readonly id: number;
  readonly iChunks: number;
  readonly oChunks: number;
  readonly sChunks: number;
  /** By id (0, 1, ... as the executor requires). */
  readonly tbs: readonly MscclThreadblock[];
}

export type Proto = "Simple" | "LL" | "LL128";
export const PROTOS: readonly Proto[] = ["Simple", "LL", "LL128"];

export interface MscclProgram {
  readonly name: string;
  /** As written (msccl-tools writes reduce_scatter, the executor reads reducescatter). */
  readonly coll: string;
  readonly ngpus: number;
  readonly nchunksperloop: number;
  readonly nchannels: number;
  readonly proto: Proto;
  /** Runs in place (the executor's inplace) and out of place (outofplace; msccl-tools writes only inplace). */
  readonly inplace: boolean;
  readonly outofplace: boolean;
  /** The message sizes the executor selects it for, in bytes (maxBytes 0: no limit). */
  readonly minBytes: number;
  readonly maxBytes: number;
  /** Rooted collectives: the root it is written for (cclab's own attribute; the executor ignores it). */
  readonly root?: number;
  /** By id. */
  readonly gpus: readonly MscclGpu[];
}

/**
 * msccl-executor-nccl's limits (src/include/msccl/msccl_struct.h). MSCCL_MAX_NUM_STEPS is 64 in
 * msccl-executor-nccl and 256 in older executors and RCCL: export keeps to 64, import notes more.
 */
export const LIMITS = {
  steps: 64,
  stepsElsewhere: 256,
  tbsPerChannel: 32,
  channels: 32,
  /** cnt must be below this (MSCCL_MAX_COUNT). */
  count: 72,
} as const;

/** 'gpu 1 tb 2 step 3 (rrc)': where a finding is, as every message names it. */
export const at = (gpu: number, tb?: number, step?: number, type?: StepType): string =>
  `gpu ${gpu}${tb !== undefined ? ` tb ${tb}` : ""}${step !== undefined ? ` step ${step}` : ""}${type ? ` (${type})` : ""}`;

/** Elements per rank's count the executor multiplies by n (its sizeMultiplier). */
export const SIZE_MULTIPLIED = new Set(["allgather", "reducescatter", "alltoall"]);
