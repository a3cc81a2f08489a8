/**
 * Reading MSCCL XML (fast-xml-parser) into the IR of ir.ts, with the rules the executor's parser
 * applies (msccl-executor-nccl, src/misc/msccl/msccl_parser.cc) and a few it should: every
 * attribute present and an integer where one is meant, GPU ids 0..ngpus-1 once each, threadblock
 * ids 0.. without gaps, peers that are other GPUs, channels below nchannels, step types it knows,
 * counts below MSCCL_MAX_COUNT, buffers i/o/s, steps numbered in document order (dependencies
 * name steps by that number). Every error is an AlgorithmFileError naming the gpu, tb and step.
 * Sizes are bounded before anything is allocated for them (MSCCL_LIMITS: the file's bytes, and
 * chunks per loop and per buffer), and what the XML library throws is named as the file's error.
 * What the executor would accept but cclab reads by a convention (msccl-tools' older format
 * without outofplace/minBytes/maxBytes) is said in `notes`.
 */
import { readFileSync, statSync } from "node:fs";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { AlgorithmFileError } from "../core/errors.js";
import {
  at,
  type BufName,
  KINDS,
  LIMITS,
  type MscclGpu,
  type MscclProgram,
  type MscclStep,
  type MscclThreadblock,
  PROTOS,
  type Proto,
  STEP_TYPES,
  type StepType,
} from "./ir.js";

type Attrs = Record<string, unknown>;

export interface Parsed {
  readonly program: MscclProgram;
  /** What the file leaves to a convention, or does that one executor and not another accepts. */
  readonly notes: string[];
}

/**
 * How big an MSCCL program may be, stated plainly: real ones are kilobytes, with chunks per loop
 * in the tens or hundreds. Past a limit the file is refused before anything is allocated for it;
 * CCLAB_MSCCL_MAX_BYTES and CCLAB_MSCCL_MAX_CHUNKS raise them (cclab import: --max-bytes,
 * --max-chunks).
 */
export const MSCCL_LIMITS = {
  /** The file's size. */
  bytes: 16 << 20,
  /** nchunksperloop, and each GPU's i_chunks, o_chunks and s_chunks. */
  chunks: 1 << 16,
} as const;

export interface MscclLimits {
  readonly bytes: number;
  readonly chunks: number;
}

/** The limits, raised (or lowered) by CCLAB_MSCCL_MAX_BYTES / CCLAB_MSCCL_MAX_CHUNKS and then by `given`. */
export function mscclLimits(given: Partial<MscclLimits> = {}, env: NodeJS.ProcessEnv = process.env): MscclLimits {
  const fromEnv = (name: string, fallback: number): number => {
    const v = env[name];
    if (v === undefined || v === "") return fallback;
    if (!/^[1-9]\d{0,14}$/.test(v)) {
      throw new AlgorithmFileError(`${name}="${v.slice(0, 40)}" is not a positive integer`);
    }
    return Number(v);
  };
  return {
    bytes: given.bytes ?? fromEnv("CCLAB_MSCCL_MAX_BYTES", MSCCL_LIMITS.bytes),
    chunks: given.chunks ?? fromEnv("CCLAB_MSCCL_MAX_CHUNKS", MSCCL_LIMITS.chunks),
  };
}

/** Reads an MSCCL XML file, refusing one over the size limit before reading a byte of it. */
export function readMscclFile(file: string, limits: MscclLimits = mscclLimits()): string {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new AlgorithmFileError(`${file}: not a regular file`);
    size = st.size;
  } catch (e) {
    if (e instanceof AlgorithmFileError) throw e;
    throw new AlgorithmFileError(`${file}: cannot read it: ${(e as Error).message}`);
  }
  if (size > limits.bytes) {
    throw new AlgorithmFileError(
      `${file}: ${size} bytes, over the limit of ${limits.bytes} for an MSCCL program (CCLAB_MSCCL_MAX_BYTES, or cclab import's --max-bytes, raises it)`,
    );
  }
  return readFileSync(file, "utf8");
}

/** An attribute's value as a message shows it: at most 40 characters. */
const shown = (v: string) => (v.length > 40 ? `${v.slice(0, 40)}... (${v.length} characters)` : v);

const asArray = (x: unknown): Attrs[] => (Array.isArray(x) ? (x as Attrs[]) : x === undefined ? [] : [x as Attrs]);

export function parseMscclXml(text: string, file = "<xml>", limits: MscclLimits = mscclLimits()): Parsed {
  const fail = (where: string, what: string): never => {
    throw new AlgorithmFileError(`${file}: ${where}: ${what}`);
  };
  if (text.length > limits.bytes) {
    fail(
      "the file",
      `${text.length} characters, over the limit of ${limits.bytes} for an MSCCL program (CCLAB_MSCCL_MAX_BYTES, or cclab import's --max-bytes, raises it)`,
    );
  }
  if (text.trim() === "") fail("the file", "is empty: an MSCCL program is one <algo> element");
  // Entity definitions have no place in an MSCCL program, and expanding them is how a small file grows huge.
  if (/<!DOCTYPE/i.test(text)) fail("<!DOCTYPE>", "is not allowed in an MSCCL program (it can define entities)");
  let doc: Attrs;
  try {
    const valid = XMLValidator.validate(text);
    if (valid !== true) {
      const where = [valid.err.line && `line ${valid.err.line}`, valid.err.col && `column ${valid.err.col}`];
      fail(where.filter(Boolean).join(", ") || "the file", `malformed XML: ${valid.err.msg}`);
    }
    doc = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: "",
      parseAttributeValue: false,
      parseTagValue: false,
      isArray: (name) => name === "algo" || name === "gpu" || name === "tb" || name === "step",
    }).parse(text) as Attrs;
  } catch (e) {
    if (e instanceof AlgorithmFileError) throw e;
    // The XML library's own words ('[EntityReplacer] ...', 'Invalid entity name %'), as this file's error.
    return fail("the file", `malformed XML: ${(e as Error).message.replace(/^Error:\s*/, "")}`);
  }
  const algos = asArray(doc.algo);
  if (algos.length !== 1) fail("top level", `expected one <algo> element, found ${algos.length}`);
  const algo = algos[0] as Attrs;
  const notes: string[] = [];

  const str = (a: Attrs, name: string, where: string): string => {
    const v = a[name];
    if (typeof v !== "string") return fail(where, `missing attribute '${name}'`);
    return v;
  };
  const int = (a: Attrs, name: string, where: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) => {
    const v = str(a, name, where).trim();
    if (!/^-?\d{1,16}$/.test(v)) fail(where, `attribute ${name}="${shown(v)}" is not an integer`);
    const n = Number(v);
    if (n < min || n > max) fail(where, `attribute ${name}="${v}" is outside [${min}, ${max}]`);
    return n;
  };
  /** A count of chunks: at most limits.chunks, checked before anything is sized by it. */
  const chunks = (a: Attrs, name: string, where: string, min: number) => {
    const n = int(a, name, where, min);
    if (n > limits.chunks) {
      fail(
        where,
        `attribute ${name}="${n}" is over the limit of ${limits.chunks} chunks (CCLAB_MSCCL_MAX_CHUNKS, or cclab import's --max-chunks, raises it)`,
      );
    }
    return n;
  };
  const optInt = (a: Attrs, name: string, where: string, fallback: number, min = 0) =>
    a[name] === undefined ? fallback : int(a, name, where, min);

  const top = "<algo>";
  const ngpus = int(algo, "ngpus", top, 1, 4096);
  const nchunksperloop = chunks(algo, "nchunksperloop", top, 1);
  const nchannels = int(algo, "nchannels", top, 1, LIMITS.channels);
  const proto = str(algo, "proto", top);
  if (!PROTOS.includes(proto as Proto)) fail(top, `proto="${shown(proto)}": expected ${PROTOS.join(", ")}`);
  const coll = str(algo, "coll", top);
  if (coll.length > 64) fail(top, `coll="${shown(coll)}": no collective has a name that long`);
  if (typeof algo.name === "string" && algo.name.length > 256) {
    fail(top, `name="${shown(algo.name)}": over 256 characters`);
  }
  const inplace = int(algo, "inplace", top, 0, 1) === 1;
  const hasNewFormat = algo.outofplace !== undefined;
  const outofplace = hasNewFormat ? int(algo, "outofplace", top, 0, 1) === 1 : !inplace;
  if (!hasNewFormat) {
    notes.push(
      `no outofplace attribute (msccl-tools' format): read as outofplace="${outofplace ? 1 : 0}", the program being ${inplace ? "in place" : "out of place"} only; msccl-executor-nccl needs outofplace, minBytes and maxBytes written out`,
    );
  }
  if (!inplace && !outofplace) fail(top, `inplace="0" and outofplace="0": the program runs neither way`);
  const minBytes = optInt(algo, "minBytes", top, 0);
  const maxBytes = optInt(algo, "maxBytes", top, 0);
  if (maxBytes !== 0 && maxBytes < minBytes) fail(top, `maxBytes=${maxBytes} is below minBytes=${minBytes}`);
  const root = algo.root === undefined ? undefined : int(algo, "root", top, 0, ngpus - 1);

  const gpuElems = asArray(algo.gpu);
  const gpus: (MscclGpu | undefined)[] = new Array(ngpus).fill(undefined);
  for (const g of gpuElems) {
    const id = int(g, "id", "<gpu>", 0);
    if (id >= ngpus) fail(at(id), `id ${id} is not below ngpus=${ngpus}`);
    if (gpus[id]) fail(at(id), "appears twice");
    const here = at(id);
    const iChunks = chunks(g, "i_chunks", here, 0);
    const oChunks = chunks(g, "o_chunks", here, 0);
    const sChunks = chunks(g, "s_chunks", here, 0);
    const sizes: Record<BufName, number> = { i: iChunks, o: oChunks, s: sChunks };
    const tbs: (MscclThreadblock | undefined)[] = [];
    for (const t of asArray(g.tb)) {
      const tid = int(t, "id", here, 0, LIMITS.tbsPerChannel * LIMITS.channels - 1);
      const tw = at(id, tid);
      if (tbs[tid]) fail(tw, "threadblock id appears twice");
      const send = int(t, "send", tw, -1, ngpus - 1);
      const recv = int(t, "recv", tw, -1, ngpus - 1);
      if (send === id || recv === id)
        fail(tw, `send="${send}" recv="${recv}": a threadblock's peers must be other GPUs`);
      const chan = int(t, "chan", tw, 0);
      if (chan >= nchannels) fail(tw, `chan="${chan}" but the algorithm has nchannels="${nchannels}"`);
      const steps: MscclStep[] = [];
      for (const [pos, s] of asArray(t.step).entries()) {
        const num = int(s, "s", `${tw} step #${pos}`, 0);
        const sw = at(id, tid, num);
        if (num !== pos) {
          fail(
            sw,
            `is the threadblock's step #${pos}: the executor numbers steps by position, so dependencies on s="${num}" would not mean it`,
          );
        }
        const type = str(s, "type", sw) as StepType;
        if (!STEP_TYPES.includes(type)) fail(sw, `type="${shown(type)}": expected one of ${STEP_TYPES.join(", ")}`);
        const swt = at(id, tid, num, type);
        const buf = (name: string): BufName => {
          const b = str(s, name, swt);
          if (b !== "i" && b !== "o" && b !== "s") fail(swt, `${name}="${shown(b)}": expected i, o or s`);
          return b as BufName;
        };
        const step: MscclStep = {
          s: num,
          type,
          srcbuf: buf("srcbuf"),
          srcoff: int(s, "srcoff", swt, -1),
          dstbuf: buf("dstbuf"),
          dstoff: int(s, "dstoff", swt, -1),
          cnt: int(s, "cnt", swt, 0, LIMITS.count - 1),
          depid: int(s, "depid", swt, -1),
          deps: int(s, "deps", swt, -1),
          hasdep: int(s, "hasdep", swt, 0, 1) === 1,
        };
        if (step.depid < 0 !== step.deps < 0) fail(swt, `depid="${step.depid}" deps="${step.deps}": both or neither`);
        // Every operand the step uses lies inside its buffer (the executor checks only the start of most).
        const kind = KINDS[type];
        for (const side of ["src", "dst"] as const) {
          if (!kind[side]) continue;
          const b = side === "src" ? step.srcbuf : step.dstbuf;
          const off = side === "src" ? step.srcoff : step.dstoff;
          const name = b === "i" ? "input" : b === "o" ? "output" : "scratch";
          const have = sizes[b];
          if (off < 0 || off + step.cnt > have) {
            fail(
              swt,
              `${side}off="${off}" cnt="${step.cnt}" reaches past ${side}buf="${b}" (${name}: ${b}_chunks="${have}" on this GPU)`,
            );
          }
        }
        if (kind.send && send < 0) fail(swt, 'sends, but the threadblock has send="-1"');
        if (kind.recv && recv < 0) fail(swt, 'receives, but the threadblock has recv="-1"');
        steps.push(step);
      }
      if (steps.length > LIMITS.steps) {
        notes.push(
          `${tw} has ${steps.length} steps: more than msccl-executor-nccl's ${LIMITS.steps} (MSCCL_MAX_NUM_STEPS; older executors and RCCL allow ${LIMITS.stepsElsewhere})`,
        );
      }
      tbs[tid] = { id: tid, send, recv, chan, steps };
    }
    const missing = Array.from(tbs).indexOf(undefined);
    if (missing >= 0)
      fail(at(id, missing), "is missing: threadblock ids must run 0, 1, 2, ... without gaps (the executor's rule)");
    gpus[id] = { id, iChunks, oChunks, sChunks, tbs: tbs as MscclThreadblock[] };
  }
  const absent = Array.from(gpus).indexOf(undefined);
  if (absent >= 0) fail(at(absent), `has no <gpu> element (ngpus="${ngpus}")`);
  const program: MscclProgram = {
    name: typeof algo.name === "string" ? algo.name : "",
    coll,
    ngpus,
    nchunksperloop,
    nchannels,
    proto: proto as Proto,
    inplace,
    outofplace,
    minBytes,
    maxBytes,
    ...(root !== undefined ? { root } : {}),
    gpus: gpus as MscclGpu[],
  };
  return { program, notes };
}
